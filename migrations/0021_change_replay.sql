-- 0021_change_replay: the change-point series (0018) rebuilt from every
-- stored run, so that runs stored before 0018 are in them (issue 34).
--
-- The series are emptied here and replayed at the daemon's start
-- (runs/change_replay.c), in pages of run ids in id order (a run's UUIDv7
-- orders it by its making), before any new run is stored; the cursor is
-- kept here so that a replay cut short goes on where it stopped.  What the
-- replay finds is kept in changes (where the same change is not there
-- already) but opens no alert: it is history.  The row is removed when the
-- replay is done.
CREATE TABLE change_replay (
    only     INTEGER PRIMARY KEY CHECK (only = 1),
    after_id TEXT NOT NULL           -- the last run id replayed ('' : none yet)
);
INSERT INTO change_replay (only, after_id) VALUES (1, '');
DELETE FROM change_series;
