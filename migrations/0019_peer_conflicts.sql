-- 0019_peer_conflicts: runs a peer served whose id this daemon already
-- holds with another origin (issue 35: a peer serving another node's run
-- ids).  Such a run is refused, never a replacement, and counted here per
-- peer, as GET /peers and /metrics show it.
ALTER TABLE peers ADD COLUMN conflicts INTEGER NOT NULL DEFAULT 0;
