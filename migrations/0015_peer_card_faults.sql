-- 0015_peer_card_faults: the open critical card events each peer reported
-- in its last good answer to GET /card_faults (issue 24; README "Watching
-- cards"), so that a hub judges a peer's card degraded as its node does.
-- A peer's rows are replaced whole by each answer, kept while it cannot
-- be reached, and dropped when it leaves the list of peers
-- (server/runs/peers.c).  hops: 1 when the peer's own watch saw it, one
-- more for each hub it came through (server/runs/card_faults.h says why
-- there is a limit).
CREATE TABLE peer_card_faults (
    peer        TEXT NOT NULL,      -- the URL it was pulled from
    device_uuid TEXT NOT NULL,
    host        TEXT NOT NULL,
    subject     TEXT NOT NULL,      -- as card_events.subject ("xid 79")
    message     TEXT NOT NULL,
    at          TEXT NOT NULL,      -- the reading's time at the node
    hops        INTEGER NOT NULL CHECK (hops >= 1)
);
CREATE INDEX peer_card_faults_by_peer ON peer_card_faults (peer);
CREATE INDEX peer_card_faults_by_card ON peer_card_faults (device_uuid);
