/*
 * peers.h - the fleet: one thread per --peer URL pulls that daemon's
 * finished runs, in the order they became final there (GET
 * /runs.ndjson?after_seq=N), checks each line (import_check.c) and stores
 * them with their origin.  Run ids are global, so a run is never stored
 * twice, whoever it came through.
 *
 * A peer that is down, slow, or answers garbage or a body over the cap
 * costs a logged error and a retry after a back-off that doubles up to five
 * minutes; the runs before a bad line are kept and the cursor stops just
 * before it.  The cursor and the counts live in the store, so a restart
 * goes on where it was.
 */
#ifndef GPUBENCH_PEERS_H
#define GPUBENCH_PEERS_H

#include <cjson/cJSON.h>

#include "app.h"
#include "dynbuf.h"

#define PEER_PAGE 200
#define PEER_BODY_CAP (16 * 1024 * 1024)

struct peers;

/* Starts a puller for each of app->opt's peers.  NULL when there are none
 * or memory ran out (then nothing is pulled; the log says which). */
struct peers *peers_start(struct app *app);
void peers_stop(struct peers *p);

/* {"peers": [{url, cursor, runs_pulled, last_success_at, last_error,
 * last_error_at, failures_in_row}]}.  Caller owns it.  p may be NULL. */
cJSON *peers_describe(struct peers *p);

/* Prometheus lines for the peers, appended to b.  p may be NULL. */
void peers_metrics(struct peers *p, struct dynbuf *b);

#endif
