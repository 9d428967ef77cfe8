-- 0006_baselines: baselines that stay (issue 14), named groups of runs that
-- GET /compare?baseline=NAME judges a candidate against.
--
-- A baseline is resolved to its runs when it is made (POST /baselines) and
-- keeps them: runs finished later, or a card's history growing, do not move
-- it.  spec is what was asked (runs, or card, benchmark and dates) as JSON,
-- shown back; runs the resolved run ids as a JSON array.
CREATE TABLE baselines (
    name TEXT PRIMARY KEY,
    created_at TEXT NOT NULL,
    spec TEXT NOT NULL,
    runs TEXT NOT NULL
);

-- The selectors of GET /compare?baseline=driver:... read this column.
CREATE INDEX runs_by_driver ON runs (driver_version, id);
