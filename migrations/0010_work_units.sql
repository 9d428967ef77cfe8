-- 0010_work_units: each digest row of a shared-memory run says how many
-- units of work (loop iterations) one of its samples held, so that every
-- comparison across runs (GET /compare, the fleet, /metrics) reads its
-- times per iteration from the digest alone (common/work_units.c, whose
-- table this repeats as it stood when written: smem_stride and smem_pattern
-- state the count in the summary's launch.iterations_per_sample; every
-- other benchmark's samples are already per unit).  From here on
-- store_put_results writes the count into each digest row itself.
--
-- Digests that have rows take the count from their own summary (no sample
-- list in it: cheap to read); runs stored before 0003, whose digest has no
-- rows, get rows here, from their results, without the sample lists.
UPDATE run_digests
SET rows = (SELECT json_group_array(json_set(e.value, '$.iterations_per_sample',
                                             json_extract(run_digests.summary,
                                                          '$.launch.iterations_per_sample')))
            FROM json_each(run_digests.rows) e)
WHERE rows IS NOT NULL
  AND json_extract(summary, '$.launch.iterations_per_sample') IS NOT NULL
  AND run_id IN (SELECT id FROM runs WHERE benchmark IN ('smem_stride', 'smem_pattern'));

UPDATE run_digests
SET rows = (SELECT json_group_array(json_set(json_remove(e.value, '$.samples'),
                                             '$.iterations_per_sample',
                                             json_extract(res.results,
                                                          '$.summary.launch.iterations_per_sample')))
            FROM run_results res, json_each(res.results, '$.rows') e
            WHERE res.run_id = run_digests.run_id)
WHERE rows IS NULL
  AND run_id IN (SELECT r.id FROM runs r JOIN run_results res ON res.run_id = r.id
                 WHERE r.benchmark IN ('smem_stride', 'smem_pattern')
                   AND json_extract(res.results, '$.summary.launch.iterations_per_sample')
                       IS NOT NULL);
