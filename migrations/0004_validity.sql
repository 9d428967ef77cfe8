-- 0004_validity: the verdict on each finished run (common/validity.c).
--
-- validity is the whole verdict as JSON, {"valid": true|false|null,
-- "reasons": [...]}, shown as the run's "validity"; valid repeats its
-- "valid" as 1, 0 or NULL so that GET /runs?valid=... and /compare filter
-- on a column with an index instead of parsing JSON.  Runs stored before
-- this migration were not watched: both stay NULL (unknown, treated as
-- valid).
ALTER TABLE runs ADD COLUMN validity TEXT;
ALTER TABLE runs ADD COLUMN valid INTEGER CHECK (valid IN (0, 1));
CREATE INDEX runs_by_valid ON runs (valid, id);
