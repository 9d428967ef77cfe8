/*
 * cmd_check.c - `gpubench check [--host NAME] [--max-age 24h] [--textfile
 * DIR]`: whether one node's cards may take jobs, for Slurm's
 * HealthCheckProgram, a prolog or an epilog (README: Slurm).  The exit
 * status is the answer (cli.h's numbers, read as Slurm needs them):
 *   0  every card healthy and every health benchmark checked within max-age
 *   1  a card degraded
 *   2  a card unknown (a benchmark never checked, or stale), or no GPU
 *   3  an error (the command line, the daemon did not answer)
 * and the first line of stdout is the reason, short enough for a drain
 * reason ("gpubench: GPU 3 (…f51d) hbm_bandwidth never checked").
 *
 * One request, GET /coverage, answered from the daemon's store: the check
 * never runs a benchmark and never calls scontrol; what drains a node is
 * Slurm acting on the exit status.  Without --host the node is the
 * daemon's own (its cards marked "own"), so the check asks whichever
 * daemon --url names about that daemon's GPUs.
 *
 * --textfile DIR writes DIR/gpubench.prom for node_exporter's textfile
 * collector, whole or not at all: into a temporary file in DIR, renamed
 * over the old one (node_exporter reads only *.prom, so it never sees the
 * temporary one half-written).  It is written on an error too, saying
 * the node is not healthy, so a dead daemon is not read as a healthy
 * node's last file.
 */
#include "cli.h"
#include "duration.h"
#include "expect.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_MAX_AGE "24h"
/* Slurm keeps a drain reason short; the first line stays under this. */
#define REASON_CAP 100
#define TEXTFILE_NAME "gpubench.prom"

/* "GPU 3 (…f51d)": the index and the UUID's last four characters, which
 * tell apart the cards of one node. */
static void card_name(const cJSON *card, char *buf, size_t cap)
{
    const cJSON *index = cJSON_GetObjectItem(card, "index");
    const char *uuid = cli_json_text(card, "uuid", NULL);
    size_t n = uuid ? strlen(uuid) : 0;
    char at[16] = "?";

    if (cJSON_IsNumber(index))
        snprintf(at, sizeof(at), "%d", index->valueint);
    snprintf(buf, cap, "GPU %s (\u2026%s)", at, n > 4 ? uuid + n - 4 : (uuid ? uuid : "?"));
}

/* A card's exit status: 1 degraded; 2 unknown, or healthy with a health
 * benchmark not fresh (its coverage_reason); 0 healthy and covered. */
static int card_status(const cJSON *card)
{
    const char *state = cli_json_text(card, "state", NULL);

    if (state && strcmp(state, gb_card_state_names[GB_CARD_DEGRADED]) == 0)
        return CLI_FAILED;
    if (state == NULL || strcmp(state, gb_card_state_names[GB_CARD_HEALTHY]) != 0 ||
        cli_json_text(card, "coverage_reason", NULL) != NULL)
        return CLI_INCONCLUSIVE;
    return CLI_OK;
}

/* Why a card is not fit, in the fewest words: a degraded card's reason;
 * else the benchmark that is not fresh; else its state's reason. */
static const char *card_why(const cJSON *card)
{
    const char *cov = cli_json_text(card, "coverage_reason", NULL);
    const char *why = cli_json_text(card, "reason", NULL);

    if (card_status(card) == CLI_FAILED || cov == NULL)
        return why ? why : cli_json_text(card, "state", NULL);
    return cov;
}

/* The worst card's exit status among cards, with *worst the card (NULL
 * when every card passes). */
static int judge(const cJSON *cards, const cJSON **worst)
{
    const cJSON *card;
    int rc = CLI_OK;

    *worst = NULL;
    cJSON_ArrayForEach(card, cards) {
        int r = card_status(card);
        /* degraded (1) outranks unknown (2): it is the reason to drain */
        if (r != CLI_OK && (rc == CLI_OK || r < rc)) {
            rc = r;
            *worst = card;
        }
    }
    return rc;
}

/* Prometheus label text: backslash, quote and newline escaped. */
static void label(FILE *f, const char *v)
{
    for (; v && *v; v++) {
        if (*v == '\\' || *v == '"')
            fprintf(f, "\\%c", *v);
        else if (*v == '\n')
            fputs("\\n", f);
        else
            fputc(*v, f);
    }
}

static void gauge(FILE *f, const char *name, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s gauge\n", name, help, name);
}

/* Writes the node's gauges into f. */
static void textfile_body(FILE *f, const char *host, int rc, const cJSON *cards)
{
    const cJSON *card;

    gauge(f, "gpubench_node_healthy",
          "1 when gpubench check passed: every card healthy and checked within the window.");
    fputs("gpubench_node_healthy{host=\"", f);
    label(f, host);
    fprintf(f, "\"} %d\n", rc == CLI_OK);
    gauge(f, "gpubench_check_status",
          "gpubench check's exit status: 0 healthy, 1 degraded, 2 unknown, stale or no GPU, "
          "3 error.");
    fputs("gpubench_check_status{host=\"", f);
    label(f, host);
    fprintf(f, "\"} %d\n", rc);
    gauge(f, "gpubench_check_timestamp_seconds", "When gpubench check wrote this file.");
    fputs("gpubench_check_timestamp_seconds{host=\"", f);
    label(f, host);
    fprintf(f, "\"} %lld\n", (long long)time(NULL));
    gauge(f, "gpubench_check_card_state",
          "1 for each card's state (healthy, degraded, unknown) as gpubench check saw it.");
    cJSON_ArrayForEach(card, cards) {
        const cJSON *index = cJSON_GetObjectItem(card, "index");
        const char *state = cli_json_text(card, "state", NULL);
        for (int i = 0; i < GB_CARD_STATES; i++) {
            fputs("gpubench_check_card_state{host=\"", f);
            label(f, cli_json_text(card, "host", NULL));
            fputs("\",uuid=\"", f);
            label(f, cli_json_text(card, "uuid", NULL));
            if (cJSON_IsNumber(index))
                fprintf(f, "\",gpu=\"%d", index->valueint);
            else
                fputs("\",gpu=\"", f);
            fprintf(f, "\",state=\"%s\"} %d\n", gb_card_state_names[i],
                    state && strcmp(state, gb_card_state_names[i]) == 0);
        }
    }
}

/* DIR/gpubench.prom replaced whole.  0, or -1 said on stderr. */
static int write_textfile(const char *dir, const char *host, int rc, const cJSON *cards)
{
    char tmp[4096], path[4096];
    FILE *f = NULL;
    int fd, ok = -1;

    if ((size_t)snprintf(tmp, sizeof(tmp), "%s/.%s.XXXXXX", dir, TEXTFILE_NAME) >= sizeof(tmp) ||
        (size_t)snprintf(path, sizeof(path), "%s/%s", dir, TEXTFILE_NAME) >= sizeof(path)) {
        fprintf(stderr, "gpubench check: --textfile %.200s: the path is too long\n", dir);
        return -1;
    }
    if ((fd = mkstemp(tmp)) < 0) {
        fprintf(stderr, "gpubench check: --textfile %s: %s\n", dir, strerror(errno));
        return -1;
    }
    /* node_exporter often runs as another user: readable by all, as a
     * file the collector is given usually is */
    if (fchmod(fd, 0644) != 0 || (f = fdopen(fd, "w")) == NULL) {
        fprintf(stderr, "gpubench check: %s: %s\n", tmp, strerror(errno));
        close(fd);
        goto done;
    }
    textfile_body(f, host, rc, cards);
    if (fflush(f) != 0 || fsync(fileno(f)) != 0 || ferror(f)) {
        fprintf(stderr, "gpubench check: %s: %s\n", tmp, strerror(errno));
        goto done;
    }
    if (rename(tmp, path) != 0) {
        fprintf(stderr, "gpubench check: %s: %s\n", path, strerror(errno));
        goto done;
    }
    ok = 0;
done:
    if (f != NULL && fclose(f) != 0 && ok == 0) {
        fprintf(stderr, "gpubench check: %s: %s\n", path, strerror(errno));
        ok = -1;
    }
    if (ok != 0)
        unlink(tmp);
    return ok;
}

/* The card's deep checks (issue 32: GET /coverage's deep_cells), as
 * "; deep: known_answer fresh, memtest never, soak stale" into buf: they
 * are counted and shown, but never change the exit status (a node without
 * the weekly canary would be drained for good); a wrong result they found
 * does, as the card's degraded state. */
static void deep_text(const cJSON *card, char *buf, size_t cap)
{
    const cJSON *cell;
    size_t used = 0;

    buf[0] = '\0';
    cJSON_ArrayForEach(cell, cJSON_GetObjectItem(card, "deep_cells")) {
        const char *bench = cli_json_text(cell, "benchmark", NULL);
        const char *state = cli_json_text(cell, "state", NULL);
        if (used < cap)
            used += (size_t)snprintf(buf + used, cap - used, "%s%s %s", used ? ", " : "; deep: ",
                                     bench ? bench : "?", state ? state : "?");
    }
}

/* Prints the first line (the reason) and a line per card. */
static void print_result(int rc, const cJSON *worst, const cJSON *cards, const char *host,
                         const char *window)
{
    const cJSON *card;
    char name[64];
    int n = cJSON_GetArraySize(cards);

    if (n == 0) {
        printf("gpubench: no GPU of %.60s known\n", host);
        return;
    }
    if (rc == CLI_OK) {
        printf("gpubench: %d GPU%s of %.40s healthy, checked within %s\n", n, n == 1 ? "" : "s",
               host, window);
    } else {
        const char *why = card_why(worst);
        int room;
        card_name(worst, name, sizeof(name));
        room = REASON_CAP - 1 - (int)strlen("gpubench:  ") - (int)strlen(name);
        printf("gpubench: %s %.*s\n", name, room > 0 ? room : 0, why ? why : "?");
    }
    cJSON_ArrayForEach(card, cards) {
        const char *why = card_why(card);
        const char *model = cli_json_text(card, "name", NULL);
        char deep[200];
        card_name(card, name, sizeof(name));
        deep_text(card, deep, sizeof(deep));
        printf("%s %s: %s%s%s%s\n", name, model ? model : "?",
               cli_json_text(card, "state", NULL), why ? ", " : "", why ? why : "", deep);
    }
}

int cmd_check(struct cli *c)
{
    const char *window = c->opt.max_age ? c->opt.max_age : DEFAULT_MAX_AGE;
    int64_t ms;
    struct dynbuf path;
    cJSON *answer = NULL, *cards = NULL, *card;
    const cJSON *worst = NULL;
    char host[256] = "";
    int rc = CLI_ERROR;

    if (c->nargs != 0) {
        fprintf(stderr, "gpubench check: takes no arguments (gpubench check --help)\n");
        return CLI_ERROR;
    }
    if (gb_duration_ms(window, &ms) != 0) {
        fprintf(stderr,
                "gpubench check: --max-age %.40s: expected a duration such as 24h, 90m, 7d or "
                "3600 (seconds)\n",
                window);
        return CLI_ERROR;
    }
    dynbuf_init(&path, 4096);
    if (dynbuf_printf(&path, "/coverage") != 0 ||
        gb_http_add_query(c->http, &path, "max_age", window) != 0 ||
        gb_http_add_query(c->http, &path, "host", c->opt.host) != 0 ||
        (cards = cJSON_CreateArray()) == NULL) {
        fprintf(stderr, "gpubench check: out of memory\n");
        goto done;
    }
    if (cli_get_json(c, path.data, &answer) != CLI_OK) {
        printf("gpubench: no answer from the daemon at %.60s\n", c->opt.url);
        goto done;
    }
    snprintf(host, sizeof(host), "%s",
             c->opt.host ? c->opt.host : cli_json_text(answer, "host", NULL));
    /* the node's cards: all the daemon listed for --host, else its own */
    cJSON_ArrayForEach(card, cJSON_GetObjectItem(answer, "cards"))
        if (c->opt.host || cJSON_IsTrue(cJSON_GetObjectItem(card, "own")))
            if (!cJSON_AddItemReferenceToArray(cards, card))
                goto done;
    rc = judge(cards, &worst);
    if (cJSON_GetArraySize(cards) == 0)
        rc = CLI_INCONCLUSIVE;
    if (!c->opt.json)
        print_result(rc, worst, cards, host, window);

done:
    if (c->opt.textfile) {
        /* no answer: the node named, else this one */
        if (host[0] == '\0' && c->opt.host)
            snprintf(host, sizeof(host), "%s", c->opt.host);
        else if (host[0] == '\0' && gethostname(host, sizeof(host) - 1) != 0)
            host[0] = '\0';
        if (write_textfile(c->opt.textfile, host, rc, cards) != 0)
            rc = CLI_ERROR;
    }
    cJSON_Delete(cards);
    cJSON_Delete(answer);
    dynbuf_free(&path);
    return rc;
}
