/*
 * fuzz_import.c - libFuzzer harness for POST /runs/import (and the runs a
 * peer sends): the input is an NDJSON body, read by import_parse_ndjson
 * (server/runs/import_check.c) exactly as api_runs_import in server/http/api_import.c
 * reads it (on a NUL-terminated copy, as the HTTP layer's buffer is):
 * every line parsed strictly and checked with import_check_run, the first
 * bad line refusing the whole body with a message that names a line.
 *
 * What import_check_run accepts is then judged and stored, as api_runs_import
 * does (run_finish_import), in a
 * real store (a scratch SQLite file in TMPDIR, one per process):
 * the check must be enough for the store (STORE_OK: no constraint the
 * check lets through), and a run new to the store reads back with the same
 * id, benchmark, status, params and results.
 */
#include "fuzz_common.h"
#include "import_check.h"
#include "judge_sql.h"
#include "run_finish.h"
#include "store.h"
#include "store_functions.h"
#include "store_runs.h"

#include <stdint.h>
#include <unistd.h>

static struct store *store;
static char db_path[256];

static void drop_store(void)
{
    char wal[300];

    store_close(store);
    unlink(db_path);
    snprintf(wal, sizeof(wal), "%s-wal", db_path);
    unlink(wal);
    snprintf(wal, sizeof(wal), "%s-shm", db_path);
    unlink(wal);
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    const char *tmp = getenv("TMPDIR");
    char err[256];

    (void)argc;
    (void)argv;
    snprintf(db_path, sizeof(db_path), "%s/gpubench-fuzz-import-%d.db",
             tmp && *tmp ? tmp : "/tmp", (int)getpid());
    unlink(db_path);
    store_functions_set(judge_sql_functions);
    if (store_open(db_path, &store, err, sizeof(err)) != STORE_OK) {
        fprintf(stderr, "fuzz_import: %s\n", err);
        abort();
    }
    atexit(drop_store);
    return 0;
}

/* Is run the first with its id in runs, and its id not in the store yet? */
static int is_new(const cJSON *runs, const cJSON *run)
{
    const char *id = cJSON_GetObjectItem(run, "id")->valuestring;
    const cJSON *other;
    cJSON *got = NULL;
    int rc;

    cJSON_ArrayForEach(other, runs)
        if (strcmp(cJSON_GetObjectItem(other, "id")->valuestring, id) == 0)
            break;
    if (other != run)
        return 0;
    rc = store_get_run(store, id, &got);
    cJSON_Delete(got);
    CHECK(rc == STORE_OK || rc == STORE_NOT_FOUND);
    return rc == STORE_NOT_FOUND;
}

/* The same JSON text: printed, as the store prints what it keeps.  Text,
 * not cJSON_Compare, so that an object with a repeated key (which cJSON
 * keeps, in order) compares as what it is. */
static int same_json(const cJSON *a, const cJSON *b)
{
    char *ta = a ? cJSON_PrintUnformatted(a) : NULL;
    char *tb = b ? cJSON_PrintUnformatted(b) : NULL;
    int same = (ta == NULL && tb == NULL) || (ta && tb && strcmp(ta, tb) == 0);

    free(ta);
    free(tb);
    return same;
}

static void check_read_back(const cJSON *run)
{
    const char *id = cJSON_GetObjectItem(run, "id")->valuestring;
    const char *fields[] = {"id", "benchmark", "status", "params"};
    cJSON *got = NULL;

    CHECK(store_get_run(store, id, &got) == STORE_OK);
    for (size_t i = 0; i < sizeof(fields) / sizeof(fields[0]); i++)
        CHECK(same_json(cJSON_GetObjectItem(run, fields[i]), cJSON_GetObjectItem(got, fields[i])));
    if (cJSON_IsObject(cJSON_GetObjectItem(run, "results")))
        CHECK(same_json(cJSON_GetObjectItem(run, "results"), cJSON_GetObjectItem(got, "results")));
    cJSON_Delete(got);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *body = malloc(size + 1);
    cJSON *runs, *fresh = cJSON_CreateArray(), *run, *copy;
    /* a fixed clock: the same input is judged the same on every run */
    const struct import_rules rules = {.test_benchmarks = 1,
                                       .now_ms = 1764547200000LL, /* 2025-12-01 */
                                       .max_skew_ms = 300000};
    struct gb_error err;
    int inserted, existing;

    CHECK(body && fresh);
    memcpy(body, data, size);
    body[size] = '\0';
    memset(&err, 'Z', sizeof(err));
    runs = import_parse_ndjson(body, size, &rules, &err);
    if (runs == NULL) {
        /* Refused: a sentence that names the line it stopped at. */
        CHECK(memchr(err.message, '\0', sizeof(err.message)) != NULL);
        CHECK(strncmp(err.message, "line ", 5) == 0 || strcmp(err.code, "internal") == 0);
    } else {
        /* each accepted by the full walk too: the ASCII shortcut of the
         * import's check (import_check_line) lets nothing more through */
        cJSON_ArrayForEach(run, runs) {
            struct gb_error again;
            CHECK(cJSON_IsObject(run) && cJSON_IsString(cJSON_GetObjectItem(run, "id")));
            CHECK(import_check_run(run, &rules, &again) == 0);
        }
    }
    if (runs != NULL && cJSON_GetArraySize(runs) > 0) {
        cJSON_ArrayForEach(run, runs)
            if (is_new(runs, run))
                cJSON_AddItemReferenceToArray(fresh, run);
        /* the import takes each run's results and meta: a copy goes in,
         * so that what was sent can be compared with what reads back */
        copy = cJSON_Duplicate(runs, 1);
        CHECK(copy != NULL);
        CHECK(run_finish_import(store, copy, "import", &inserted, &existing) == STORE_OK);
        cJSON_Delete(copy);
        CHECK(inserted == cJSON_GetArraySize(fresh));
        CHECK(inserted + existing == cJSON_GetArraySize(runs));
        cJSON_ArrayForEach(run, fresh)
            check_read_back(run);
    }
    cJSON_Delete(fresh);
    cJSON_Delete(runs);
    free(body);
    return 0;
}
