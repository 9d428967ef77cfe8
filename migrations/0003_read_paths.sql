-- 0003_read_paths: what keeps the common reads cheap at a million runs.
--
-- A run's results run to several kB (every sample is kept), and SQLite
-- reads a record's columns in order: whatever sits after the results in
-- their row costs a walk through the results' overflow pages.  So what the
-- lists and comparisons read goes in a table of its own, run_digests:
--   summary  the results' summary without sample lists (GET /runs);
--   rows     each row's key and measured fields only (GET /compare,
--            /metrics; compare_row_digest in server/compare.c).
-- Runs stored before this migration get their summary here; their rows
-- stay NULL and are read from the whole results instead.
--
-- latest_by_card names the newest done run of each benchmark on each card
-- (host, device UUID), kept as runs finish, for /metrics.
--
-- /compare groups runs by driver and CUDA version before it reads any
-- result, so those get columns of runs; and each filter of GET /runs has an
-- index that also gives the newest-first order.

CREATE TABLE run_digests (
    run_id  TEXT PRIMARY KEY NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    summary TEXT,
    rows    TEXT
);
INSERT INTO run_digests (run_id, summary)
    SELECT run_id, json_extract(results, '$.summary') FROM run_results;

CREATE TABLE latest_by_card (
    benchmark   TEXT NOT NULL,
    host        TEXT NOT NULL,
    device_uuid TEXT NOT NULL,        -- '' for a run without one
    run_id      TEXT NOT NULL,
    PRIMARY KEY (benchmark, host, device_uuid)
) WITHOUT ROWID;
INSERT INTO latest_by_card (benchmark, host, device_uuid, run_id)
    SELECT r.benchmark, r.host, coalesce(r.device_uuid, ''), max(r.id)
    FROM runs r JOIN run_results res ON res.run_id = r.id
    WHERE r.status = 'done' GROUP BY 1, 2, 3;

ALTER TABLE runs ADD COLUMN driver_version TEXT;
ALTER TABLE runs ADD COLUMN cuda_version TEXT;
UPDATE runs SET
    driver_version = (SELECT json_extract(meta, '$.driver.nvidia_version')
                      FROM run_results WHERE run_id = runs.id),
    cuda_version = (SELECT json_extract(meta, '$.cuda.runtime_version')
                    FROM run_results WHERE run_id = runs.id)
WHERE status = 'done';

CREATE INDEX runs_by_device_uuid ON runs (device_uuid, id);
CREATE INDEX runs_by_device_name ON runs (device_name, id);
CREATE INDEX runs_by_host ON runs (host, id);
CREATE INDEX runs_by_label ON runs (label, id) WHERE label IS NOT NULL;
CREATE INDEX runs_by_status ON runs (status, id);
-- /compare: a benchmark's done runs, newest first
CREATE INDEX runs_by_benchmark_status ON runs (benchmark, status, id);
