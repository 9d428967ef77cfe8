/*
 * cmd_list.c - the read-only listings: `gpubench runs` (GET /runs with its
 * filters) and `gpubench fleet` (GET /fleet).  Filters go to the daemon
 * as they were typed: the daemon checks them and its refusal is passed on.
 */
#include "cli.h"
#include "cli_table.h"

#include <stdio.h>
#include <stdlib.h>

#define QUERY_CAP 4096

/* GET base with the named options as its query, parsed into *out. */
static int get_filtered(struct cli *c, const char *base, const char *const *names,
                        const char *const *values, int n, cJSON **out)
{
    struct dynbuf path;
    int rc = CLI_ERROR;

    *out = NULL;
    dynbuf_init(&path, QUERY_CAP);
    if (dynbuf_printf(&path, "%s", base) != 0)
        goto done;
    for (int i = 0; i < n; i++)
        if (gb_http_add_query(c->http, &path, names[i], values[i]) != 0) {
            fprintf(stderr, "gpubench: the query is over %d bytes\n", QUERY_CAP);
            goto done;
        }
    rc = cli_get_json(c, path.data, out);
done:
    dynbuf_free(&path);
    return rc;
}

int cmd_runs(struct cli *c)
{
    const char *const names[] = {"benchmark", "status", "valid", "limit"};
    const char *const values[] = {c->opt.benchmark, c->opt.status, c->opt.valid, c->opt.limit};
    struct cli_table *t;
    const cJSON *run;
    cJSON *doc;
    int rc;

    if (c->nargs != 0) {
        fprintf(stderr, "gpubench runs: %s: unexpected (gpubench runs --help)\n", c->args[0]);
        return CLI_ERROR;
    }
    if ((rc = get_filtered(c, "/runs", names, values, 4, &doc)) != CLI_OK || c->opt.json)
        goto done;
    if ((t = cli_table_new()) == NULL) {
        rc = CLI_ERROR;
        goto done;
    }
    cli_table_row(t);
    for (const char *const *h = (const char *const[]){"id", "benchmark", "status", "valid",
                                                      "card", "host", "label", "created", NULL};
         *h; h++)
        cli_table_cell(t, "%s", *h);
    cJSON_ArrayForEach(run, cJSON_GetObjectItem(doc, "runs")) {
        const cJSON *valid = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "valid");
        cli_table_row(t);
        cli_table_json(t, cJSON_GetObjectItem(run, "id"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(run, "benchmark"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(run, "status"), "%g");
        cli_table_cell(t, "%s", cJSON_IsBool(valid) ? (cJSON_IsTrue(valid) ? "yes" : "no") : "-");
        cli_table_json(t, cJSON_GetObjectItem(cJSON_GetObjectItem(run, "device"), "name"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(run, "host"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(run, "label"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(run, "created_at"), "%g");
    }
    cli_table_print(stdout, t, c->colour);
    if (cJSON_IsString(cJSON_GetObjectItem(doc, "next")))
        printf("(more: --limit, or GET %s)\n",
               cJSON_GetStringValue(cJSON_GetObjectItem(doc, "next")));
    free(t);
done:
    cJSON_Delete(doc);
    return rc;
}

int cmd_fleet(struct cli *c)
{
    const char *const names[] = {"benchmark"};
    const char *const values[] = {c->opt.benchmark};
    const cJSON *group, *card, *cell;
    struct cli_table *t = NULL;
    cJSON *doc;
    int rc;

    if (c->nargs != 0) {
        fprintf(stderr, "gpubench fleet: %s: unexpected (gpubench fleet --help)\n", c->args[0]);
        return CLI_ERROR;
    }
    if ((rc = get_filtered(c, "/fleet", names, values, 1, &doc)) != CLI_OK || c->opt.json)
        goto done;
    cJSON_ArrayForEach(group, cJSON_GetObjectItem(doc, "groups")) {
        const cJSON *key = cJSON_GetObjectItem(group, "key");
        char *params = cJSON_PrintUnformatted(cJSON_GetObjectItem(key, "params"));
        printf("%s on %s, params %s\n", cli_json_text(key, "benchmark", NULL),
               cli_json_text(key, "card_model", NULL), params ? params : "?");
        free(params);
        free(t);
        if ((t = cli_table_new()) == NULL) {
            rc = CLI_ERROR;
            goto done;
        }
        cli_table_row(t);
        cli_table_cell(t, "card");
        cli_table_cell(t, "host");
        cli_table_cell(t, "outlier");
        cli_table_cell(t, "median ms by row");
        cJSON_ArrayForEach(card, cJSON_GetObjectItem(group, "cards")) {
            char cells[CLI_TABLE_CELL] = "";
            size_t used = 0;
            cli_table_row(t);
            cli_table_json(t, cJSON_GetObjectItem(card, "device_uuid"), "%g");
            cli_table_json(t, cJSON_GetObjectItem(card, "host"), "%g");
            cli_table_cell(t, "%s",
                           cJSON_IsTrue(cJSON_GetObjectItem(card, "outlier")) ? "OUTLIER" : "-");
            cJSON_ArrayForEach(cell, cJSON_GetObjectItem(card, "rows")) {
                char *k = cJSON_PrintUnformatted(cJSON_GetObjectItem(cell, "key"));
                const cJSON *v = cJSON_GetObjectItem(cell, "value_ms");
                if (used < sizeof(cells))
                    used += (size_t)snprintf(cells + used, sizeof(cells) - used, "%s%s:%.4g",
                                             used ? " " : "", k ? k : "?",
                                             cJSON_IsNumber(v) ? v->valuedouble : 0.0);
                free(k);
            }
            cli_table_cell(t, "%s", cells);
        }
        cli_table_print(stdout, t, c->colour);
        putchar('\n');
    }
    if (cJSON_GetArraySize(cJSON_GetObjectItem(doc, "groups")) == 0)
        printf("no cards with done, valid runs yet\n");
done:
    free(t);
    cJSON_Delete(doc);
    return rc;
}
