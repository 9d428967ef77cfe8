/*
 * cmd_show.c - `gpubench show ID`: one run, and the printing of a run that
 * `run --wait` shares.  The lines above the table say what a reader needs
 * to trust the numbers (card, driver, CUDA, when, valid or why not); the
 * tables under them are cli_rows.c's, then a health run's checks against
 * its card model's floors (judged by the daemon, as validity is).
 */
#include "cli.h"
#include "cli_rows.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *cli_json_text(const cJSON *obj, ...)
{
    va_list ap;
    const char *name;

    va_start(ap, obj);
    while ((name = va_arg(ap, const char *)) != NULL)
        obj = cJSON_GetObjectItem(obj, name);
    va_end(ap);
    return cJSON_GetStringValue(obj);
}

static const char *or_else(const char *text, const char *otherwise)
{
    return text ? text : otherwise;
}

/* "no (reason; reason)" from validity.reasons[].message or .code. */
static void print_validity(const cJSON *validity)
{
    const cJSON *valid = cJSON_GetObjectItem(validity, "valid"), *r;
    const char *sep = " (";

    if (!cJSON_IsBool(valid)) {
        printf("valid:   not judged\n");
        return;
    }
    printf("valid:   %s", cJSON_IsTrue(valid) ? "yes" : "no");
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(validity, "reasons")) {
        const char *why = cJSON_GetStringValue(cJSON_GetObjectItem(r, "message"));
        if (why == NULL)
            why = cJSON_GetStringValue(cJSON_GetObjectItem(r, "code"));
        if (why) {
            printf("%s%s", sep, why);
            sep = "; ";
        }
    }
    printf("%s\n", strcmp(sep, "; ") == 0 ? ")" : "");
}

/* A figure and its unit as one cell: 4341.3 GB/s. */
static void unit_cell(struct cli_table *t, const cJSON *v, const char *unit)
{
    char suffix[32];

    if (!cJSON_IsNumber(v)) {
        cli_table_cell(t, "-");
        return;
    }
    snprintf(suffix, sizeof(suffix), " %s", unit ? unit : "");
    cli_table_number(t, v->valuedouble, 5, suffix);
}

/* checks (a run's "checks": null or absent for runs without floors) as a
 * table after an empty line, each result in words so that a failing row
 * reads as one without colour; the floors' sources are long sentences,
 * left to --json. */
static void print_checks(const cJSON *checks, int colour)
{
    struct cli_table *t;
    const cJSON *ch;
    int failed = 0, ceilings = 0;

    if (cJSON_GetArraySize(checks) == 0)
        return;
    if ((t = cli_table_new()) == NULL) {
        fprintf(stderr, "gpubench: out of memory printing the checks\n");
        return;
    }
    cli_table_row(t);
    cli_table_cell(t, "check");
    cli_table_cell(t, "value");
    cJSON_ArrayForEach(ch, checks)
        ceilings |= cJSON_GetObjectItem(ch, "ceiling") != NULL;
    cli_table_cell(t, ceilings ? "floor/ceiling" : "floor");
    cli_table_cell(t, "result");
    cJSON_ArrayForEach(ch, checks) {
        const char *unit = cli_json_text(ch, "unit", NULL);
        const char *message = cli_json_text(ch, "message", NULL);
        const cJSON *pass = cJSON_GetObjectItem(ch, "pass");
        /* a ceiling's check (a count that must stay 0, a temperature under
         * NVML's slowdown threshold: common/expect_deep.h) reads the other
         * way */
        const cJSON *ceiling = cJSON_GetObjectItem(ch, "ceiling");

        cli_table_row(t);
        cli_table_cell(t, "%s", or_else(cli_json_text(ch, "row", NULL), "?"));
        unit_cell(t, cJSON_GetObjectItem(ch, "value"), unit);
        if (ceiling)
            unit_cell(t, ceiling, unit);
        else
            unit_cell(t, cJSON_GetObjectItem(ch, "floor"), unit);
        if (cJSON_IsTrue(pass)) {
            cli_table_cell(t, ceiling ? "pass (<= ceiling)" : "pass (>= floor)");
        } else if (cJSON_IsFalse(pass) && message) {
            cli_table_cell(t, "FAIL: %s", message);
            failed++;
        } else if (cJSON_IsFalse(pass)) {
            cli_table_cell(t, ceiling ? "FAIL (above the ceiling)" : "FAIL (below the floor)");
            failed++;
        } else {
            cli_table_cell(t, "not judged (no floor)");
        }
    }
    printf("\nchecks against the card model's floors%s: %d of %d failed\n",
           ceilings ? " and ceilings" : "", failed,
           cJSON_GetArraySize(checks));
    cli_table_print(stdout, t, colour);
    free(t);
}

/* The history line's rows that moved: " (triad slower, +3.2% time; ...)",
 * the shift being the rows' estimate in log time. */
static void print_moved_rows(const cJSON *rows)
{
    const cJSON *row;
    const char *sep = " (";

    cJSON_ArrayForEach(row, rows) {
        const char *verdict = cli_json_text(row, "verdict", NULL);
        const cJSON *shift = cJSON_GetObjectItem(row, "shift");
        const cJSON *key = cJSON_GetObjectItem(row, "key");
        char name[64];

        if (verdict == NULL || (strcmp(verdict, "slower") != 0 && strcmp(verdict, "faster") != 0))
            continue;
        if (cJSON_IsString(key))
            snprintf(name, sizeof(name), "%s", key->valuestring);
        else if (cJSON_IsNumber(key))
            snprintf(name, sizeof(name), "%g", key->valuedouble);
        else
            snprintf(name, sizeof(name), "a row");
        printf("%s%s %s", sep, name, verdict);
        if (cJSON_IsNumber(shift))
            printf(", %+.1f%% time", 100.0 * (exp(shift->valuedouble) - 1.0));
        sep = "; ";
    }
    if (strcmp(sep, "; ") == 0)
        printf(")");
}

/* A run's verdicts at its end ("verdicts"): a line against its card's
 * history and one against the fleet of its model, each saying when there
 * was too little to judge rather than leaving the line out. */
static void print_verdicts(const cJSON *verdicts)
{
    const cJSON *history = cJSON_GetObjectItem(verdicts, "history");
    const cJSON *fleet = cJSON_GetObjectItem(verdicts, "fleet");
    const cJSON *row;

    if (!cJSON_IsObject(verdicts))
        return;
    if (!cJSON_IsTrue(cJSON_GetObjectItem(verdicts, "judged"))) {
        printf("history: not judged (%s)\n",
               or_else(cli_json_text(verdicts, "reason", NULL), "no reason given"));
        return;
    }
    if (!cJSON_IsObject(history)) {
        printf("history: none (no earlier valid run of this card and request)\n");
    } else {
        int n = cJSON_GetArraySize(cJSON_GetObjectItem(history, "runs"));
        const cJSON *needed = cJSON_GetObjectItem(history, "runs_needed");

        if (cJSON_IsTrue(cJSON_GetObjectItem(history, "too_few_runs")))
            printf("history: too few runs to judge (%d of the %d needed)", n,
                   cJSON_IsNumber(needed) ? needed->valueint : 0);
        else
            printf("history: %s against %d earlier run%s of this card",
                   or_else(cli_json_text(history, "verdict", NULL), "?"), n, n == 1 ? "" : "s");
        print_moved_rows(cJSON_GetObjectItem(history, "rows"));
        printf("\n");
    }
    if (cJSON_IsObject(fleet)) {
        const cJSON *cards = cJSON_GetObjectItem(fleet, "cards");
        const cJSON *needed = cJSON_GetObjectItem(fleet, "cards_needed");
        int n = cJSON_IsNumber(cards) ? cards->valueint : 0;
        const char *sep = ": ";

        if (cJSON_IsTrue(cJSON_GetObjectItem(fleet, "too_few_cards"))) {
            printf("fleet:   too few cards of its model to judge (%d of the %d needed)\n", n,
                   cJSON_IsNumber(needed) ? needed->valueint : 0);
        } else if (cJSON_GetArraySize(cJSON_GetObjectItem(fleet, "outlier_rows")) == 0) {
            printf("fleet:   no outlier among %d cards of its model\n", n);
        } else {
            printf("fleet:   an outlier among %d cards of its model", n);
            cJSON_ArrayForEach(row, cJSON_GetObjectItem(fleet, "rows")) {
                const cJSON *key = cJSON_GetObjectItem(row, "key");
                const cJSON *z = cJSON_GetObjectItem(row, "z");
                if (!cJSON_IsTrue(cJSON_GetObjectItem(row, "outlier")))
                    continue;
                if (cJSON_IsString(key))
                    printf("%s%s", sep, key->valuestring);
                else
                    printf("%s%g", sep, cJSON_IsNumber(key) ? key->valuedouble : 0.0);
                if (cJSON_IsNumber(z))
                    printf(" (z %.1f)", z->valuedouble);
                sep = ", ";
            }
            printf("\n");
        }
    }
}

/* The deep checks' run-level lines (docs/DEEP_CHECKS.md's summaries):
 * what the rows do not say. */
static void print_deep_summary(const char *benchmark, const cJSON *summary)
{
    const cJSON *share = cJSON_GetObjectItem(summary, "sustained_share");
    const char *slow = cli_json_text(summary, "first_slowdown_reason", NULL);
    double v;

    if (benchmark == NULL || !cJSON_IsObject(summary))
        return;
    if (strcmp(benchmark, "known_answer") == 0) {
        printf("checked: %.0f mismatches, %.0f of %.0f SMs covered in %.0f s\n",
               cJSON_GetNumberValue(cJSON_GetObjectItem(summary, "mismatches")),
               cJSON_GetNumberValue(cJSON_GetObjectItem(summary, "sms_covered")),
               cJSON_GetNumberValue(cJSON_GetObjectItem(summary, "sm_count")),
               cJSON_GetNumberValue(cJSON_GetObjectItem(summary, "seconds")));
    } else if (strcmp(benchmark, "memtest") == 0) {
        printf("tested:  %.1f%% of the card's memory (%.0f errors), memcpy ceiling %.0f GB/s, "
               "ECC %s\n",
               100 * cJSON_GetNumberValue(cJSON_GetObjectItem(summary, "share_of_memory")),
               cJSON_GetNumberValue(cJSON_GetObjectItem(summary, "errors")),
               cJSON_GetNumberValue(cJSON_GetObjectItem(summary, "memcpy_gbps")),
               cJSON_IsTrue(cJSON_GetObjectItem(summary, "ecc_increase")) ? "ROSE during the test"
                                                                          : "unchanged");
    } else if (strcmp(benchmark, "soak") == 0) {
        printf("held:    %.0f s;", cJSON_GetNumberValue(cJSON_GetObjectItem(summary, "seconds")));
        for (const char *const *l = (const char *const[]){"gemm", "hbm", NULL}; *l; l++)
            if (!isnan(v = cJSON_GetNumberValue(cJSON_GetObjectItem(share, *l))))
                printf(" %s sustained %.1f%%;", *l, 100 * v);
        v = cJSON_GetNumberValue(cJSON_GetObjectItem(summary, "slowdown_temperature_c"));
        printf(" hottest %.0f C (NVML's slowdown threshold %.0f C); %s\n",
               cJSON_GetNumberValue(cJSON_GetObjectItem(summary, "max_temperature_c")), v,
               slow ? slow : "no slowdown");
    }
}

void cli_print_run(struct cli *c, const cJSON *run)
{
    const char *label = cli_json_text(run, "label", NULL);
    const char *when = cli_json_text(run, "finished_at", NULL);
    const cJSON *results = cJSON_GetObjectItem(run, "results");
    const char *no_pair = cli_json_text(results, "summary", "no_pair", NULL);
    const cJSON *error = cJSON_GetObjectItem(run, "error");

    printf("run:     %s\n", cli_json_text(run, "id", NULL));
    printf("bench:   %s, %s\n", cli_json_text(run, "benchmark", NULL),
           cli_json_text(run, "status", NULL));
    printf("card:    %s (%s) on %s\n", or_else(cli_json_text(run, "device", "name", NULL), "?"),
           or_else(cli_json_text(run, "device", "uuid", NULL), "no uuid"),
           or_else(cli_json_text(run, "host", NULL), "?"));
    printf("driver:  %s, CUDA %s\n",
           or_else(cli_json_text(run, "meta", "driver", "nvidia_version", NULL), "?"),
           or_else(cli_json_text(run, "meta", "cuda", "runtime_version", NULL), "?"));
    printf("date:    %s\n", or_else(when, or_else(cli_json_text(run, "created_at", NULL), "?")));
    if (label && label[0])
        printf("label:   %s\n", label);
    if (cJSON_IsObject(error))
        printf("error:   %s: %s\n", or_else(cli_json_text(error, "code", NULL), "?"),
               or_else(cli_json_text(error, "message", NULL), ""));
    else
        print_validity(cJSON_GetObjectItem(run, "validity"));
    print_verdicts(cJSON_GetObjectItem(run, "verdicts"));
    if (no_pair)
        printf("no rows: %s\n", no_pair);
    print_deep_summary(cli_json_text(run, "benchmark", NULL),
                       cJSON_GetObjectItem(results, "summary"));
    cli_rows_print(stdout, cli_json_text(run, "benchmark", NULL), results, c->colour);
    print_checks(cJSON_GetObjectItem(run, "checks"), c->colour);
}

int cmd_show(struct cli *c)
{
    char path[96];
    cJSON *run;
    int rc;

    if (c->nargs != 1) {
        fprintf(stderr, "gpubench show: expected one run id (gpubench show --help)\n");
        return CLI_ERROR;
    }
    if ((size_t)snprintf(path, sizeof(path), "/runs/%s", c->args[0]) >= sizeof(path) ||
        strpbrk(c->args[0], "/?#%& ") != NULL) {
        fprintf(stderr, "gpubench show: %.60s: not a run id\n", c->args[0]);
        return CLI_ERROR;
    }
    if ((rc = cli_get_json(c, path, &run)) != CLI_OK)
        return rc;
    if (!c->opt.json)
        cli_print_run(c, run);
    cJSON_Delete(run);
    return CLI_OK;
}
