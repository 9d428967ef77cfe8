/*
 * cmd_compare.c - `gpubench compare`: GET /compare with baseline= and
 * candidate=, the rows' verdicts as a table, and the run-level verdict as
 * the exit status (cli.h) so a CI job can gate on it.  "faster" exits 0:
 * a gate stops regressions, and a faster candidate is not one (the verdict
 * is still printed).  Groups that cannot be compared (different
 * parameters, driver, card model, or nothing valid on one side) exit 2
 * like an inconclusive verdict: nothing was shown to be the same.
 */
#include "cli.h"
#include "cli_table.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUERY_CAP 8192

/* The run-level verdict and the exit status it gives. */
static const struct {
    const char *verdict;
    int exit_code;
} verdict_exits[] = {
    {"same", CLI_OK},
    {"faster", CLI_OK},
    {"slower", CLI_FAILED},
    {"inconclusive", CLI_INCONCLUSIVE},
};

static int exit_for(const char *verdict)
{
    for (size_t i = 0; verdict && i < sizeof(verdict_exits) / sizeof(verdict_exits[0]); i++)
        if (strcmp(verdict, verdict_exits[i].verdict) == 0)
            return verdict_exits[i].exit_code;
    return CLI_INCONCLUSIVE; /* null: not comparable, or nothing judged */
}

static void print_comparison(struct cli *c, const cJSON *doc)
{
    const char *key = cli_json_text(doc, "key", NULL);
    const cJSON *row, *d;
    struct cli_table *t;

    for (int side = 0; side < 2; side++) {
        const cJSON *g = cJSON_GetObjectItem(doc, side ? "candidate" : "baseline");
        const cJSON *n = cJSON_GetObjectItem(g, "n_runs");
        printf("%-10s %s: %d runs\n", side ? "candidate" : "baseline",
               cli_json_text(g, "selector", NULL) ? cli_json_text(g, "selector", NULL) : "?",
               cJSON_IsNumber(n) ? n->valueint : 0);
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItem(doc, "comparable"))) {
        printf("not comparable: %s\n", cli_json_text(doc, "reason", NULL)
                                           ? cli_json_text(doc, "reason", NULL)
                                           : "the groups differ in");
        cJSON_ArrayForEach(d, cJSON_GetObjectItem(doc, "differences")) {
            char *text = cJSON_PrintUnformatted(d);
            printf("  %s\n", text ? text : "?");
            free(text);
        }
        return;
    }
    if ((t = cli_table_new()) == NULL)
        return;
    /* the shifts are of times per this unit, not per sample */
    printf("times compared per %s\n", cli_json_text(doc, "time_per", NULL)
                                          ? cli_json_text(doc, "time_per", NULL)
                                          : "sample");
    cli_table_row(t);
    cli_table_cell(t, "%s", key ? key : "row");
    cli_table_cell(t, "verdict");
    cli_table_cell(t, "shift");
    cli_table_cell(t, "95%% interval");
    cli_table_cell(t, "samples");
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(doc, "rows")) {
        const cJSON *s = cJSON_GetObjectItem(row, "shift");
        const cJSON *lo = cJSON_GetObjectItem(row, "ci_low");
        const cJSON *hi = cJSON_GetObjectItem(row, "ci_high");
        const cJSON *nb = cJSON_GetObjectItem(row, "n_baseline");
        const cJSON *nc = cJSON_GetObjectItem(row, "n_candidate");
        cli_table_row(t);
        cli_table_json(t, cJSON_GetObjectItem(row, "key"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(row, "verdict"), "%g");
        if (cJSON_IsNumber(s) && cJSON_IsNumber(lo) && cJSON_IsNumber(hi)) {
            /* the daemon's shift is of log time: as a change of time */
            cli_table_cell(t, "%+.2f%%", 100 * expm1(s->valuedouble));
            cli_table_cell(t, "%+.2f%% .. %+.2f%%", 100 * expm1(lo->valuedouble),
                           100 * expm1(hi->valuedouble));
        } else {
            cli_table_cell(t, "-");
            cli_table_cell(t, "-");
        }
        cli_table_cell(t, "%d vs %d", cJSON_IsNumber(nb) ? nb->valueint : 0,
                       cJSON_IsNumber(nc) ? nc->valueint : 0);
    }
    putchar('\n');
    cli_table_print(stdout, t, c->colour);
    free(t);
}

int cmd_compare(struct cli *c)
{
    const char *const names[] = {"benchmark", "baseline", "candidate", "margin", "since",
                                 "until"};
    const char *const values[] = {c->opt.benchmark, c->opt.baseline, c->opt.candidate,
                                  c->opt.margin, c->opt.since, c->opt.until};
    const char *verdict;
    struct dynbuf path;
    cJSON *doc = NULL;
    int rc = CLI_ERROR;

    if (c->nargs != 0 || c->opt.baseline == NULL || c->opt.candidate == NULL) {
        fprintf(stderr, "gpubench compare: needs --baseline SEL and --candidate SEL and no "
                        "other arguments (gpubench compare --help)\n");
        return CLI_ERROR;
    }
    dynbuf_init(&path, QUERY_CAP);
    if (dynbuf_printf(&path, "/compare") != 0)
        goto done;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
        if (gb_http_add_query(c->http, &path, names[i], values[i]) != 0) {
            fprintf(stderr, "gpubench compare: the query is over %d bytes\n", QUERY_CAP);
            goto done;
        }
    if ((rc = cli_get_json(c, path.data, &doc)) != CLI_OK)
        goto done;
    verdict = cli_json_text(doc, "verdict", NULL);
    if (!c->opt.json) {
        print_comparison(c, doc);
        printf("\nverdict: %s (margin %g)\n", verdict ? verdict : "none",
               cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "margin")));
    }
    rc = exit_for(verdict);
done:
    cJSON_Delete(doc);
    dynbuf_free(&path);
    return rc;
}
