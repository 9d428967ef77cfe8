-- 0003_read_paths: what keeps the common reads cheap at a million runs.
--
-- GET /runs lists a result's summary without parsing its rows, so the
-- summary gets a column of its own; /compare groups runs by driver and CUDA
-- version before it reads any result, so those get columns too; and each
-- filter of GET /runs has an index that also gives the newest-first order.

ALTER TABLE run_results ADD COLUMN summary TEXT;
UPDATE run_results SET summary = json_extract(results, '$.summary');

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
