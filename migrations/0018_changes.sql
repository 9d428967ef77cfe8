-- 0018_changes: change points and drift per card x comparability key x
-- result row (issue 34; server/judge/changepoint.h says the method).
--
-- change_series keeps each series' bounded state (the runs since its last
-- change, at most 50, and daily sums for the drift: judge/change_series.h),
-- stepped by gb_change_step in the statement that writes it, as each
-- valid run is stored (measured, imported or pulled alike), so that no
-- run reads a card's history.  Series start with the runs stored from this
-- migration on: runs stored before it are not replayed.
CREATE TABLE change_series (
    host        TEXT NOT NULL,
    device_uuid TEXT NOT NULL,
    verdict_key TEXT NOT NULL,      -- the comparability key: a method change is another series
    row_key     TEXT NOT NULL,      -- JSON: the row's key value
    state       BLOB NOT NULL,      -- gb_change_step's
    PRIMARY KEY (host, device_uuid, verdict_key, row_key)
);  -- not WITHOUT ROWID: a state is ~5 kB, more than such a table's rows should be

-- What the series found: a step (its first run after, the levels before
-- and after, the shift with its interval and p-value) or the start of a
-- drift.  detail is gb_change_found's object for its kind, as JSON.
CREATE TABLE changes (
    id           INTEGER PRIMARY KEY AUTOINCREMENT,
    kind         TEXT NOT NULL CHECK (kind IN ('step', 'drift')),
    host         TEXT NOT NULL,
    device_uuid  TEXT NOT NULL,
    device_name  TEXT,
    benchmark    TEXT NOT NULL,
    verdict_key  TEXT NOT NULL,
    row_key      TEXT NOT NULL,
    run_id       TEXT NOT NULL,     -- a step's first run after it; a drift's finding run
    found_run_id TEXT NOT NULL,     -- the run whose arrival found it
    at           TEXT NOT NULL,     -- run_id's created_at
    found_at     TEXT NOT NULL,     -- when this daemon found it
    detail       TEXT NOT NULL
);
CREATE INDEX changes_by_card ON changes (device_uuid, at);
CREATE INDEX changes_by_at ON changes (at);
CREATE INDEX changes_by_found_run ON changes (found_run_id);

-- A step opens an alert of kind 'change', a drift one of kind 'drift';
-- SQLite cannot change a CHECK, so the table is copied (as 0013 did).
CREATE TABLE alerts_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    kind           TEXT NOT NULL CHECK (kind IN
                       ('history', 'fleet', 'floor', 'card_event', 'change', 'drift')),
    state          TEXT NOT NULL CHECK (state IN
                       ('detected', 'confirmed', 'acknowledged', 'cleared')),
    host           TEXT NOT NULL,
    device_uuid    TEXT NOT NULL,
    device_name    TEXT,
    benchmark      TEXT,                -- NULL for a card event
    verdict_key    TEXT,                -- NULL for a card event
    row_key        TEXT NOT NULL,       -- JSON: the row's key value
    verdict        TEXT NOT NULL,       -- 'slower', 'faster', 'outlier', 'below_floor', 'critical'
    shift          REAL,
    z              REAL,
    run_id         TEXT,                -- the run that found it (a change: its first run after)
    confirm_run_id TEXT,                -- the run that repeated it
    clear_run_id   TEXT,                -- the run that found it gone
    confirms_left  INTEGER NOT NULL,    -- confirming runs still to judge it
    reason         TEXT,
    detected_at    TEXT NOT NULL,
    confirmed_at   TEXT,
    acknowledged_at TEXT,
    cleared_at     TEXT,
    webhook        TEXT
        CHECK (webhook IS NULL OR webhook IN ('delivered', 'failed', 'none')),
    change_id      INTEGER              -- kinds change and drift: the changes row
);
INSERT INTO alerts_new SELECT id, kind, state, host, device_uuid, device_name, benchmark,
    verdict_key, row_key, verdict, shift, z, run_id, confirm_run_id, clear_run_id,
    confirms_left, reason, detected_at, confirmed_at, acknowledged_at, cleared_at, webhook, NULL
    FROM alerts;
DROP TABLE alerts;
ALTER TABLE alerts_new RENAME TO alerts;
CREATE INDEX alerts_open ON alerts (host, device_uuid, verdict_key, kind)
    WHERE state <> 'cleared';
CREATE INDEX alerts_by_run ON alerts (run_id);
CREATE INDEX alerts_by_card ON alerts (device_uuid, kind) WHERE state <> 'cleared';
-- The acknowledged steps, for a card's history verdicts: its baseline
-- starts at the newest one's first run.
CREATE INDEX alerts_acked_change ON alerts (host, device_uuid, verdict_key, run_id)
    WHERE kind = 'change' AND state = 'acknowledged';

-- --keep-samples (store_retention.c): a run older than it loses its rows'
-- per-sample arrays (its medians, intervals, digest and everything a
-- verdict or a series reads stay); samples_dropped marks it, and the
-- partial index finds those still whole without reading the others.
ALTER TABLE run_results ADD COLUMN samples_dropped INTEGER;
CREATE INDEX run_results_with_samples ON run_results (run_id) WHERE samples_dropped IS NULL;
