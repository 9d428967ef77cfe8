-- 0008_verdict_samples: what a verdict reads of a run's rows, packed
-- (server/verdict_rows.h): GET /compare with baseline= and candidate=
-- reads hundreds of runs a request, and their whole results (5 to 10 kB of
-- JSON a run, mostly samples printed to 17 digits) cost more to read and
-- parse than the statistics cost to run.
--
--   rows     each row's key fields, measured SM clock and median, and how
--            many samples it has, as JSON text;
--   samples  every sample, 8-byte little-endian IEEE-754 doubles, the
--            rows' one after another.
--
-- Written with the results (store_put_results).  Runs stored before this
-- migration have none and are read from their whole results instead, as
-- run_digests.rows (0003) left them: SQL alone cannot write the doubles,
-- and rewriting every run's results at startup would hold a large
-- database's daemon up for minutes.  A run whose rows hold something the
-- packing would not keep exactly (a sample that is not a finite number)
-- has none either.
CREATE TABLE verdict_samples (
    run_id  TEXT PRIMARY KEY NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    rows    TEXT NOT NULL,
    samples BLOB NOT NULL
) WITHOUT ROWID;
