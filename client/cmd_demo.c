/*
 * cmd_demo.c - `gpubench demo [DIR]`: a small made-up fleet out of real
 * runs, so that a daemon without a GPU has something real on its page,
 * /fleet, /coverage and `gpubench check`.  It imports the H200 exports of
 * the examples folder (DIR, else the source tree's examples/ the client
 * was built from) as they are, each set on a host of its own (h200-a ...,
 * h200x2-c: the examples' READMEs), and adds copies of the three single-H200
 * health sets measured with today's methods, so that their model has
 * enough cards (GB_FLEET_MIN_CARDS, 4) for the fleet view to judge.
 *
 * A copy is the source run with a new run id and batch (the last group's
 * first byte XORed with 0xd0 | K, K the copy), a new card UUID (its first
 * byte so), the host "SOURCE-copyK", and the label
 * "demo copy of HOST run ID8" (then the source's label in brackets): its
 * numbers are the source's, never made up, and the label says so wherever
 * the run is shown.  Importing twice changes nothing (the daemon skips runs
 * it has).  Sent through the import pager (cmd_import.c).
 */
#include "cli.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

#ifndef GB_EXAMPLES_DIR
#define GB_EXAMPLES_DIR "examples"
#endif

/* The example sets, and how many copies of each the fleet gets. */
static const struct demo_set {
    const char *file; /* under the examples folder */
    int copies;
} demo_sets[] = {
    {"h200_daemon_health/health_runs.ndjson", 1},
    {"h200_daemon_canary/canary_runs.ndjson", 1},
    {"h200_run_end/health_runs.ndjson", 1},
    {"h200_daemon_trust/trust_runs.ndjson", 0},
    {"h200_daemon_health_i18/health_runs.ndjson", 0},
    {"h200x2_daemon_health/health_runs.ndjson", 0},
};

#define DEMO_SETS (sizeof(demo_sets) / sizeof(demo_sets[0]))
#define ID_CAP 64

/* An object's string field, or NULL. */
static const char *text_of(const cJSON *obj, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);

    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* Replaces (or adds) obj's string field; 0 or -1 out of memory. */
static int set_text(cJSON *obj, const char *name, const char *value)
{
    cJSON *v = cJSON_CreateString(value);

    if (v == NULL)
        return -1;
    if (cJSON_GetObjectItem(obj, name) != NULL)
        return cJSON_ReplaceItemInObject(obj, name, v) ? 0 : -1;
    return cJSON_AddItemToObject(obj, name, v) ? 0 : -1;
}

/* A UUID-shaped text whose byte (two hex digits) at `at` is XORed with
 * 0xd0 | K: never the source's text, and another for each K; 0, or -1 when
 * the text is too short or not hex there. */
static int mark_copy(const char *src, size_t at, int k, char out[ID_CAP])
{
    static const char hex[] = "0123456789abcdef";
    const char *hi, *lo;
    unsigned byte;

    if (src == NULL || strlen(src) < at + 2 || strlen(src) >= ID_CAP)
        return -1;
    snprintf(out, ID_CAP, "%s", src);
    hi = strchr(hex, out[at] | 0x20);
    lo = strchr(hex, out[at + 1] | 0x20);
    if (hi == NULL || lo == NULL || *hi == '\0' || *lo == '\0')
        return -1;
    byte = (unsigned)(((hi - hex) << 4) | (lo - hex)) ^ (0xd0u | ((unsigned)k & 15u));
    out[at] = hex[byte >> 4];
    out[at + 1] = hex[byte & 15u];
    return 0;
}

/* The K-th copy of one run, as a NEW text the caller frees; NULL said. */
static char *copy_run(const char *line, int k)
{
    cJSON *run = cJSON_Parse(line), *meta, *dev, *mdev;
    const char *id, *host, *uuid, *batch, *label;
    char new_id[ID_CAP], new_batch[ID_CAP], new_uuid[ID_CAP], new_host[128], new_label[200],
        url[ID_CAP + 8];
    char *out = NULL;

    if (run == NULL)
        goto done;
    id = text_of(run, "id");
    host = text_of(run, "host");
    batch = text_of(run, "batch");
    label = text_of(run, "label");
    dev = cJSON_GetObjectItem(run, "device");
    meta = cJSON_GetObjectItem(run, "meta");
    mdev = cJSON_GetObjectItem(meta, "device");
    uuid = text_of(dev, "uuid");
    /* run ids: 8-4-4-4-12, the last group from 24; card UUIDs: "GPU-" + 8 */
    if (host == NULL || mark_copy(id, 24, k, new_id) != 0 || mark_copy(uuid, 4, k, new_uuid) != 0)
        goto done;
    snprintf(new_host, sizeof(new_host), "%s-copy%d", host, k);
    snprintf(url, sizeof(url), "/runs/%s", new_id);
    snprintf(new_label, sizeof(new_label), "demo copy of %s run %.8s%s%.80s%s", host, id,
             label ? " (" : "", label ? label : "", label ? ")" : "");
    if (set_text(run, "id", new_id) || set_text(run, "url", url) ||
        set_text(run, "host", new_host) || set_text(run, "label", new_label) ||
        set_text(dev, "uuid", new_uuid))
        goto done;
    if (batch && (mark_copy(batch, 24, k, new_batch) != 0 || set_text(run, "batch", new_batch)))
        goto done;
    if (cJSON_IsObject(meta) &&
        ((text_of(meta, "host") && set_text(meta, "host", new_host)) ||
         (text_of(meta, "hostname") && set_text(meta, "hostname", new_host)) ||
         (text_of(mdev, "uuid") && set_text(mdev, "uuid", new_uuid))))
        goto done;
    out = cJSON_PrintUnformatted(run);
done:
    if (out == NULL)
        fprintf(stderr, "gpubench demo: a run could not be copied (not a run of the examples, "
                        "or out of memory)\n");
    cJSON_Delete(run);
    return out;
}

/* One set's lines (and their copies) into the pager; CLI_OK or said. */
static int add_set(struct cli_import *im, const char *dir, const struct demo_set *set)
{
    char path[4096], *line = NULL, *copy;
    size_t alloc = 0;
    ssize_t n;
    long runs = 0;
    FILE *f;
    int rc = CLI_ERROR;

    snprintf(path, sizeof(path), "%s/%s", dir, set->file);
    if ((f = fopen(path, "rb")) == NULL) {
        fprintf(stderr, "gpubench demo: %s: %s (give the examples folder of a gpubench source "
                        "tree: gpubench demo DIR)\n",
                path, strerror(errno));
        return CLI_ERROR;
    }
    im->what = set->file;
    while ((n = getline(&line, &alloc, f)) > 0) {
        if (cli_import_line(im, line, (size_t)n) != CLI_OK)
            goto done;
        for (int k = 1; k <= set->copies; k++) {
            if ((copy = copy_run(line, k)) == NULL)
                goto done;
            rc = cli_import_line(im, copy, strlen(copy));
            free(copy);
            if (rc != CLI_OK)
                goto done;
            rc = CLI_ERROR;
        }
        runs++;
    }
    if (ferror(f)) {
        fprintf(stderr, "gpubench demo: %s: %s\n", path, strerror(errno));
        goto done;
    }
    if (!im->c->opt.json)
        printf("%s: %ld run%s%s\n", set->file, runs, runs == 1 ? "" : "s",
               set->copies ? ", and a copy of each on a made-up card" : "");
    rc = CLI_OK;
done:
    fclose(f);
    free(line);
    return rc;
}

int cmd_demo(struct cli *c)
{
    const char *dir = c->nargs >= 1 ? c->args[0] : GB_EXAMPLES_DIR;
    struct cli_import im;
    int rc = CLI_ERROR;

    cli_import_init(&im, c, "");
    if (c->nargs > 1) {
        fprintf(stderr, "gpubench demo: expected at most one DIR (the examples folder)\n");
        goto done;
    }
    for (size_t i = 0; i < DEMO_SETS; i++)
        if (add_set(&im, dir, &demo_sets[i]) != CLI_OK)
            goto done;
    im.what = dir;
    if (cli_import_finish(&im) != CLI_OK)
        goto done;
    cli_import_say(&im);
    if (!c->opt.json)
        printf("the copies' labels say \"demo copy of ...\"; now open the page, or try "
               "'gpubench fleet --benchmark hbm_bandwidth' and 'gpubench check --host "
               "h200-a --max-age 30d' (the runs date from 2026-12-01 to 03: widen "
               "--max-age as they age, up to 366d)\n");
    rc = CLI_OK;
done:
    cli_import_free(&im);
    return rc;
}
