-- 0001_runs: runs and their results.
--
-- A run is stored the moment it is accepted (status 'queued') and then only
-- moves forward: queued -> running -> done | failed, or queued -> cancelled.
-- Times are RFC 3339 UTC text with milliseconds, so they sort as text.
-- The queue order of a device is the rowid order of its queued runs;
-- run ids (UUIDv7) order the listing and stay unique across a fleet.

CREATE TABLE runs (
    id              TEXT PRIMARY KEY NOT NULL,
    benchmark       TEXT NOT NULL,
    params          TEXT NOT NULL,          -- JSON, every default filled in
    label           TEXT,
    batch_id        TEXT,                   -- runs posted together ("device": "all")
    host            TEXT NOT NULL,
    device_index    INTEGER,
    device_uuid     TEXT,
    device_name     TEXT,
    status          TEXT NOT NULL CHECK (status IN
                        ('queued', 'running', 'done', 'failed', 'cancelled')),
    timeout_s       INTEGER NOT NULL,
    created_at      TEXT NOT NULL,
    started_at      TEXT,
    finished_at     TEXT,
    progress_done   INTEGER,
    progress_total  INTEGER,
    error_code      TEXT,
    error_message   TEXT,
    origin          TEXT                    -- NULL: made here; else the peer it came from
);

CREATE INDEX runs_by_status_device ON runs (status, device_index);
CREATE INDEX runs_by_benchmark ON runs (benchmark, id);
CREATE INDEX runs_by_batch ON runs (batch_id) WHERE batch_id IS NOT NULL;

-- What the worker reported for a finished run: the rows and summary, and
-- the card, driver and software metadata it measured them with.
CREATE TABLE run_results (
    run_id  TEXT PRIMARY KEY NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    results TEXT NOT NULL,                  -- JSON {"rows": [...], "summary": {...}}
    meta    TEXT NOT NULL                   -- JSON
);
