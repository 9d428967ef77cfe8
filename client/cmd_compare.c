/*
 * cmd_compare.c - `gpubench compare`: GET /compare with baseline= and
 * candidate=, the rows' verdicts as a table, and the exit status (cli.h)
 * so a CI job can gate on it: 1 when a row is slower; else 2 when a row
 * could still be slower than the margin (inconclusive, its interval
 * reaching above +margin: gb_shift_could_be_slower, common/shift.h);
 * else 0.  A gate stops regressions: a faster row, or an inconclusive one
 * that can only be faster or within the margin, is not one (a
 * row entirely faster failed CI jobs).  Groups that cannot be compared
 * (different parameters, driver, card model, or nothing valid on one
 * side) exit 2: nothing was shown to be the same.
 */
#include "cli.h"
#include "cli_table.h"
#include "shift.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUERY_CAP 8192

/* A row's verdict as shift.h's enum (an unknown word as inconclusive). */
static enum gb_verdict row_verdict(const cJSON *row)
{
    static const enum gb_verdict all[] = {GB_SAME, GB_FASTER, GB_INCONCLUSIVE, GB_SLOWER};
    const char *word = cli_json_text(row, "verdict", NULL);

    for (size_t i = 0; word && i < sizeof(all) / sizeof(all[0]); i++)
        if (strcmp(word, gb_verdict_name(all[i])) == 0)
            return all[i];
    return GB_INCONCLUSIVE;
}

/* The exit status of a comparison (see the top of the file); *open gets
 * how many rows could still be slower. */
static int exit_for(const cJSON *doc, int *open)
{
    const cJSON *hi, *row, *margin = cJSON_GetObjectItem(doc, "margin");
    int slower = 0;

    *open = 0;
    if (cli_json_text(doc, "verdict", NULL) == NULL || !cJSON_IsNumber(margin))
        return CLI_INCONCLUSIVE; /* null: not comparable, or nothing judged */
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(doc, "rows")) {
        enum gb_verdict v = row_verdict(row);
        hi = cJSON_GetObjectItem(row, "ci_high");
        slower += v == GB_SLOWER;
        *open += gb_shift_could_be_slower(v, cJSON_IsNumber(hi) ? hi->valuedouble : NAN,
                                          margin->valuedouble);
    }
    return slower ? CLI_FAILED : *open ? CLI_INCONCLUSIVE
                                       : CLI_OK;
}

/* What more samples would do for an inconclusive row, in a few words. */
static void more_cell(struct cli_table *t, const cJSON *row)
{
    const cJSON *more = cJSON_GetObjectItem(row, "more_samples");
    const char *why = cli_json_text(row, "undecidable", NULL);

    if (cJSON_IsNumber(more))
        cli_table_cell(t, "~%.0f a group", more->valuedouble);
    else if (why != NULL)
        cli_table_cell(t, "%s", why);
    else
        cli_table_cell(t, "-");
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
        /* a run of the selection not judged, named with why */
        cJSON_ArrayForEach(d, cJSON_GetObjectItem(g, "left_out"))
            printf("  left out: %s (%s)\n",
                   cli_json_text(d, "run_id", NULL) ? cli_json_text(d, "run_id", NULL) : "?",
                   cli_json_text(d, "reason", NULL) ? cli_json_text(d, "reason", NULL) : "?");
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
    cli_table_cell(t, "more samples");
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
            /* fractions of the baseline's time already (shift.h) */
            cli_table_cell(t, "%+.2f%%", 100 * s->valuedouble);
            cli_table_cell(t, "%+.2f%% .. %+.2f%%", 100 * lo->valuedouble,
                           100 * hi->valuedouble);
        } else {
            cli_table_cell(t, "-");
            cli_table_cell(t, "-");
        }
        cli_table_cell(t, "%d vs %d", cJSON_IsNumber(nb) ? nb->valueint : 0,
                       cJSON_IsNumber(nc) ? nc->valueint : 0);
        more_cell(t, row);
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
    int rc = CLI_ERROR, open = 0;

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
    rc = exit_for(doc, &open);
    if (!c->opt.json) {
        print_comparison(c, doc);
        printf("\nverdict: %s (margin %g)\n", verdict ? verdict : "none",
               cJSON_GetNumberValue(cJSON_GetObjectItem(doc, "margin")));
        if (verdict && rc != CLI_FAILED)
            printf(open ? "%d row(s) could still be slower by more than the margin\n"
                        : "no row can be slower by more than the margin\n",
                   open);
    }
done:
    cJSON_Delete(doc);
    dynbuf_free(&path);
    return rc;
}
