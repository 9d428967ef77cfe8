-- 0004_rows_digest: a run's result rows cut to what a comparison reads.
--
-- GET /compare reads many runs' rows but only their key and measured
-- fields (median, ratio, GB/s, share, counters: compare_row_digest in
-- server/compare.c), never the samples, which are most of a result's
-- bytes.  Filled when a run is stored; runs stored before this migration
-- keep it NULL and are read from their whole results instead.

ALTER TABLE run_results ADD COLUMN rows_digest TEXT;
