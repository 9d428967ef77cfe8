/*
 * change_sql.c - see change_sql.h.  The series state is stepped inside
 * the statement that writes it (an upsert of change_series), so a run's
 * step and its write are one, in the transaction that stores the run: two
 * writers can never step one series from the same state, and a crash
 * between the run and its series cannot happen.  The step is bounded
 * (CP_WINDOW points, CS_DAYS daily sums): this is the one judgement made
 * under the writer's lock, and it costs microseconds.
 */
#include "change_sql.h"

#include "change_series.h"
#include "json_build.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* gb_change_step(state, t_days, x, run_id): the state (NULL: a new
 * series; a blob this build cannot read starts afresh) with the run
 * stepped in, as a blob; NULL when an argument is missing. */
static void step_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct change_series *s = malloc(sizeof(*s));
    unsigned char *out = malloc(sizeof(*s) + 64);
    const char *run_id = (const char *)sqlite3_value_text(argv[3]);
    struct cs_found found;
    size_t len = 0;

    (void)argc;
    if (s == NULL || out == NULL) {
        sqlite3_result_error_nomem(ctx);
        goto done;
    }
    if (sqlite3_value_type(argv[0]) != SQLITE_BLOB ||
        change_series_decode(s, sqlite3_value_blob(argv[0]),
                             (size_t)sqlite3_value_bytes(argv[0])) != 0)
        memset(s, 0, sizeof(*s));
    if (run_id == NULL || sqlite3_value_type(argv[1]) == SQLITE_NULL ||
        sqlite3_value_type(argv[2]) == SQLITE_NULL ||
        change_series_step(s, sqlite3_value_double(argv[1]), sqlite3_value_double(argv[2]),
                           run_id, &found) != 0 ||
        change_series_encode(s, out, sizeof(*s) + 64, &len) != 0) {
        sqlite3_result_null(ctx);
        goto done;
    }
    sqlite3_result_blob(ctx, out, (int)len, free);
    out = NULL;

done:
    free(out);
    free(s);
}

cJSON *change_found_json(const struct cs_found *f)
{
    struct json_build b = {0};
    cJSON *out = jb_new_object(&b);

    if (f->step) {
        cJSON *s = jb_object(&b, out, "step");
        jb_string(&b, s, "run_id", f->step_run_id);
        jb_number_or_null(&b, s, "level_before", exp(f->s.mean_before));
        jb_number_or_null(&b, s, "level_after", exp(f->s.mean_after));
        jb_number_or_null(&b, s, "shift", f->s.shift);
        jb_number_or_null(&b, s, "ci_low", f->s.ci_low);
        jb_number_or_null(&b, s, "ci_high", f->s.ci_high);
        jb_number_or_null(&b, s, "p_value", f->s.p_value);
        jb_number(&b, s, "n_before", f->n_before);
        jb_number(&b, s, "n_after", f->n_after);
    }
    if (f->drift) {
        cJSON *d = jb_object(&b, out, "drift");
        jb_number_or_null(&b, d, "per_month", f->d.per_month);
        jb_number_or_null(&b, d, "ci_low", f->d.ci_low);
        jb_number_or_null(&b, d, "ci_high", f->d.ci_high);
        jb_number_or_null(&b, d, "p_value", f->d.p_value);
        jb_number(&b, d, "n", f->d.n);
        jb_number(&b, d, "span_days", f->d.span_days);
        jb_number(&b, d, "window_days", f->d.window_days);
    }
    if (jb_failed(&b)) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

/* gb_change_found(state): what its last step found as JSON text
 * ({"step": {...}, "drift": {...}}, either absent), or NULL for nothing. */
static void found_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
    struct change_series *s = malloc(sizeof(*s));
    cJSON *found = NULL;
    char *text = NULL;

    (void)argc;
    if (s == NULL) {
        sqlite3_result_error_nomem(ctx);
        return;
    }
    size_t len = (size_t)sqlite3_value_bytes(argv[0]);
    if (sqlite3_value_type(argv[0]) == SQLITE_BLOB &&
        change_series_decode(s, sqlite3_value_blob(argv[0]), len) == 0 &&
        (s->last.step || s->last.drift)) {
        if ((found = change_found_json(&s->last)) == NULL ||
            (text = cJSON_PrintUnformatted(found)) == NULL) {
            sqlite3_result_error_nomem(ctx);
            goto done;
        }
    }
    if (text) {
        sqlite3_result_text(ctx, text, -1, free);
        text = NULL;
    } else {
        sqlite3_result_null(ctx);
    }

done:
    cJSON_Delete(found);
    free(s);
}

int change_sql_functions(sqlite3 *db)
{
    const int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC;

    return sqlite3_create_function(db, "gb_change_step", 4, flags, NULL, step_fn, NULL, NULL) !=
                       SQLITE_OK ||
                   sqlite3_create_function(db, "gb_change_found", 1, flags, NULL, found_fn, NULL,
                                           NULL) != SQLITE_OK
               ? -1
               : 0;
}
