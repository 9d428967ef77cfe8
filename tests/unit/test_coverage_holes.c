/*
 * test_coverage_holes.c - server/judge/coverage.c's cards for a keeper
 * (coverage_cards with age_holes, coverage_fill_ages; issue 33: a hub's
 * whole GET /coverage kept per host, server/http/coverage_cache.c): a card
 * printed once with its ages as holes, filled in later, is byte for byte
 * the card coverage_build prints then, for every time before the card's
 * valid_until_ms; made again at that time, as the cache does, it stays so
 * for days of answers.  And valid_until_ms is needed: the text kept past
 * it says something else than a fresh build (a cell's window passed).
 */
#include "bench_suite.h"
#include "coverage.h"
#include "dynbuf.h"
#include "json_build.h"
#include "test.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T0 1780000000000LL /* a Unix time in ms */
#define HOUR 3600000LL

/* A cell as store_coverage_cells reads it; at 0: no valid run. */
static void add_cell(struct json_build *b, cJSON *cells, const char *host, const char *uuid,
                     int index, const char *bench, long long at, int failed)
{
    cJSON *c = jb_new_object(b);
    char run[64];

    snprintf(run, sizeof(run), "run-%s-%s", uuid, bench);
    jb_string(b, c, "host", host);
    jb_string(b, c, "uuid", uuid);
    jb_number(b, c, "index", index);
    jb_string(b, c, "name", "NVIDIA H200");
    jb_string(b, c, "benchmark", bench);
    jb_string(b, c, "run_id", at ? run : NULL);
    if (at) {
        jb_number(b, c, "at_ms", (double)at);
        jb_number(b, c, "checks_failed", failed);
    } else {
        jb_null(b, c, "at_ms");
        jb_null(b, c, "checks_failed");
    }
    jb_null(b, c, "checks");
    jb_push(b, cells, c);
}

/* Cards of two hosts, their runs at ages that cross every boundary within
 * days: a window's end (23.9 h, 1 min), the reason's units (119 s, 1 h 59
 * min, 47 h), a failing run, none, one "in the future", old deep checks. */
static cJSON *fleet_cells(void)
{
    const struct gb_benchmark *m[GB_SUITE_MAX_MEMBERS];
    int n = gb_suite_members(gb_suite_find("health_deep"), m, GB_SUITE_MAX_MEMBERS);
    static const long long ages[] = {
        (long long)(23.9 * HOUR), 119000, 60000, 2 * HOUR - 60000, 47 * HOUR, -5000, 0, 3 * HOUR,
        7 * 24 * HOUR - 30000};
    struct json_build b = {0};
    cJSON *cells = jb_new_array(&b);
    char uuid[32];
    int k = 0;

    for (int card = 0; card < 3; card++) {
        const char *host = card < 2 ? "node-a" : "node-b";
        snprintf(uuid, sizeof(uuid), "GPU-%d", card);
        for (int i = 0; i < n; i++, k++) {
            long long age = ages[k % (sizeof(ages) / sizeof(ages[0]))];
            add_cell(&b, cells, host, uuid, card % 2, m[i]->name, age ? T0 - age : 0,
                     card == 1 && i == n - 1);
        }
    }
    if (jb_failed(&b)) {
        cJSON_Delete(cells);
        return NULL;
    }
    return cells;
}

struct kept {
    char text[4][64 * 1024]; /* each card's, ages as holes */
    int64_t valid_until[4];
    int n;
};

static int keep_card(void *ctx, const struct coverage_card *c)
{
    struct kept *k = ctx;
    char *text = cJSON_PrintUnformatted(c->card);
    int rc = -1;

    if (text && k->n < 4 && strlen(text) < sizeof(k->text[0])) {
        snprintf(k->text[k->n], sizeof(k->text[0]), "%s", text);
        k->valid_until[k->n++] = c->valid_until_ms;
        rc = 0;
    }
    free(text);
    cJSON_Delete(c->card);
    return rc;
}

static struct coverage_query query(int64_t now_ms, int holes)
{
    return (struct coverage_query){.own_host = "hub",
                                   .now_ms = now_ms,
                                   .max_age_s = 86400,
                                   .age_holes = holes};
}

/* Card i of coverage_build at now, printed. */
static char *built_card(const cJSON *cells, int64_t now, int i)
{
    struct coverage_query q = query(now, 0);
    cJSON *out = coverage_build(cells, &q);
    char *text = cJSON_PrintUnformatted(cJSON_GetArrayItem(cJSON_GetObjectItem(out, "cards"), i));

    cJSON_Delete(out);
    return text;
}

/* Kept card i filled at now, into b (reset first). */
static int filled(struct dynbuf *b, const struct kept *k, int i, int64_t now)
{
    dynbuf_reset(b);
    return coverage_fill_ages(b, k->text[i], strlen(k->text[i]), now);
}

static int test_kept_cards_match_a_build(void)
{
    cJSON *cells = fleet_cells();
    struct kept k = {0};
    struct coverage_query q = query(T0, 1);
    struct dynbuf b;
    int rebuilt = 0, differed = 0;

    ASSERT(cells != NULL);
    dynbuf_init(&b, 1 << 20);
    ASSERT_EQ(coverage_cards(cells, &q, keep_card, &k), 0);
    ASSERT_EQ(k.n, 3);
    ASSERT(strchr(k.text[0], COVERAGE_HOLE_OPEN) != NULL);
    ASSERT(strstr(k.text[0], "\"age_s\":") != NULL);
    /* three days of answers, 37 s apart (a prime: the times fall anywhere
     * within a second) */
    for (int64_t now = T0; now < T0 + 72 * HOUR; now += 37003) {
        for (int i = 0; i < k.n; i++) {
            char *want;
            if (now >= k.valid_until[i]) {
                /* past its time: what was kept may say something else;
                 * the cache makes it again (once seen to differ here) */
                ASSERT_EQ(filled(&b, &k, i, now), 0);
                want = built_card(cells, now, i);
                ASSERT(want != NULL);
                if (strcmp(want, b.data) != 0)
                    differed++;
                free(want);
                static struct kept again;
                memset(&again, 0, sizeof(again));
                q = query(now, 1);
                ASSERT_EQ(coverage_cards(cells, &q, keep_card, &again), 0);
                memcpy(k.text[i], again.text[i], sizeof(k.text[i]));
                k.valid_until[i] = again.valid_until[i];
                ASSERT(k.valid_until[i] > now);
                rebuilt++;
            }
            ASSERT_EQ(filled(&b, &k, i, now), 0);
            want = built_card(cells, now, i);
            ASSERT(want != NULL);
            if (strcmp(want, b.data) != 0)
                fprintf(stderr, "at T0 + %lld ms, card %d:\n kept  %s\n built %s\n",
                        (long long)(now - T0), i, b.data, want);
            ASSERT_STR_EQ(b.data, want);
            free(want);
        }
    }
    /* the boundaries were met, and keeping a text past one would be wrong */
    ASSERT(rebuilt >= 6);
    ASSERT(differed >= 3);
    dynbuf_free(&b);
    cJSON_Delete(cells);
    return 0;
}

static int test_fill(void)
{
    struct dynbuf b;
    char text[64];

    dynbuf_init(&b, 1024);
    snprintf(text, sizeof(text), "{\"age_s\":%c%lld%c,\"x\":1}", COVERAGE_HOLE_OPEN, T0,
             COVERAGE_HOLE_CLOSE);
    ASSERT_EQ(coverage_fill_ages(&b, text, strlen(text), T0 + 90999), 0);
    ASSERT_STR_EQ(b.data, "{\"age_s\":90,\"x\":1}");
    dynbuf_reset(&b);
    ASSERT_EQ(coverage_fill_ages(&b, text, strlen(text), T0 - 5000), 0); /* ahead: 0 s old */
    ASSERT_STR_EQ(b.data, "{\"age_s\":0,\"x\":1}");
    dynbuf_reset(&b);
    ASSERT_EQ(coverage_fill_ages(&b, text, strlen(text) - 8, T0), -1); /* not closed */
    dynbuf_free(&b);
    return 0;
}

TEST_MAIN({"fill", test_fill}, {"kept_cards_match_a_build", test_kept_cards_match_a_build})
