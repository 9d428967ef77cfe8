/*
 * make_db.c - a database of many runs for bench/store, made through the
 * real insert path (run_finish_import, the path of POST /runs/import and of
 * peers: the same statements, indexes and columns as any stored run).
 *
 *   gpubench-make-db DB-PATH COUNT TEMPLATES.ndjson
 *
 * Each run is a copy of one of the real H200 runs in TEMPLATES (rows,
 * samples, metadata as measured) given a fresh id, time, host and card: a
 * fleet of 20 hosts with 4 cards each, of four models, over two years.
 * They are filler for measuring the store, not results: every one is
 * labelled "bench-fill" and its meta says "synthetic": true.
 */
#include "judge_sql.h"
#include "run_finish.h"
#include "store.h"
#include "store_functions.h"
#include "store_runs.h"
#include "timeutil.h"
#include "uuid7.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#define BATCH 2000
#define HOSTS 20 /* GB_BENCH_HOSTS overrides it (bench/store/replicate.py: a few) */
#define CARDS_PER_HOST 4

static int hosts = HOSTS;

static const char *const models[] = {"NVIDIA H200", "NVIDIA H100 80GB HBM3",
                                     "NVIDIA A100-SXM4-80GB", "NVIDIA L40S"};

static cJSON *load_templates(const char *path)
{
    FILE *f = fopen(path, "r");
    cJSON *list = cJSON_CreateArray();
    char *line = NULL;
    size_t cap = 0;

    if (f == NULL)
        return NULL;
    while (getline(&line, &cap, f) > 0) {
        cJSON *run = cJSON_Parse(line);
        const cJSON *status = cJSON_GetObjectItem(run, "status");
        if (cJSON_IsString(status) && strcmp(status->valuestring, "done") == 0 &&
            strncmp(cJSON_GetObjectItem(run, "benchmark")->valuestring, "test_", 5) != 0)
            cJSON_AddItemToArray(list, run);
        else
            cJSON_Delete(run);
    }
    free(line);
    fclose(f);
    return list;
}

static void set_string(cJSON *obj, const char *name, const char *value)
{
    cJSON_DeleteItemFromObject(obj, name);
    cJSON_AddStringToObject(obj, name, value);
}

/* Run i of count: a copy of a template with its own id, time and card. */
static cJSON *make_run(const cJSON *templates, long i, long count, int64_t t0_ms)
{
    int nt = cJSON_GetArraySize(templates);
    cJSON *run = cJSON_Duplicate(cJSON_GetArrayItem(templates, (int)(i % nt)), 1);
    cJSON *dev = cJSON_GetObjectItem(run, "device");
    cJSON *meta = cJSON_GetObjectItem(run, "meta");
    int host = (int)((i / 7) % hosts), card = (int)((i / 3) % CARDS_PER_HOST);
    int64_t ms = t0_ms + (int64_t)((double)i / (double)count * 2 * 365 * 86400000.0);
    uint8_t rnd[8];
    char id[UUID7_STRLEN + 1], text[64], created[32], finished[32];

    getrandom(rnd, sizeof(rnd), 0);
    uuid7_format((uint64_t)ms, (uint16_t)(i & 0x0fff), rnd, id);
    time_format_rfc3339(ms, created, sizeof(created));
    time_format_rfc3339(ms + 2500, finished, sizeof(finished));
    set_string(run, "id", id);
    set_string(run, "created_at", created);
    set_string(run, "started_at", created);
    set_string(run, "finished_at", finished);
    snprintf(text, sizeof(text), "node%02d", host + 1);
    set_string(run, "host", text);
    set_string(run, "label", "bench-fill");
    cJSON_DeleteItemFromObject(run, "batch");
    cJSON_DeleteItemFromObject(run, "origin");
    cJSON_DeleteItemFromObject(run, "seq");
    snprintf(text, sizeof(text), "GPU-bench%04d-0000-4000-8000-%012d", host, card);
    set_string(dev, "uuid", text);
    set_string(dev, "name", models[(host + card) % 4]);
    cJSON_DeleteItemFromObject(dev, "index");
    cJSON_AddNumberToObject(dev, "index", card);
    cJSON_DeleteItemFromObject(meta, "synthetic");
    cJSON_AddBoolToObject(meta, "synthetic", 1);
    return run;
}

int main(int argc, char **argv)
{
    struct store *s = NULL;
    cJSON *templates;
    char err[512];
    long count, done = 0;
    int64_t t0 = 1700000000000LL, started = time_mono_ms();

    if (argc != 4) {
        fprintf(stderr, "usage: gpubench-make-db DB-PATH COUNT TEMPLATES.ndjson\n");
        return 2;
    }
    count = atol(argv[2]);
    if (getenv("GB_BENCH_HOSTS") && atoi(getenv("GB_BENCH_HOSTS")) > 0)
        hosts = atoi(getenv("GB_BENCH_HOSTS"));
    templates = load_templates(argv[3]);
    if (templates == NULL || cJSON_GetArraySize(templates) == 0) {
        fprintf(stderr, "gpubench-make-db: no done runs in %s\n", argv[3]);
        return 1;
    }
    store_functions_set(judge_sql_functions);
    if (store_open(argv[1], &s, err, sizeof(err)) != STORE_OK) {
        fprintf(stderr, "gpubench-make-db: %s\n", err);
        return 1;
    }
    while (done < count) {
        cJSON *batch = cJSON_CreateArray();
        struct import_tally tally;
        for (int k = 0; k < BATCH && done + k < count; k++)
            cJSON_AddItemToArray(batch, make_run(templates, done + k, count, t0));
        if (run_finish_import(s, NULL, batch, "bench-fill", &tally) != STORE_OK) {
            fprintf(stderr, "gpubench-make-db: import failed at run %ld\n", done);
            return 1;
        }
        done += cJSON_GetArraySize(batch);
        cJSON_Delete(batch);
        if (done % 50000 < BATCH)
            fprintf(stderr, "%ld of %ld runs (%.0f s)\n", done, count,
                    (time_mono_ms() - started) / 1000.0);
    }
    store_close(s);
    cJSON_Delete(templates);
    return 0;
}
