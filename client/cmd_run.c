/*
 * cmd_run.c - `gpubench run BENCHMARK`: the request made from the options
 * (POST /runs), then, with --wait, each run followed to its end through
 * GET /runs/ID?wait=S (the daemon answers at once when the run ends, else
 * after S seconds, so no busy polling) and printed.  On a terminal a
 * progress line per run is redrawn in place: its place in the queue, then
 * the worker's samples and its progress.message (why it waits).
 */
#include "cli.h"
#include "json_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_RUNS 64 /* a batch: one run per GPU, or a suite */
#define BAR_WIDTH 30
#define LINE_CAP 160
#define WAIT_TTY "0.5"  /* seconds a poll may wait: the bar moves twice a second */
#define WAIT_PLAIN "10" /* without a bar nothing is drawn in between */

/* "1,2,32" as a NEW array of whole numbers; NULL said on stderr, or
 * (out of memory) failed in jb. */
static cJSON *parse_strides(struct json_build *jb, const char *text)
{
    cJSON *arr = jb_new_array(jb);
    const char *p = text;

    while (arr && *p && !jb_failed(jb)) {
        char *end;
        long v = strtol(p, &end, 10);
        if (end == p || (*end != ',' && *end != '\0')) {
            fprintf(stderr, "gpubench run: --strides %s: expected whole numbers, "
                            "comma-separated (1,2,32)\n",
                    text);
            cJSON_Delete(arr);
            return NULL;
        }
        jb_push(jb, arr, cJSON_CreateNumber((double)v));
        p = *end ? end + 1 : end;
    }
    return arr;
}

/* The request body of the options, a NEW object; NULL said. */
static cJSON *make_request(struct cli *c)
{
    struct json_build jb = {0};
    cJSON *req = jb_new_object(&jb), *params = jb_new_object(&jb), *v;
    const char *dev = c->opt.device;

    jb_string(&jb, req, "benchmark", c->args[0]);
    if (c->opt.strides && !jb_failed(&jb)) {
        if ((v = parse_strides(&jb, c->opt.strides)) == NULL && !jb_failed(&jb))
            goto fail; /* said */
        jb_item(&jb, params, "strides", v);
    }
    for (int i = 0; i < c->opt.param_count; i++) {
        const char *eq = strchr(c->opt.params[i], '=');
        char key[64];
        snprintf(key, sizeof(key), "%.*s", (int)(eq - c->opt.params[i]), c->opt.params[i]);
        /* 3, [1,2], true: JSON; anything else (a variant's name) a string */
        if ((v = cJSON_Parse(eq + 1)) == NULL)
            v = cJSON_CreateString(eq + 1);
        cJSON_DeleteItemFromObject(params, key);
        jb_item(&jb, params, key, v);
    }
    jb_item(&jb, req, "params", params); /* req's now, or deleted */
    params = NULL;
    if (dev && dev[0] && strspn(dev, "0123456789") == strlen(dev))
        jb_number(&jb, req, "device", atof(dev));
    else if (dev)
        jb_string(&jb, req, "device", dev);
    if (c->opt.label)
        jb_string(&jb, req, "label", c->opt.label);
    if (!jb_failed(&jb))
        return req;
    fprintf(stderr, "gpubench run: out of memory making the request\n");
fail:
    cJSON_Delete(params);
    cJSON_Delete(req);
    return NULL;
}

static int is_final(const char *status)
{
    return status && (strcmp(status, "done") == 0 || strcmp(status, "failed") == 0 ||
                      strcmp(status, "cancelled") == 0);
}

/* One run's progress line into line[LINE_CAP]. */
static void progress_line(const cJSON *run, char *line)
{
    const char *id = cli_json_text(run, "id", NULL), *status = cli_json_text(run, "status", NULL);
    const cJSON *p = cJSON_GetObjectItem(run, "progress");
    const cJSON *pos = cJSON_GetObjectItem(run, "queue_position");
    const char *msg = cli_json_text(p, "message", NULL);
    double done = cJSON_GetNumberValue(cJSON_GetObjectItem(p, "done"));
    double total = cJSON_GetNumberValue(cJSON_GetObjectItem(p, "total"));
    char bar[BAR_WIDTH + 1];
    int filled;

    if (status && strcmp(status, "queued") == 0) {
        snprintf(line, LINE_CAP, "%.8s queued, position %d", id ? id : "?",
                 cJSON_IsNumber(pos) ? pos->valueint : 0);
        return;
    }
    if (is_final(status) || !(total > 0)) {
        snprintf(line, LINE_CAP, "%.8s %s%s%.100s", id ? id : "?", status ? status : "?",
                 msg ? ": " : "", msg ? msg : "");
        return;
    }
    filled = (int)(BAR_WIDTH * (done / total));
    if (filled > BAR_WIDTH)
        filled = BAR_WIDTH;
    memset(bar, '#', (size_t)filled);
    memset(bar + filled, '-', (size_t)(BAR_WIDTH - filled));
    bar[BAR_WIDTH] = '\0';
    snprintf(line, LINE_CAP, "%.8s [%s] %.0f/%.0f%s%.80s", id ? id : "?", bar, done, total,
             msg ? " " : "", msg ? msg : "");
}

/* Redraws the n progress lines in place (the cursor sits below them). */
static void draw(struct cli *c, cJSON *const *runs, int n, int drawn_before)
{
    char line[LINE_CAP];

    if (!c->tty)
        return;
    if (drawn_before)
        printf("\033[%dA", n);
    for (int i = 0; i < n; i++) {
        progress_line(runs[i], line);
        printf("\r\033[K%s%s%s\n", c->colour ? "\033[36m" : "", line, c->colour ? "\033[0m" : "");
    }
    fflush(stdout);
}

/* Follows the runs to their ends, then prints them; the exit status. */
static int follow(struct cli *c, cJSON **runs, int n)
{
    int pending = n, failed = 0;
    char path[128];

    draw(c, runs, n, 0);
    while (pending > 0) {
        pending = 0;
        for (int i = 0; i < n; i++) {
            cJSON *now;
            if (is_final(cli_json_text(runs[i], "status", NULL)))
                continue;
            snprintf(path, sizeof(path), "/runs/%.40s?wait=%s",
                     cli_json_text(runs[i], "id", NULL), c->tty ? WAIT_TTY : WAIT_PLAIN);
            if (cli_request_json(c, "GET", path, NULL, 0, 0, &now) != CLI_OK)
                return CLI_ERROR;
            cJSON_Delete(runs[i]);
            runs[i] = now;
            pending += !is_final(cli_json_text(now, "status", NULL));
        }
        draw(c, runs, n, 1);
    }
    for (int i = 0; i < n; i++) {
        failed |= strcmp(cli_json_text(runs[i], "status", NULL), "done") != 0;
        if (c->opt.json) {
            char *text = cJSON_PrintUnformatted(runs[i]);
            printf("%s\n", text ? text : "null");
            free(text);
        } else {
            putchar('\n');
            cli_print_run(c, runs[i]);
        }
    }
    return failed ? CLI_FAILED : CLI_OK;
}

/* A suite's members the node cannot run, said before its runs. */
static void say_left_out(const struct cli *c, const cJSON *left_out)
{
    const cJSON *l;

    cJSON_ArrayForEach(l, left_out) {
        const char *name = cli_json_text(l, "benchmark", NULL);
        const char *why = cli_json_text(l, "reason", NULL);
        if (!c->opt.json)
            fprintf(stderr, "left out: %s (%s)\n", name ? name : "?", why ? why : "");
    }
}

int cmd_run(struct cli *c)
{
    cJSON *req = NULL, *answer = NULL, *runs[MAX_RUNS], *list;
    char *body = NULL;
    int n = 0, rc = CLI_ERROR;

    if (c->nargs != 1) {
        fprintf(stderr, "gpubench run: expected one BENCHMARK (gpubench run --help)\n");
        return CLI_ERROR;
    }
    if ((req = make_request(c)) == NULL || (body = cJSON_PrintUnformatted(req)) == NULL)
        goto done;
    if (cli_request_json(c, "POST", "/runs", body, strlen(body), c->opt.json && !c->opt.wait,
                         &answer) != CLI_OK)
        goto done;
    /* One run, or {"batch", "runs": [...], "left_out"} */
    say_left_out(c, cJSON_GetObjectItem(answer, "left_out"));
    list = cJSON_GetObjectItem(answer, "runs");
    if (cJSON_IsArray(list)) {
        cJSON *r;
        while (n < MAX_RUNS && (r = cJSON_DetachItemFromArray(list, 0)) != NULL)
            runs[n++] = r;
    } else {
        runs[n++] = cJSON_Duplicate(answer, 1);
    }
    if (c->opt.wait) {
        rc = follow(c, runs, n);
    } else {
        for (int i = 0; i < n && !c->opt.json; i++)
            printf("%s %s (gpubench show %s)\n", cli_json_text(runs[i], "id", NULL),
                   cli_json_text(runs[i], "status", NULL), cli_json_text(runs[i], "id", NULL));
        rc = CLI_OK;
    }
    for (int i = 0; i < n; i++)
        cJSON_Delete(runs[i]);
done:
    cJSON_Delete(answer);
    free(body);
    cJSON_Delete(req);
    return rc;
}
