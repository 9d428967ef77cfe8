-- 0016_failed_checks_by_card: a card's state asks whether its newest valid
-- run of a benchmark missed a floor, and if so whether the run of the same
-- request before it did too (server/store/store_cards.c,
-- store_card_repeat_misses: how a hub judges its peers' cards).  Reading
-- checks_failed from each newest run read every run's row, the last
-- column past its results and metadata: 250 ms of a whole hub's GET
-- /coverage of 8,000 cards (bench/check).  The runs that missed a floor
-- are few, so the index of them is small and most cards find none.
CREATE INDEX runs_failed_checks_by_card ON runs (device_uuid, id) WHERE checks_failed > 0;
