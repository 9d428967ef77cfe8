-- 0011_peer_skipped: the runs a peer served that this node passed over,
-- because their benchmark is not one it knows (a newer gpubench on the
-- peer): how many, and why the last one was, for GET /peers.  The puller
-- moves its cursor past them rather than stop at them.
ALTER TABLE peers ADD COLUMN skipped INTEGER NOT NULL DEFAULT 0;
ALTER TABLE peers ADD COLUMN skipped_reason TEXT;
