-- 0012_checks: each health run's checks against the floors of its card
-- model (issue 24, common/expect.c), and alerts of the kind floor.
--
-- checks: the JSON array gb_checks_judge made when the run was stored (as
-- validity is), NULL where its benchmark has no floors or it did not end
-- done.  checks_failed: how many did not pass, NULL when not judged.
--
-- The runs stored before are judged here, by gb_checks, the daemon's own C
-- registered on the connection that migrates (server/store/store_key.c),
-- as 0009 re-keyed them: one pass over the done runs' results, and only
-- those of a benchmark with floors are parsed.  Judging at read time
-- instead would put a parse of the results on every list.
ALTER TABLE runs ADD COLUMN checks TEXT;
ALTER TABLE runs ADD COLUMN checks_failed INTEGER;
UPDATE runs SET checks = (SELECT gb_checks(runs.benchmark, results, meta) FROM run_results
                          WHERE run_id = runs.id)
    WHERE status = 'done';
UPDATE runs SET checks_failed = (SELECT count(*) FROM json_each(runs.checks)
                                 WHERE json_extract(value, '$.pass') = 0)
    WHERE checks IS NOT NULL;

-- A missed floor opens an alert as a slower row does (kind 'floor',
-- verdict 'below_floor'; shift: value / floor - 1).  SQLite cannot change
-- a CHECK, so the table is copied into one that allows it.
CREATE TABLE alerts_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    kind           TEXT NOT NULL CHECK (kind IN ('history', 'fleet', 'floor')),
    state          TEXT NOT NULL CHECK (state IN
                       ('detected', 'confirmed', 'acknowledged', 'cleared')),
    host           TEXT NOT NULL,
    device_uuid    TEXT NOT NULL,
    device_name    TEXT,
    benchmark      TEXT NOT NULL,
    verdict_key    TEXT NOT NULL,
    row_key        TEXT NOT NULL,       -- JSON: the row's key value
    verdict        TEXT NOT NULL,       -- 'slower', 'outlier' or 'below_floor'
    shift          REAL,
    z              REAL,
    run_id         TEXT NOT NULL,       -- the run that found it
    confirm_run_id TEXT,                -- the run that repeated it
    clear_run_id   TEXT,                -- the run that found it gone
    confirms_left  INTEGER NOT NULL,    -- confirming runs still to judge it
    reason         TEXT,
    detected_at    TEXT NOT NULL,
    confirmed_at   TEXT,
    acknowledged_at TEXT,
    cleared_at     TEXT,
    webhook        TEXT
        CHECK (webhook IS NULL OR webhook IN ('delivered', 'failed', 'none'))
);
INSERT INTO alerts_new SELECT id, kind, state, host, device_uuid, device_name, benchmark,
    verdict_key, row_key, verdict, shift, z, run_id, confirm_run_id, clear_run_id,
    confirms_left, reason, detected_at, confirmed_at, acknowledged_at, cleared_at, webhook
    FROM alerts;
DROP TABLE alerts;
ALTER TABLE alerts_new RENAME TO alerts;
CREATE INDEX alerts_open ON alerts (host, device_uuid, verdict_key, kind)
    WHERE state <> 'cleared';
CREATE INDEX alerts_by_run ON alerts (run_id);
-- A card's open floor alerts, for its state (GET /cards).
CREATE INDEX alerts_by_card ON alerts (device_uuid, kind) WHERE state <> 'cleared';
