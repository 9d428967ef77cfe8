-- 0017_damaged_at_origin: a run copied from a node whose database held it
-- damaged (a peer's export marks it "damaged": true with its
-- "damaged_columns") is stored as damaged rather than skipped, so that a
-- hub's copy says what it lacks and its cursor moves past it.  The column
-- holds the node's list of damaged columns as JSON text; NULL for a run
-- whole where it was measured (every run before this migration).
ALTER TABLE runs ADD COLUMN damaged_at_origin TEXT;
