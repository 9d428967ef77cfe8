-- 0021_card_owners: who speaks for each card (issue 35; README "A fleet",
-- who is believed about what).  A card (its uuid) is spoken for by one
-- origin at a time: this node (origin NULL) once a run of it is measured
-- here, else the origin whose run first named it here (a peer's URL, or a
-- relayed origin in that peer's subtree).  A run from another origin
-- naming it is refused (server/store/store_fleet.c), so made-up runs never
-- reach the card's floors, coverage, checks or change points.  Imports
-- never claim a card.  Filled for a database from before from the runs it
-- holds: a card measured here is this node's, else its first run's origin
-- (in this daemon's order of storing), imports left out.
CREATE TABLE card_owners (
    device_uuid TEXT PRIMARY KEY NOT NULL,
    origin      TEXT,               -- NULL: this node's own card
    host        TEXT NOT NULL,      -- the host its owner's first run named
    since       TEXT NOT NULL       -- when this owner took it
) WITHOUT ROWID;
INSERT INTO card_owners (device_uuid, origin, host, since)
SELECT device_uuid, origin, host, at FROM
    (SELECT device_uuid, origin, host, coalesce(finished_at, created_at) AS at,
            row_number() OVER (PARTITION BY device_uuid
                               ORDER BY origin IS NOT NULL, final_seq IS NULL, final_seq, id)
                AS n
     FROM runs
     WHERE device_uuid IS NOT NULL AND device_uuid <> ''
       AND (origin IS NULL OR origin <> 'import'))
WHERE n = 1;
