/*
 * cmd_list.c - the read-only listings: `gpubench runs` (GET /runs with its
 * filters) and `gpubench fleet` (GET /fleet).  Filters go to the daemon
 * as they were typed: the daemon checks them and its refusal is passed on.
 *
 * Cards are named as the page names them (web/lib/format.js uuidTag): the
 * model, and where several cards of one model are listed, a tag of the
 * UUID's first 8 and last 4 characters (fa5dc635…9d3d).  fleet prints a
 * group's cards as columns, CARDS_PER_TABLE to a table, so that no line
 * grows with the fleet.
 */
#include "cli.h"
#include "cli_table.h"
#include "json_items.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define QUERY_CAP 4096
#define CARDS_PER_TABLE 6
#define TAG_CAP 24

/* The page's uuidTag: "GPU-fa5dc635-...-c1422c4b9d3d" is "fa5dc635…9d3d". */
static const char *uuid_tag(const char *uuid, char out[TAG_CAP])
{
    size_t n;

    if (uuid == NULL)
        return "?";
    if (strncmp(uuid, "GPU-", 4) == 0)
        uuid += 4;
    n = strlen(uuid);
    if (n <= 12)
        snprintf(out, TAG_CAP, "%s", uuid);
    else
        snprintf(out, TAG_CAP, "%.8s…%s", uuid, uuid + n - 4);
    return out;
}

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

/* Whether runs hold more than one card (UUID) of the model name. */
static int shared_model(const cJSON *runs, const char *name)
{
    const char *first = NULL;
    const cJSON *run;

    cJSON_ArrayForEach(run, runs) {
        const char *model = cli_json_text(run, "device", "name", NULL);
        const char *uuid = cli_json_text(run, "device", "uuid", NULL);
        if (model == NULL || uuid == NULL || strcmp(model, name) != 0)
            continue;
        if (first == NULL)
            first = uuid;
        else if (strcmp(first, uuid) != 0)
            return 1;
    }
    return 0;
}

/* "NVIDIA H200 #1 (fa5dc635…9d3d)" as the page's runs list has it. */
static void card_cell(struct cli_table *t, const cJSON *runs, const cJSON *run)
{
    const char *name = cli_json_text(run, "device", "name", NULL);
    const char *uuid = cli_json_text(run, "device", "uuid", NULL);
    const cJSON *index = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "device"), "index");
    char num[24] = "", tag[TAG_CAP + 4] = "", buf[TAG_CAP];

    if (cJSON_GetObjectItem(run, "device") == NULL) {
        cli_table_cell(t, "-");
        return;
    }
    if (cJSON_IsNumber(index))
        snprintf(num, sizeof(num), " #%d", index->valueint);
    if (name && uuid && shared_model(runs, name))
        snprintf(tag, sizeof(tag), " (%s)", uuid_tag(uuid, buf));
    cli_table_cell(t, "%s%s%s", name ? name : "?", num, tag);
}

int cmd_runs(struct cli *c)
{
    /* GET /runs's filters, then its page size. */
    const char *const names[] = {"benchmark", "device", "host", "label",
                                 "status", "batch", "valid", "limit"};
    const char *const values[] = {c->opt.benchmark, c->opt.device, c->opt.host, c->opt.label,
                                  c->opt.status, c->opt.batch, c->opt.valid, c->opt.limit};
    struct cli_table *t;
    const cJSON *run, *runs;
    cJSON *doc;
    const int n = (int)(sizeof(names) / sizeof(names[0]));
    int rc, filtered = 0;

    if (c->nargs != 0) {
        fprintf(stderr, "gpubench runs: %s: unexpected (gpubench runs --help)\n", c->args[0]);
        return CLI_ERROR;
    }
    for (int i = 0; i < n - 1; i++)
        filtered |= values[i] != NULL;
    if ((rc = get_filtered(c, "/runs", names, values, n, &doc)) != CLI_OK || c->opt.json)
        goto done;
    if ((t = cli_table_new()) == NULL) {
        rc = CLI_ERROR;
        goto done;
    }
    runs = cJSON_GetObjectItem(doc, "runs");
    cli_table_row(t);
    for (const char *const *h = (const char *const[]){"id", "benchmark", "status", "valid",
                                                      "card", "host", "label", "created", NULL};
         *h; h++)
        cli_table_cell(t, "%s", *h);
    cJSON_ArrayForEach(run, runs) {
        const cJSON *valid = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "valid");
        cli_table_row(t);
        cli_table_json(t, cJSON_GetObjectItem(run, "id"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(run, "benchmark"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(run, "status"), "%g");
        cli_table_cell(t, "%s", cJSON_IsBool(valid) ? (cJSON_IsTrue(valid) ? "yes" : "no") : "-");
        card_cell(t, runs, run);
        cli_table_json(t, cJSON_GetObjectItem(run, "host"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(run, "label"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(run, "created_at"), "%g");
    }
    if (cJSON_GetArraySize(runs) > 0)
        cli_table_print(stdout, t, c->colour);
    else if (filtered)
        printf("no runs match these filters\n");
    else
        printf("no runs yet\n");
    if (cJSON_IsString(cJSON_GetObjectItem(doc, "next")))
        printf("(more: --limit, or GET %s)\n",
               cJSON_GetStringValue(cJSON_GetObjectItem(doc, "next")));
    free(t);
done:
    cJSON_Delete(doc);
    return rc;
}

/* The card's value of the row whose key is key, or NULL. */
static const cJSON *card_row(const cJSON *card, const cJSON *key)
{
    const cJSON *row;

    cJSON_ArrayForEach(row, cJSON_GetObjectItem(card, "rows")) {
        if (cJSON_Compare(cJSON_GetObjectItem(row, "key"), key, 1))
            return row;
    }
    return NULL;
}

/* A group's cards from the first-th, at most CARDS_PER_TABLE: a line
 * each (tag, UUID, host, run, outlier), then the median time of every row,
 * the fleet's and each card's; a row that is an outlier is marked "*". */
static int print_cards(struct cli *c, const cJSON *group, int first, int *marked)
{
    const cJSON *cards = cJSON_GetObjectItem(group, "cards"), *row, *card;
    int all, n;
    /* the cards indexed in three loops: an array of pointers, built once */
    const cJSON **items = json_items(cards, &all);
    struct cli_table *t = all >= 0 ? cli_table_new() : NULL;
    char tag[TAG_CAP];

    n = all - first;
    if (t == NULL) {
        free(items);
        return CLI_ERROR;
    }
    if (n > CARDS_PER_TABLE)
        n = CARDS_PER_TABLE;
    cli_table_row(t);
    for (const char *const *h = (const char *const[]){"card", "uuid", "host", "run", "outlier",
                                                      NULL};
         *h; h++)
        cli_table_cell(t, "%s", *h);
    for (int i = first; i < first + n; i++) {
        card = items[i];
        cli_table_row(t);
        cli_table_cell(t, "%s", uuid_tag(cli_json_text(card, "device_uuid", NULL), tag));
        cli_table_json(t, cJSON_GetObjectItem(card, "device_uuid"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(card, "host"), "%g");
        cli_table_json(t, cJSON_GetObjectItem(card, "run_id"), "%g");
        cli_table_cell(t, "%s",
                       cJSON_IsTrue(cJSON_GetObjectItem(card, "outlier")) ? "OUTLIER" : "-");
    }
    cli_table_print(stdout, t, c->colour);
    putchar('\n');
    free(t);
    if ((t = cli_table_new()) == NULL) {
        free(items);
        return CLI_ERROR;
    }
    cli_table_row(t);
    cli_table_cell(t, "median ms");
    cli_table_cell(t, "fleet");
    for (int i = first; i < first + n; i++)
        cli_table_cell(t, "%s",
                       uuid_tag(cli_json_text(items[i], "device_uuid", NULL),
                                tag));
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(group, "rows")) {
        const cJSON *key = cJSON_GetObjectItem(row, "key");
        const cJSON *median = cJSON_GetObjectItem(row, "median_ms");
        cli_table_row(t);
        cli_table_json(t, key, "%g");
        if (cJSON_IsNumber(median))
            cli_table_number(t, median->valuedouble, 4, "");
        else
            cli_table_cell(t, "-");
        for (int i = first; i < first + n; i++) {
            const cJSON *cell = card_row(items[i], key);
            const cJSON *v = cJSON_GetObjectItem(cell, "value_ms");
            int out = cJSON_IsTrue(cJSON_GetObjectItem(cell, "outlier"));
            *marked |= out;
            if (cJSON_IsNumber(v))
                cli_table_number(t, v->valuedouble, 4, out ? " *" : "");
            else
                cli_table_cell(t, "-");
        }
    }
    cli_table_print(stdout, t, c->colour);
    free(t);
    free(items);
    return CLI_OK;
}

int cmd_fleet(struct cli *c)
{
    const char *const names[] = {"benchmark"};
    const char *const values[] = {c->opt.benchmark};
    const cJSON *group;
    cJSON *doc = NULL;
    int rc, marked = 0;

    if (c->nargs != 0) {
        fprintf(stderr, "gpubench fleet: %s: unexpected (gpubench fleet --help)\n", c->args[0]);
        return CLI_ERROR;
    }
    if (c->opt.benchmark == NULL || c->opt.benchmark[0] == '\0') {
        fprintf(stderr, "gpubench fleet: --benchmark NAME is required: the benchmark whose "
                        "cards to set side by side (gpubench fleet --help)\n");
        return CLI_ERROR;
    }
    if ((rc = get_filtered(c, "/fleet", names, values, 1, &doc)) != CLI_OK || c->opt.json)
        goto done;
    cJSON_ArrayForEach(group, cJSON_GetObjectItem(doc, "groups")) {
        const cJSON *key = cJSON_GetObjectItem(group, "key");
        char *params = cJSON_PrintUnformatted(cJSON_GetObjectItem(key, "params"));
        char *method = cJSON_PrintUnformatted(cJSON_GetObjectItem(key, "method"));
        const char *note = cli_json_text(group, "method_note", NULL);
        int ncards = cJSON_GetArraySize(cJSON_GetObjectItem(group, "cards"));
        /* the method: cards of another are another group (README, Fleet) */
        printf("%s on %s, method %s, params %s\n", cli_json_text(key, "benchmark", NULL),
               cli_json_text(key, "card_model", NULL), method ? method : "?",
               params ? params : "?");
        if (note)
            printf("%s\n", note);
        free(params);
        free(method);
        if (cJSON_IsTrue(cJSON_GetObjectItem(group, "too_few_cards")))
            printf("too few cards: %d, %d needed; nothing is judged and nobody flagged\n", ncards,
                   (int)cJSON_GetNumberValue(cJSON_GetObjectItem(group, "cards_needed")));
        for (int first = 0; first < ncards && rc == CLI_OK; first += CARDS_PER_TABLE) {
            putchar('\n');
            rc = print_cards(c, group, first, &marked);
        }
        putchar('\n');
    }
    if (rc != CLI_OK)
        fprintf(stderr, "gpubench: out of memory\n");
    if (marked)
        printf("* an outlier: its robust z is beyond %g (the card's run against the fleet's "
               "median)\n",
               cJSON_IsNumber(cJSON_GetObjectItem(doc, "outlier_z"))
                   ? cJSON_GetObjectItem(doc, "outlier_z")->valuedouble
                   : 0.0);
    if (cJSON_GetArraySize(cJSON_GetObjectItem(doc, "groups")) == 0)
        printf("no cards with done, valid runs yet\n");
done:
    cJSON_Delete(doc);
    return rc;
}
