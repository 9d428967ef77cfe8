-- 0014_coverage_by_card: GET /coverage?host=NAME (what `gpubench check
-- --host` asks a hub) reads one host's cards, and each card's newest
-- valid run of each benchmark, without reading the whole fleet's rows;
-- a card's state (GET /cards) finds its newest valid run of each health
-- benchmark the same way instead of walking all the card's runs
-- (bench/RESULTS.md, "gpubench check, GET /coverage and GET /cards").
-- Neither table's key starts with the card: latest_by_card's starts with
-- the benchmark and fleet_latest's with the verdict key.
CREATE INDEX latest_by_card_by_host ON latest_by_card (host, device_uuid);

CREATE INDEX fleet_latest_by_card ON fleet_latest (device_uuid, benchmark, host, run_id);
