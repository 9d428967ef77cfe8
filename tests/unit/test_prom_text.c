/* The Prometheus text writer (common/prom_text.h): the one escaper, the
 * collectors' runner (a failing collector reports success 0, its families
 * left out, the others kept), the series set's merge, and json_items. */
#include "json_items.h"
#include "prom_text.h"
#include "test.h"

#include <stdlib.h>

static int test_label_escaped(void)
{
    struct dynbuf b;

    dynbuf_init(&b, 1024);
    prom_open(&b, "m");
    prom_label(&b, "host", "a\"b\\c\nd");
    prom_label(&b, "gpu", NULL);
    prom_label_number(&b, "row", 32, 6);
    prom_close(&b);
    prom_sample(&b, 1.5);
    ASSERT(!dynbuf_failed(&b));
    ASSERT_STR_EQ(b.data, "m{host=\"a\\\"b\\\\c\\nd\",gpu=\"\",row=\"32\"} 1.5\n");
    dynbuf_free(&b);
    return 0;
}

static int test_label_name(void)
{
    char out[16];

    ASSERT_EQ(prom_label_name("rack-1.a", out, sizeof(out)), 0);
    ASSERT_STR_EQ(out, "rack_1_a");
    ASSERT_EQ(prom_label_name("9lives", out, sizeof(out)), 0);
    ASSERT_STR_EQ(out, "_lives");
    ASSERT_EQ(prom_label_name("__meta", out, sizeof(out)), -1);
    ASSERT_EQ(prom_label_name("", out, sizeof(out)), -1);
    return 0;
}

static int good(void *ctx, struct dynbuf *b)
{
    (void)ctx;
    prom_help(b, "good_total", "counter", "Good.");
    (void)!dynbuf_printf(b, "good_total 1\n");
    return 0;
}

/* Writes half a family, then fails, as a store error mid-way does. */
static int broken(void *ctx, struct dynbuf *b)
{
    (*(int *)ctx)++;
    prom_help(b, "broken", "gauge", "Half written.");
    (void)!dynbuf_printf(b, "broken{a=\"1\"} 1\n");
    return -1;
}

/* Writes past its buffer's cap: refused, so failed too. */
static int too_big(void *ctx, struct dynbuf *b)
{
    (void)ctx;
    for (int i = 0; i < 1000; i++)
        (void)!dynbuf_printf(b, "big{i=\"%d\"} 1\n", i);
    return 0;
}

static int test_collect_failing_left_out(void)
{
    static const struct prom_collector c[] = {
        {"first", good}, {"store", broken}, {"huge", too_big}, {"last", good}};
    struct dynbuf out;
    int calls = 0;

    dynbuf_init(&out, 1 << 20);
    ASSERT_EQ(prom_collect(c, 4, &calls, 4096, &out), 2);
    ASSERT_EQ(calls, 1);
    ASSERT(!dynbuf_failed(&out));
    /* the others' families are served, twice (first and last) */
    ASSERT(strstr(out.data, "good_total 1\n") != NULL);
    ASSERT(strstr(strstr(out.data, "good_total 1\n") + 1, "good_total 1\n") != NULL);
    /* nothing of the failed ones */
    ASSERT(strstr(out.data, "broken") == NULL);
    ASSERT(strstr(out.data, "big{") == NULL);
    ASSERT(strstr(out.data, "# TYPE gpubench_scrape_collector_success gauge\n") != NULL);
    ASSERT(strstr(out.data, "gpubench_scrape_collector_success{collector=\"first\"} 1\n"));
    ASSERT(strstr(out.data, "gpubench_scrape_collector_success{collector=\"store\"} 0\n"));
    ASSERT(strstr(out.data, "gpubench_scrape_collector_success{collector=\"huge\"} 0\n"));
    ASSERT(strstr(out.data, "gpubench_scrape_collector_success{collector=\"last\"} 1\n"));
    for (int i = 0; i < 4; i++) {
        char want[128];
        snprintf(want, sizeof(want),
                 "gpubench_scrape_collector_duration_seconds{collector=\"%s\"} ", c[i].name);
        ASSERT(strstr(out.data, want) != NULL);
    }
    dynbuf_free(&out);
    return 0;
}

static int put(struct prom_set *s, const char *text, double v)
{
    struct dynbuf line;
    int rc;

    dynbuf_init(&line, 256);
    (void)!dynbuf_printf(&line, "%s", text);
    rc = prom_set_put(s, &line, v, NULL);
    dynbuf_free(&line);
    return rc;
}

static int test_set_merge(void)
{
    struct prom_set add = {0}, first = {0};
    struct dynbuf b;

    /* many series, each twice: the merge must not be a linear search each */
    for (int i = 0; i < 20000; i++) {
        char text[64];
        snprintf(text, sizeof(text), "m{i=\"%d\"}", (i * 7919) % 10000);
        ASSERT_EQ(put(&add, text, 1), 0);
        ASSERT_EQ(put(&first, text, i), 0);
    }
    prom_set_merge(&add, 1);
    prom_set_merge(&first, 0);
    ASSERT_EQ(add.n, 10000);
    ASSERT_EQ(first.n, 10000);
    for (size_t i = 0; i < add.n; i++)
        ASSERT_EQ(add.e[i].v, 2);
    /* keep-first keeps the value put first: i < 10000 */
    for (size_t i = 0; i < first.n; i++)
        ASSERT(first.e[i].v < 10000);
    dynbuf_init(&b, 1 << 20);
    prom_set_print(&b, &add);
    ASSERT(strstr(b.data, "m{i=\"0\"} 2\n") != NULL);
    dynbuf_free(&b);
    prom_set_free(&add);
    prom_set_free(&first);
    return 0;
}

static int test_json_items(void)
{
    cJSON *a = cJSON_Parse("[1, 2, 3]"), *o = cJSON_Parse("{\"x\": 1}");
    const cJSON **items;
    int n;

    ASSERT(a && o);
    items = json_items(a, &n);
    ASSERT(items != NULL && n == 3);
    ASSERT_EQ(items[2]->valueint, 3);
    free(items);
    ASSERT(json_items(o, &n) == NULL && n == 0);
    cJSON_Delete(a);
    cJSON_Delete(o);
    return 0;
}

TEST_MAIN({"label_escaped", test_label_escaped}, {"label_name", test_label_name},
          {"collect_failing_left_out", test_collect_failing_left_out},
          {"set_merge", test_set_merge}, {"json_items", test_json_items})
