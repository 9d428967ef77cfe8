-- 0020_peer_newest_run: each peer's newest run held here (the run pulled
-- from it that finished last), kept with its pull state so that GET /peers
-- says it after a restart or an edit of the peers file, not only for runs
-- pulled since the daemon started.  Filled for runs pulled before this
-- migration from the runs whose origin is the peer (a run a peer itself
-- had from another keeps that other origin, so those are not counted).
ALTER TABLE peers ADD COLUMN newest_run_id TEXT;
ALTER TABLE peers ADD COLUMN newest_finished_at TEXT;
UPDATE peers SET
    newest_run_id = (SELECT id FROM runs WHERE origin = peers.url AND finished_at IS NOT NULL
                     ORDER BY finished_at DESC, id DESC LIMIT 1),
    newest_finished_at = (SELECT finished_at FROM runs WHERE origin = peers.url
                          AND finished_at IS NOT NULL
                          ORDER BY finished_at DESC, id DESC LIMIT 1);
