/*
 * peers_metrics.c - the peers' Prometheus lines for /metrics: runs pulled,
 * conflicts (runs refused: their id held here with another origin, or a
 * new one naming a card another origin speaks for here) and
 * failures in a row per peer, labelled with the peer's URL and its
 * group labels from the peers file, and the count of peers by state.
 * Read under peers->lock, as GET /peers is (peers_describe.c); labels
 * are written by prom_text.h, the one escaper of /metrics.
 */
#include "peers_internal.h"
#include "dynbuf.h"
#include "prom_text.h"

#include <pthread.h>
#include <string.h>

/* Group labels a peer's /metrics series carry, at most. */
#define PEER_METRIC_LABELS 16

/* name as a label name (prom_label_name), or -1 when it must not be one:
 * reserved, or "peer" and "url", which name the series' peer. */
static int label_name(const char *name, char *out, size_t cap)
{
    if (prom_label_name(name, out, cap) != 0 || strcmp(out, "peer") == 0 ||
        strcmp(out, "url") == 0)
        return -1;
    return 0;
}

/* {peer="URL",name="value",...}: the peer and its group labels, each
 * name once. */
static void add_series_labels(struct dynbuf *b, const struct peer *peer)
{
    char names[PEER_METRIC_LABELS][128];
    const cJSON *l;
    int used = 0;

    (void)!dynbuf_add(b, "{", 1);
    prom_label(b, "peer", peer->url);
    cJSON_ArrayForEach(l, peer->labels) {
        int dup = 0;

        if (used == PEER_METRIC_LABELS ||
            label_name(l->string, names[used], sizeof(names[used])) != 0)
            continue;
        for (int i = 0; i < used; i++)
            dup |= strcmp(names[i], names[used]) == 0;
        if (dup)
            continue;
        prom_label(b, names[used], l->valuestring);
        used++;
    }
    (void)!dynbuf_add(b, "}", 1);
}

void peers_metrics(struct peers *p, struct dynbuf *b)
{
    int by_state[PEER_STATES] = {0};

    if (p == NULL)
        return;
    pthread_mutex_lock(&p->lock);
    (void)!dynbuf_printf(b, "# HELP gpubench_peer_runs_pulled_total Runs stored from a peer.\n"
                            "# TYPE gpubench_peer_runs_pulled_total counter\n");
    for (int i = 0; i < p->count; i++) {
        (void)!dynbuf_printf(b, "gpubench_peer_runs_pulled_total");
        add_series_labels(b, p->list[i]);
        (void)!dynbuf_printf(b, " %lld\n", p->list[i]->row.runs_pulled);
    }
    (void)!dynbuf_printf(b, "# HELP gpubench_peer_conflicts_total Runs a peer served whose id is "
                            "held here with another origin, or naming a card another origin "
                            "speaks for here: refused.\n"
                            "# TYPE gpubench_peer_conflicts_total counter\n");
    for (int i = 0; i < p->count; i++) {
        (void)!dynbuf_printf(b, "gpubench_peer_conflicts_total");
        add_series_labels(b, p->list[i]);
        (void)!dynbuf_printf(b, " %lld\n", p->list[i]->row.conflicts);
    }
    (void)!dynbuf_printf(
        b, "# HELP gpubench_peer_failures_in_row Failed pulls since the last good one.\n"
           "# TYPE gpubench_peer_failures_in_row gauge\n");
    for (int i = 0; i < p->count; i++) {
        (void)!dynbuf_printf(b, "gpubench_peer_failures_in_row");
        add_series_labels(b, p->list[i]);
        (void)!dynbuf_printf(b, " %d\n", p->list[i]->failures_in_row);
        by_state[peer_state(p->list[i])]++;
    }
    pthread_mutex_unlock(&p->lock);
    (void)!dynbuf_printf(b, "# HELP gpubench_peers Peers pulled, by the state of their pulls.\n"
                            "# TYPE gpubench_peers gauge\n");
    for (int i = 0; i < PEER_STATES; i++)
        (void)!dynbuf_printf(b, "gpubench_peers{state=\"%s\"} %d\n", peers_state_names[i],
                             by_state[i]);
}
