/*
 * peers_file.c - see peers_file.h.  The whole file is checked before any
 * of it is used: one bad target refuses the file, since a hub that quietly
 * dropped a node it was told to pull would look healthy while it missed
 * that node's runs.
 */
#include "peers_file.h"
#include "dynbuf.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The authority of url (after its scheme) checked as --listen's address
 * is: no credentials (they would be shown in /peers, /metrics and the
 * log), a host, and a port, where given, in 1..65535.  0, or -1 with err. */
static int authority_check(const char *text, const char *url, char *err, size_t err_cap)
{
    const char *host = strstr(url, "://") + 3;
    size_t len = strcspn(host, "/?#");
    const char *close = memchr(host, ']', len), *colon;
    char *end;
    long port;

    if (memchr(host, '@', len) != NULL) {
        snprintf(err, err_cap, "target \"%.100s\": a user or password in a peer's URL is "
                               "refused (it would be shown in /peers, /metrics and the log); "
                               "give the token with --peer-token-file",
                 text);
        return -1;
    }
    colon = close ? (close + 1 < host + len && close[1] == ':' ? close + 1 : NULL)
                  : memchr(host, ':', len);
    if (len == 0 || colon == host || (host[0] == '[' && close == NULL)) {
        snprintf(err, err_cap, "target \"%.100s\" names no host", text);
        return -1;
    }
    if (colon == NULL)
        return 0;
    port = strtol(colon + 1, &end, 10);
    if (end == colon + 1 || end != host + len || port < 1 || port > 65535) {
        snprintf(err, err_cap, "target \"%.100s\": port out of range (1 to 65535)", text);
        return -1;
    }
    return 0;
}

int peer_url_normalize(const char *text, char *out, size_t cap, char *err, size_t err_cap)
{
    int has_scheme = strncmp(text, "http://", 7) == 0 || strncmp(text, "https://", 8) == 0;
    size_t n;

    if (text[0] == '\0' || strpbrk(text, " \t\r\n\"\\") != NULL) {
        snprintf(err, err_cap, "target \"%.100s\" is not host:port or a URL", text);
        return -1;
    }
    if (!has_scheme && (strstr(text, "://") != NULL || strchr(text, '/') != NULL)) {
        snprintf(err, err_cap, "target \"%.100s\": expected host:port or an http:// or "
                               "https:// URL",
                 text);
        return -1;
    }
    if ((size_t)snprintf(out, cap, "%s%s", has_scheme ? "" : "http://", text) >= cap) {
        snprintf(err, err_cap, "target \"%.60s...\" is over %zu bytes", text, cap - 1);
        return -1;
    }
    n = strlen(out);
    while (n > 0 && out[n - 1] == '/')
        out[--n] = '\0';
    if (strcmp(out, "http:") == 0 || strcmp(out, "https:") == 0) {
        snprintf(err, err_cap, "target \"%.100s\" names no host", text);
        return -1;
    }
    return authority_check(text, out, err, err_cap);
}

void peer_targets_free(struct peer_targets *t)
{
    for (int i = 0; i < t->count; i++)
        cJSON_Delete(t->list[i].labels);
    free(t->list);
    t->list = NULL;
    t->count = 0;
}

static int read_all(const char *path, struct dynbuf *b, char *err, size_t err_cap)
{
    FILE *f = fopen(path, "r");
    char chunk[65536];
    size_t n;
    int rc = -1;

    if (f == NULL) {
        snprintf(err, err_cap, "%s: %s", path, strerror(errno));
        return -1;
    }
    while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0) {
        if (dynbuf_add(b, chunk, n) != 0) {
            snprintf(err, err_cap, "%s: over %d MiB", path, PEERS_FILE_CAP / (1024 * 1024));
            goto done;
        }
    }
    if (ferror(f)) {
        snprintf(err, err_cap, "%s: %s", path, strerror(errno));
        goto done;
    }
    rc = 0;

done:
    fclose(f);
    return rc;
}

/* A group's labels, checked: an object of strings (absent: {}).  A NEW
 * object, or NULL with err set. */
static cJSON *group_labels(const cJSON *group, int g, char *err, size_t err_cap)
{
    const cJSON *labels = cJSON_GetObjectItem(group, "labels");
    const cJSON *l;

    if (labels == NULL)
        return cJSON_CreateObject();
    if (!cJSON_IsObject(labels)) {
        snprintf(err, err_cap, "group %d: \"labels\" is not an object", g);
        return NULL;
    }
    cJSON_ArrayForEach(l, labels) {
        if (!cJSON_IsString(l) || l->string[0] == '\0') {
            snprintf(err, err_cap, "group %d: label \"%.60s\" is not a string", g, l->string);
            return NULL;
        }
    }
    return cJSON_Duplicate(labels, 1);
}

/* Sorts by URL, the earlier entry first among equals, so that the first
 * group naming a target wins. */
static int by_url_then_order(const void *a, const void *b)
{
    const struct peer_target *x = a, *y = b;
    int c = strcmp(x->url, y->url);

    return c ? c : x->order - y->order;
}

/* Keeps the first of each URL (list sorted, stable by position). */
static void dedupe(struct peer_targets *t)
{
    int kept = 0;

    for (int i = 0; i < t->count; i++) {
        if (kept > 0 && strcmp(t->list[kept - 1].url, t->list[i].url) == 0) {
            cJSON_Delete(t->list[i].labels);
            continue;
        }
        t->list[kept++] = t->list[i];
    }
    t->count = kept;
}

/* Appends each of the group's targets to out (room made by the caller). */
static int add_group(const cJSON *group, int g, struct peer_targets *out, char *err,
                     size_t err_cap)
{
    const cJSON *targets = cJSON_GetObjectItem(group, "targets");
    const cJSON *t;
    cJSON *labels;

    if (!cJSON_IsObject(group) || !cJSON_IsArray(targets)) {
        snprintf(err, err_cap, "group %d: expected {\"targets\": [...], \"labels\": {...}}", g);
        return -1;
    }
    if ((labels = group_labels(group, g, err, err_cap)) == NULL)
        return -1;
    cJSON_ArrayForEach(t, targets) {
        struct peer_target *pt = &out->list[out->count];
        char why[200];

        if (!cJSON_IsString(t) ||
            peer_url_normalize(t->valuestring, pt->url, sizeof(pt->url), why, sizeof(why)) != 0) {
            snprintf(err, err_cap, "group %d: %s", g,
                     cJSON_IsString(t) ? why : "a target is not a string");
            cJSON_Delete(labels);
            return -1;
        }
        if ((pt->labels = cJSON_Duplicate(labels, 1)) == NULL) {
            snprintf(err, err_cap, "out of memory");
            cJSON_Delete(labels);
            return -1;
        }
        pt->order = out->count++;
    }
    cJSON_Delete(labels);
    return 0;
}

int peers_file_read(const char *path, struct peer_targets *out, char *err, size_t err_cap)
{
    struct dynbuf b;
    cJSON *root = NULL;
    const cJSON *group;
    int total = 0, g = 0, rc = -1;

    out->list = NULL;
    out->count = 0;
    dynbuf_init(&b, PEERS_FILE_CAP);
    if (read_all(path, &b, err, err_cap) != 0)
        goto done;
    root = cJSON_ParseWithLength(b.data ? b.data : "", b.len);
    if (root == NULL) {
        snprintf(err, err_cap, "%s is not JSON", path);
        goto done;
    }
    if (!cJSON_IsArray(root)) {
        snprintf(err, err_cap, "%s: expected a JSON list of target groups", path);
        goto done;
    }
    cJSON_ArrayForEach(group, root)
        total += cJSON_GetArraySize(cJSON_GetObjectItem(group, "targets"));
    out->list = calloc((size_t)total + 1, sizeof(*out->list));
    if (out->list == NULL) {
        snprintf(err, err_cap, "out of memory");
        goto done;
    }
    cJSON_ArrayForEach(group, root) {
        if (add_group(group, g++, out, err, err_cap) != 0)
            goto done;
    }
    qsort(out->list, (size_t)out->count, sizeof(*out->list), by_url_then_order);
    dedupe(out);
    rc = 0;

done:
    if (rc != 0)
        peer_targets_free(out);
    cJSON_Delete(root);
    dynbuf_free(&b);
    return rc;
}
