-- 0007_run_verdicts: every run judged when it ends, and the alerts that a
-- confirmed change raises (issue 14, part B).
--
-- verdict_key is the part of the comparability key that decides a verdict
-- (server/compare.c: benchmark, card model, params), as one text made by
-- the store (STORE_VERDICT_KEY in server/store_internal.h: the same
-- expression as below), so that a card's history and the fleet are found
-- by an index rather than by parsing params.  Set on done runs only.
ALTER TABLE runs ADD COLUMN verdict_key TEXT;
UPDATE runs SET verdict_key = benchmark || char(31) || coalesce(device_name, '') || char(31)
    || json(params) WHERE status = 'done';

-- A confirming run names the run whose verdict it was queued to repeat.
ALTER TABLE runs ADD COLUMN confirms TEXT;

-- A card's history: its last valid done runs of one key, newest first.
CREATE INDEX runs_by_card_key ON runs (device_uuid, host, verdict_key, id)
    WHERE verdict_key IS NOT NULL AND valid IS NOT 0;

-- The verdicts a run got at its end, as JSON (shown as its "verdicts").
CREATE TABLE run_verdicts (
    run_id   TEXT PRIMARY KEY NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    verdicts TEXT NOT NULL
);

-- The fleet: each card's newest valid done run of each key, kept as runs
-- finish or are imported.
CREATE TABLE fleet_latest (
    verdict_key TEXT NOT NULL,
    benchmark   TEXT NOT NULL,
    host        TEXT NOT NULL,
    device_uuid TEXT NOT NULL,
    run_id      TEXT NOT NULL,
    PRIMARY KEY (verdict_key, host, device_uuid)
) WITHOUT ROWID;
CREATE INDEX fleet_latest_by_benchmark ON fleet_latest (benchmark);
INSERT INTO fleet_latest (verdict_key, benchmark, host, device_uuid, run_id)
    SELECT verdict_key, benchmark, host, device_uuid, max(id) FROM runs
    WHERE verdict_key IS NOT NULL AND valid IS NOT 0 AND device_uuid IS NOT NULL
    GROUP BY verdict_key, host, device_uuid;

-- A change on one card, one row: found by a run (detected), repeated by
-- its confirming run (confirmed), then acknowledged by a person (with a
-- reason) or cleared when later runs are the same again (or the
-- confirmation did not repeat it).  kind: 'history' (slower than its own
-- recent runs; shift) or 'fleet' (an outlier among its model; z).
CREATE TABLE alerts (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    kind           TEXT NOT NULL CHECK (kind IN ('history', 'fleet')),
    state          TEXT NOT NULL CHECK (state IN
                       ('detected', 'confirmed', 'acknowledged', 'cleared')),
    host           TEXT NOT NULL,
    device_uuid    TEXT NOT NULL,
    device_name    TEXT,
    benchmark      TEXT NOT NULL,
    verdict_key    TEXT NOT NULL,
    row_key        TEXT NOT NULL,       -- JSON: the row's key value
    verdict        TEXT NOT NULL,       -- 'slower' or 'outlier'
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
    cleared_at     TEXT
);
CREATE INDEX alerts_open ON alerts (host, device_uuid, verdict_key, kind)
    WHERE state <> 'cleared';
CREATE INDEX alerts_by_run ON alerts (run_id);
