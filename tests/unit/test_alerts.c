/*
 * test_alerts.c - what a run's verdicts change (server/runs/alerts.c),
 * called as run_end.c calls it, over a fresh store and without a webhook:
 * done runs are made in the store by hand (queued, claimed, finished with
 * their verdicts), so that the verdicts say exactly what each case needs.
 *
 * What must hold: a run whose history row is `slower` opens an alert
 * `detected` and queues --confirm-runs confirming runs naming it; when
 * each of them ends without a verdict the alert is cleared, its reason
 * naming the last.  With --confirm-runs 0 the alert is confirmed at once,
 * and the one announced (its webhook outcome recorded "none") is the alert
 * this run opened, by its id, even when another open alert is newer: a
 * trigger in the database opens one, of another card, in the very
 * statement that stores this run's, as a runner of another GPU could
 * between the two; announcing "the newest open alert" fails here.
 */
#include "alerts.h"
#include "store.h"
#include "store_alerts.h"
#include "store_queue.h"
#include "store_runs.h"
#include "test.h"
#include "test_store_tmp.h"

#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>

#define PARAMS "{\"strides\":[1,2]}"
#define RESULTS                                                                  \
    "{\"rows\":[{\"stride\":1,\"median_ms\":0.25,\"samples\":[0.25,0.25,0.25]}," \
    "{\"stride\":2,\"median_ms\":0.5,\"samples\":[0.5,0.5,0.5]}],\"summary\":{}}"
#define META "{\"host\":\"unit-host\"}"

/* Verdicts whose history finds row stride ROW slower and the other the
 * same (run_verdicts.h's shape, cut to what alerts.c reads). */
#define SLOWER_AT(row, other)                                                            \
    "{\"judged\":true,\"margin\":0.02,\"confirms\":null,\"history\":{\"verdict\":"       \
    "\"slower\",\"rows\":[{\"key\":{\"stride\":" #row "},\"verdict\":\"slower\","        \
    "\"shift\":0.12},{\"key\":{\"stride\":" #other "},\"verdict\":\"same\",\"shift\":0}" \
    "]},\"fleet\":{\"rows\":[]}}"
/* Verdicts whose history has the one row stride ROW, slower: they clear
 * no alert of another row. */
#define ONLY_SLOWER_AT(row)                                                                 \
    "{\"judged\":true,\"margin\":0.02,\"confirms\":null,\"history\":{\"verdict\":"          \
    "\"slower\",\"rows\":[{\"key\":{\"stride\":" #row "},\"verdict\":\"slower\",\"shift\":" \
    "0.12}]},\"fleet\":{\"rows\":[]}}"

struct fixture {
    struct tmp_store t;
    struct alerts *a;
};

static int fixture_start(struct fixture *f, int confirm_runs)
{
    memset(f, 0, sizeof(*f));
    if (tmp_store_open(&f->t, "unit-alerts") != 0)
        return -1;
    f->a = alerts_start(
        &(struct alerts_config){.store = f->t.s, .confirm_runs = confirm_runs, .max_queue = 100});
    return f->a ? 0 : -1;
}

static void fixture_stop(struct fixture *f)
{
    alerts_stop(f->a);
    tmp_store_close(&f->t);
}

/* A done run of GPU 0 with verdicts (JSON text) stored with its end, as
 * the pool stores one: its id into id, the run as read back into *run
 * (NEW).  0, or -1 saying what failed. */
static int done_run(struct fixture *f, const char *verdicts, char id[40], cJSON **run)
{
    struct run_job job;
    int rc;

    *run = NULL;
    if (tmp_store_queue(f->t.s, "smem_stride", PARAMS, 0, TEST_FAKE_UUID(0), id) != STORE_OK ||
        store_claim_next(f->t.s, 0, &job) != STORE_OK) {
        fprintf(stderr, "done_run: the run could not be queued and claimed\n");
        return -1;
    }
    rc = strcmp(job.id, id) == 0 ? 0 : -1; /* no other run may be queued before it */
    store_job_clear(&job);
    if (rc == 0)
        rc = tmp_finish_run(f->t.s, id, "done", RESULTS, META, NULL, NULL, verdicts);
    if (rc != STORE_OK || store_get_run(f->t.s, id, run) != STORE_OK) {
        fprintf(stderr, "done_run: the run could not be ended and read back\n");
        return -1;
    }
    return 0;
}

/* Calls alerts_on_run as run_end.c does: with the run and its verdicts. */
static int on_run(struct fixture *f, const char *verdicts, char id[40])
{
    cJSON *run = NULL, *v = cJSON_Parse(verdicts);
    int rc = v && done_run(f, verdicts, id, &run) == 0 ? 0 : -1;

    if (rc == 0)
        alerts_on_run(f->a, run, v);
    cJSON_Delete(run);
    cJSON_Delete(v);
    return rc;
}

/* The alert of id as the store has it (NEW), or NULL. */
static cJSON *alert(struct fixture *f, long long id)
{
    cJSON *a = NULL;

    return store_alert_get(f->t.s, id, &a) == STORE_OK ? a : NULL;
}

/* The id of the one alert run found, or 0 when it found none or more. */
static long long alert_of_run(struct fixture *f, const char *run)
{
    cJSON *list = NULL;
    const cJSON *a;
    long long id = 0;
    int n = 0;

    if (store_alerts_list(f->t.s, 0, 100, &list) != STORE_OK)
        return 0;
    cJSON_ArrayForEach(a, list) {
        const char *by = cJSON_GetStringValue(
            cJSON_GetObjectItem(cJSON_GetObjectItem(a, "runs"), "detected"));
        if (by && strcmp(by, run) == 0) {
            id = (long long)cJSON_GetNumberValue(cJSON_GetObjectItem(a, "id"));
            n++;
        }
    }
    cJSON_Delete(list);
    return n == 1 ? id : 0;
}

static int is_str(const cJSON *obj, const char *name, const char *want)
{
    const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(obj, name));

    return v && strcmp(v, want) == 0;
}

/* Whether obj's raw member name (params: the stored text) is want. */
static int raw_is(const cJSON *obj, const char *name, const char *want)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);

    return v && v->valuestring && strcmp(v->valuestring, want) == 0;
}

/* The runs queued to confirm run: their ids into ids (room for cap);
 * how many (more than cap when one is not the run's own request). */
static int confirming_runs(struct fixture *f, const char *run, char ids[][40], int cap)
{
    struct run_filter filter = {.limit = 100};
    char next[40];
    cJSON *list = NULL;
    const cJSON *r;
    int n = 0;

    if (store_list_runs(f->t.s, &filter, &list, next) != STORE_OK)
        return -1;
    cJSON_ArrayForEach(r, list) {
        if (!is_str(r, "confirms", run) || !is_str(r, "status", "queued"))
            continue;
        /* the same request on the same card */
        if (n < cap && is_str(r, "benchmark", "smem_stride") && raw_is(r, "params", PARAMS) &&
            is_str(cJSON_GetObjectItem(r, "device"), "uuid", TEST_FAKE_UUID(0)))
            snprintf(ids[n], 40, "%s", cJSON_GetStringValue(cJSON_GetObjectItem(r, "id")));
        else
            n = cap; /* one not as it should be: fail the count */
        n++;
    }
    cJSON_Delete(list);
    return n;
}

/* --confirm-runs 2: detected, two confirming runs queued; both end
 * without a verdict (failed), and the alert is cleared naming the last. */
static int check_detect_and_clear(struct fixture *f)
{
    char id[40], confirms[4][40], reason[160];
    cJSON *a = NULL;
    long long aid;
    int ok;

    ASSERT_EQ(on_run(f, SLOWER_AT(2, 1), id), 0);
    aid = alert_of_run(f, id);
    ASSERT(aid > 0);
    a = alert(f, aid);
    ok = a && is_str(a, "state", "detected") && is_str(a, "kind", "history") &&
         is_str(a, "verdict", "slower") &&
         cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "row"), "stride")) == 2;
    cJSON_Delete(a);
    ASSERT(ok);
    ASSERT_EQ(confirming_runs(f, id, confirms, 4), 2);

    /* The first confirming run fails: one is still awaited. */
    alerts_on_unjudged(f->a, confirms[0], "failed");
    a = alert(f, aid);
    ok = a && is_str(a, "state", "detected");
    cJSON_Delete(a);
    ASSERT(ok);

    /* The second too: nothing repeated it, so it is cleared, saying by
     * which run. */
    alerts_on_unjudged(f->a, confirms[1], "failed");
    snprintf(reason, sizeof(reason), "its confirming run %s failed", confirms[1]);
    a = alert(f, aid);
    ok = a && is_str(a, "state", "cleared") && is_str(a, "reason", reason) &&
         is_str(cJSON_GetObjectItem(a, "runs"), "cleared", confirms[1]);
    if (!ok) {
        char *text = cJSON_PrintUnformatted(a);
        fprintf(stderr, "the alert: %s\n", text ? text : "(none)");
        free(text);
    }
    cJSON_Delete(a);
    ASSERT(ok);
    return 0;
}

/* What alert id's webhook column holds ("" for NULL), read beside the
 * store with a connection of the test's own. */
static int webhook_of(sqlite3 *db, long long id, char out[16])
{
    sqlite3_stmt *st = NULL;
    int rc = -1;

    out[0] = '\0';
    if (sqlite3_prepare_v2(db, "SELECT webhook FROM alerts WHERE id = ?1", -1, &st, NULL) !=
        SQLITE_OK)
        goto done;
    sqlite3_bind_int64(st, 1, id);
    if (sqlite3_step(st) != SQLITE_ROW)
        goto done;
    if (sqlite3_column_text(st, 0))
        snprintf(out, 16, "%s", (const char *)sqlite3_column_text(st, 0));
    rc = 0;

done:
    sqlite3_finalize(st);
    return rc;
}

/* Another GPU's runner, in the same instant: when an alert of row
 * stride 2 is stored for this card, a confirmed alert of another card is
 * stored right after it (recursive triggers are off: the inner insert
 * fires nothing). */
static const char race_trigger[] =
    "CREATE TRIGGER another_runner AFTER INSERT ON alerts "
    "WHEN NEW.host = 'unit-host' AND NEW.row_key = '{\"stride\":2}' BEGIN "
    "INSERT INTO alerts (kind, state, host, device_uuid, device_name, benchmark, verdict_key, "
    "row_key, verdict, run_id, confirms_left, detected_at, confirmed_at) VALUES ('history', "
    "'confirmed', 'other-host', 'GPU-other', 'Fake GPU (test double)', 'smem_stride', 'k', "
    "'{\"stride\":2}', 'slower', 'another-run', 0, NEW.detected_at, NEW.detected_at); END";

/* --confirm-runs 0: confirmed when found, nothing queued, and the webhook
 * outcome ("none": there is no webhook) recorded on this run's alert. */
static int check_confirm_at_once(struct fixture *f)
{
    char first[40], second[40], hook[16];
    cJSON *a = NULL, *list = NULL;
    sqlite3 *db = NULL;
    long long older, mine;
    int ok, newer_hook_null, n_unposted;
    long long unposted_id;
    long depth = -1;

    /* An older open alert, of another row (stride 1). */
    ASSERT_EQ(on_run(f, ONLY_SLOWER_AT(1), first), 0);
    older = alert_of_run(f, first);
    ASSERT(older > 0);

    ASSERT_EQ(sqlite3_open(f->t.path, &db), SQLITE_OK);
    sqlite3_busy_timeout(db, 10000);
    ok = sqlite3_exec(db, race_trigger, NULL, NULL, NULL) == SQLITE_OK;
    if (!ok)
        fprintf(stderr, "the trigger: %s\n", sqlite3_errmsg(db));

    if (ok)
        ok = on_run(f, ONLY_SLOWER_AT(2), second) == 0;
    mine = ok ? alert_of_run(f, second) : 0;
    a = mine > 0 ? alert(f, mine) : NULL;
    ok = ok && a && is_str(a, "state", "confirmed") && is_str(a, "kind", "history") &&
         cJSON_IsString(cJSON_GetObjectItem(a, "confirmed_at")) &&
         cJSON_GetNumberValue(cJSON_GetObjectItem(cJSON_GetObjectItem(a, "row"), "stride")) == 2;
    cJSON_Delete(a);
    /* announced: this run's alert and the older one; not the newer one */
    ok = ok && webhook_of(db, mine, hook) == 0 && strcmp(hook, "none") == 0;
    ok = ok && webhook_of(db, older, hook) == 0 && strcmp(hook, "none") == 0;
    a = alert(f, older);
    ok = ok && a && is_str(a, "state", "confirmed"); /* still open */
    cJSON_Delete(a);
    newer_hook_null = webhook_of(db, mine + 1, hook) == 0 && hook[0] == '\0';
    sqlite3_close(db);
    ASSERT(ok);
    ASSERT(newer_hook_null); /* the trigger's alert exists, never announced */

    /* The store's own view: the one confirmed alert not yet posted is the
     * other card's. */
    ASSERT_EQ(store_alerts_unposted(f->t.s, 10, &list), STORE_OK);
    n_unposted = cJSON_GetArraySize(list);
    unposted_id = (long long)cJSON_GetNumberValue(
        cJSON_GetObjectItem(cJSON_GetArrayItem(list, 0), "id"));
    cJSON_Delete(list);
    ASSERT_EQ(n_unposted, 1);
    ASSERT_EQ(unposted_id, mine + 1);

    /* No confirming run at --confirm-runs 0. */
    ASSERT_EQ(store_queue_depth(f->t.s, -1, &depth), STORE_OK);
    ASSERT_EQ(depth, 0);
    return 0;
}

/* A confirming run found the same row slower again: confirmed. */
static int check_repeated(struct fixture *f)
{
    char id[40], confirms[4][40], verdicts[600];
    cJSON *run = NULL, *v = NULL, *a = NULL;
    struct run_job job;
    long long aid;
    int ok;

    ASSERT_EQ(on_run(f, SLOWER_AT(2, 1), id), 0);
    aid = alert_of_run(f, id);
    ASSERT(aid > 0);
    ASSERT_EQ(confirming_runs(f, id, confirms, 4), 2);
    /* The first confirming run, ended done, finds it again. */
    ASSERT_EQ(store_claim_next(f->t.s, 0, &job), STORE_OK);
    ok = strcmp(job.id, confirms[0]) == 0 || strcmp(job.id, confirms[1]) == 0;
    snprintf(verdicts, sizeof(verdicts), "%s", SLOWER_AT(2, 1));
    ok = ok && tmp_finish_run(f->t.s, job.id, "done", RESULTS, META, NULL, NULL, verdicts) ==
                   STORE_OK;
    ok = ok && store_get_run(f->t.s, job.id, &run) == STORE_OK &&
         (v = cJSON_Parse(verdicts)) != NULL;
    if (ok)
        alerts_on_run(f->a, run, v);
    store_job_clear(&job);
    cJSON_Delete(run);
    cJSON_Delete(v);
    ASSERT(ok);
    a = alert(f, aid);
    ok = a && is_str(a, "state", "confirmed") &&
         (is_str(cJSON_GetObjectItem(a, "runs"), "confirmed", confirms[0]) ||
          is_str(cJSON_GetObjectItem(a, "runs"), "confirmed", confirms[1]));
    cJSON_Delete(a);
    ASSERT(ok);
    /* a confirmation queues nothing of its own: the other one is left */
    ASSERT_EQ(confirming_runs(f, id, confirms, 4), 1);
    return 0;
}

/* Runs check on a fresh store and alerts, and stops them whatever the
 * check found. */
static int with_alerts(int confirm_runs, int (*check)(struct fixture *))
{
    struct fixture f;
    int rc = 1;

    if (fixture_start(&f, confirm_runs) == 0)
        rc = check(&f);
    fixture_stop(&f);
    return rc;
}

static int test_detect_and_clear(void)
{
    return with_alerts(2, check_detect_and_clear);
}

static int test_repeated(void)
{
    return with_alerts(2, check_repeated);
}

static int test_confirm_at_once(void)
{
    return with_alerts(0, check_confirm_at_once);
}

TEST_MAIN({"slower: detected, 2 confirming runs; both fail: cleared", test_detect_and_clear},
          {"a confirming run finds it again: confirmed", test_repeated},
          {"--confirm-runs 0: confirmed at once, this alert announced", test_confirm_at_once})
