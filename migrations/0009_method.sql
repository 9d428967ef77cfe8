-- 0009_method: each run's method version, and a comparability key that
-- holds it (issue 21).
--
-- method: the method version of its benchmark the run was measured by
-- (common/bench_spec.c); NULL where it cannot be known, a run of gpubench
-- 0.1.0, during which every benchmark's method changed without a record on
-- the run.  build: its meta.build.git_commit, which stands for the method
-- in the key of such a run, so that it is compared only with runs of its
-- own build.
--
-- gb_method and gb_verdict_key are the daemon's own C (server/store/
-- store_key.c), registered on the connection that migrates: the key is
-- defined once.  They are used here, in statements, and never in the
-- schema (no index, view, trigger or default calls them), so that the
-- plain sqlite3 shell can still read, back up and recover the file.
ALTER TABLE runs ADD COLUMN method INTEGER;
ALTER TABLE runs ADD COLUMN build TEXT;
UPDATE runs SET
    build = (SELECT json_extract(meta, '$.build.git_commit') FROM run_results
             WHERE run_id = runs.id),
    method = gb_method(benchmark, (SELECT json_extract(meta, '$.build.gpubench_version')
                                   FROM run_results WHERE run_id = runs.id));

-- Every stored key again: method joins it, and only the parameters that
-- change what is measured stay in it, defaults filled in.
UPDATE runs SET verdict_key = gb_verdict_key(benchmark, device_name, params, method, build)
    WHERE status = 'done';

-- The fleet's newest valid run of each key on each card, as 0007 made it.
DELETE FROM fleet_latest;
INSERT INTO fleet_latest (verdict_key, benchmark, host, device_uuid, run_id)
    SELECT verdict_key, benchmark, host, device_uuid, max(id) FROM runs
    WHERE verdict_key IS NOT NULL AND valid IS NOT 0 AND device_uuid IS NOT NULL
    GROUP BY verdict_key, host, device_uuid;

-- An alert keeps the key of the run that found it.
UPDATE alerts SET verdict_key = (SELECT verdict_key FROM runs WHERE id = alerts.run_id)
    WHERE EXISTS (SELECT 1 FROM runs WHERE id = alerts.run_id AND verdict_key IS NOT NULL);
