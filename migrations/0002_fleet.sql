-- 0002_fleet: what a fleet of daemons needs to copy runs between them.
--
-- final_seq numbers the runs in the order they became final ON THIS NODE
-- (finished here, cancelled, or stored from an import or a peer), so a
-- peer can pull "everything final after N" and never miss a run that was
-- created early but finished late, or that reached this node second-hand.

ALTER TABLE runs ADD COLUMN final_seq INTEGER;
UPDATE runs SET final_seq = rowid WHERE status IN ('done', 'failed', 'cancelled');
CREATE UNIQUE INDEX runs_by_final_seq ON runs (final_seq) WHERE final_seq IS NOT NULL;

-- One row a peer (--peer URL): where its pull stands, and how it went.
CREATE TABLE peers (
    url             TEXT PRIMARY KEY NOT NULL,
    cursor          INTEGER NOT NULL DEFAULT 0,   -- the peer's final_seq pulled up to
    runs_pulled     INTEGER NOT NULL DEFAULT 0,
    last_success_at TEXT,
    last_error      TEXT,
    last_error_at   TEXT
);
