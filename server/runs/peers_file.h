/*
 * peers_file.h - the peers a hub pulls, from a file in Prometheus's file_sd
 * format: a JSON list of {"targets": ["host:port" or a URL, ...],
 * "labels": {"name": "value", ...}}.  peers.c reads it again when it
 * changes and on SIGHUP; this file only reads it, so a file that is refused
 * changes nothing (the caller keeps its last good list).
 */
#ifndef GPUBENCH_RUNS_PEERS_FILE_H
#define GPUBENCH_RUNS_PEERS_FILE_H

#include <stddef.h>
#include <cjson/cJSON.h>

/* The longest peer URL kept. */
#define PEER_URL_CAP 512

/* The most bytes of a peers file read: 10,000 targets with labels are
 * well under 4 MiB. */
#define PEERS_FILE_CAP (16 * 1024 * 1024)

struct peer_target {
    char url[PEER_URL_CAP];
    cJSON *labels; /* an object of strings, owned; {} when the group had none */
    int order;     /* its place in the file: the first group naming a target wins */
};

struct peer_targets {
    struct peer_target *list;
    int count;
};

/* text as a peer's URL into out: "host:port" means http://host:port, an
 * http:// or https:// URL is kept, trailing slashes are dropped (so
 * "http://a:1/" and "a:1" are one peer).  0, or -1 with why in err. */
int peer_url_normalize(const char *text, char *out, size_t cap, char *err, size_t err_cap);

/* Reads path into out, one entry per distinct target (the first group that
 * names a target gives its labels).  0, or -1 with the reason in err (the
 * file unreadable, not JSON, not a list of groups, a bad target or label)
 * and out empty.  Free out with peer_targets_free. */
int peers_file_read(const char *path, struct peer_targets *out, char *err, size_t err_cap);

void peer_targets_free(struct peer_targets *t);

#endif
