-- 0013_card_events: what the watch found on a card between runs (issue
-- 24; the rules are server/judge/card_events.h's, README "Watching
-- cards").
--
-- card_events: one change between two readings of a card.  subject names
-- what it is about within its kind ("xid 79", "nvlink 3", "pcie"): the row
-- of its alert.  lasting: 1 for a state (a pending remap, a link down or
-- narrow) that holds until a later reading no longer shows it, gone_at
-- then; 0 for a one-off (an XID, a rising count).  A critical event is the
-- card's fault while it is open (store_card_faults says when it closes).
CREATE TABLE card_events (
    id          INTEGER PRIMARY KEY AUTOINCREMENT,
    device_uuid TEXT NOT NULL,
    host        TEXT NOT NULL,
    at          TEXT NOT NULL,      -- the reading's time
    kind        TEXT NOT NULL,
    subject     TEXT NOT NULL,
    critical    INTEGER NOT NULL CHECK (critical IN (0, 1)),
    lasting     INTEGER NOT NULL CHECK (lasting IN (0, 1)),
    detail      TEXT NOT NULL,      -- JSON: the counts or state it saw
    message     TEXT NOT NULL,
    gone_at     TEXT                -- a lasting one: the reading without it
);
CREATE INDEX card_events_by_card ON card_events (device_uuid, id);
CREATE INDEX card_events_open ON card_events (device_uuid)
    WHERE critical = 1 AND gone_at IS NULL;

-- The last reading of each card, so that a restarted daemon compares the
-- next one with it: a state fault found before the restart is not found
-- again, and a count that rose while it was down still counts.
CREATE TABLE card_readings (
    device_uuid TEXT PRIMARY KEY,
    host        TEXT NOT NULL,
    at          TEXT NOT NULL,
    reading     TEXT NOT NULL       -- JSON, as the worker sent it
);

-- A critical card event opens an alert of kind 'card_event' (verdict
-- 'critical', row its subject, reason its message).  It has no run and no
-- benchmark, so run_id, benchmark and verdict_key may be NULL now; SQLite
-- cannot change a CHECK or a NOT NULL, so the table is copied (as 0012
-- did).
CREATE TABLE alerts_new (
    id             INTEGER PRIMARY KEY AUTOINCREMENT,
    kind           TEXT NOT NULL CHECK (kind IN ('history', 'fleet', 'floor', 'card_event')),
    state          TEXT NOT NULL CHECK (state IN
                       ('detected', 'confirmed', 'acknowledged', 'cleared')),
    host           TEXT NOT NULL,
    device_uuid    TEXT NOT NULL,
    device_name    TEXT,
    benchmark      TEXT,                -- NULL for a card event
    verdict_key    TEXT,                -- NULL for a card event
    row_key        TEXT NOT NULL,       -- JSON: the row's key value
    verdict        TEXT NOT NULL,       -- 'slower', 'outlier', 'below_floor', 'critical'
    shift          REAL,
    z              REAL,
    run_id         TEXT,                -- the run that found it; NULL for a card event
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
CREATE INDEX alerts_by_card ON alerts (device_uuid, kind) WHERE state <> 'cleared';
