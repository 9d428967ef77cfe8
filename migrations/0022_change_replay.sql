-- 0022_change_replay: the change-point series (0018) rebuilt from every
-- stored run, so that runs stored before 0018 are in them (issue 34).
--
-- The series are emptied here and replayed at the daemon's start
-- (runs/change_replay.c), in pages of run ids in id order (a run's UUIDv7
-- orders it by its making), before any new run is stored; the cursor is
-- kept here so that a replay cut short goes on where it stopped.  What the
-- replay finds is kept in changes (where the same change is not there
-- already) but opens no alert: it is history.  The row is removed when the
-- replay is done.  bench/store replays a whole store by putting the row
-- back and emptying change_series.
CREATE TABLE change_replay (
    only     INTEGER PRIMARY KEY CHECK (only = 1),
    after_id TEXT NOT NULL           -- the last run id replayed ('' : none yet)
);
-- Only a store that holds runs has any to replay (a new one, or a tool's
-- that stores runs without the daemon's start, must not replay them twice).
INSERT INTO change_replay (only, after_id) SELECT 1, '' WHERE EXISTS (SELECT 1 FROM runs);
DELETE FROM change_series;
