/*
 * test_canary.c - the checks on idle cards' rule (server/runs/canary_rule.c)
 * and the durations they are written in (server/core/duration.c): parsing
 * --canary, when a canary is due, each reason it waits, one canary per
 * card, the node canary that waits for every card, and how deferrals are
 * counted.
 */
#include "canary_rule.h"
#include "duration.h"
#include "test.h"

#define MIN_MS (60 * 1000LL)
#define HOUR_S 3600

/* A card quiet for an hour with nothing queued, a canary that never ran. */
static struct canary_facts idle_card(void)
{
    struct canary_facts f = {
        .now_ms = 1000 * HOUR_S * 1000LL,
        .last_ms = -1,
        .quiet = 1,
    };

    f.quiet_since_ms = f.now_ms - 60 * MIN_MS;
    return f;
}

static enum canary_step decide(const struct canary_facts *f, enum canary_defer *defer,
                               char *why, size_t cap)
{
    return canary_decide(f, 24 * HOUR_S, 600, defer, why, cap);
}

static int test_durations(void)
{
    int64_t s = 0;
    char buf[24];

    ASSERT_EQ(gb_duration_s("24h", &s), 0);
    ASSERT_EQ(s, 86400);
    ASSERT_EQ(gb_duration_s("10m", &s), 0);
    ASSERT_EQ(s, 600);
    ASSERT_EQ(gb_duration_s("90", &s), 0);
    ASSERT_EQ(s, 90);
    ASSERT_EQ(gb_duration_s("7d", &s), 0);
    ASSERT_EQ(s, 7 * 86400);
    ASSERT_EQ(gb_duration_s("0s", &s), -1);
    ASSERT_EQ(gb_duration_s("h", &s), -1);
    ASSERT_EQ(gb_duration_s("5w", &s), -1);
    ASSERT_EQ(gb_duration_s("5hh", &s), -1);
    ASSERT_EQ(gb_duration_s("-5m", &s), -1);
    ASSERT_EQ(gb_duration_s("367d", &s), -1);
    gb_duration_format(3 * 60, buf, sizeof(buf));
    ASSERT_STR_EQ(buf, "3m");
    gb_duration_format(86400 + 2 * 3600 + 5, buf, sizeof(buf));
    ASSERT_STR_EQ(buf, "1d2h5s");
    gb_duration_format(0, buf, sizeof(buf));
    ASSERT_STR_EQ(buf, "0s");
    return 0;
}

static int test_spec_parse(void)
{
    struct canary_spec health, one, other;
    char err[256];

    ASSERT_EQ(canary_spec_parse("health@24h", &health, err, sizeof(err)), 0);
    ASSERT_STR_EQ(health.name, "health");
    ASSERT_EQ(health.period_s, 86400);
    ASSERT(health.n_members > 1); /* a suite: its members' runs are its runs */
    ASSERT_EQ(canary_spec_parse("smem_stride@30m", &one, err, sizeof(err)), 0);
    ASSERT_EQ(one.n_members, 1);
    ASSERT_STR_EQ(one.members[0]->name, "smem_stride");
    ASSERT_EQ(canary_spec_parse("bogus@24h", &other, err, sizeof(err)), -1);
    ASSERT(strstr(err, "unknown benchmark 'bogus'") != NULL);
    ASSERT_EQ(canary_spec_parse("test_fault@1h", &other, err, sizeof(err)), -1);
    ASSERT(strstr(err, "unknown benchmark") != NULL);
    ASSERT_EQ(canary_spec_parse("health", &other, err, sizeof(err)), -1);
    ASSERT(strstr(err, "BENCHMARK@PERIOD") != NULL);
    ASSERT_EQ(canary_spec_parse("health@soon", &other, err, sizeof(err)), -1);
    ASSERT(strstr(err, "period 'soon'") != NULL);
    return 0;
}

static int test_spec_fits(void)
{
    struct canary_spec specs[2], again, member;
    char err[256];

    ASSERT_EQ(canary_spec_parse("health@24h", &specs[0], err, sizeof(err)), 0);
    ASSERT_EQ(canary_spec_parse("smem_pattern@1h", &specs[1], err, sizeof(err)), 0);
    /* smem_pattern has no short form, so the health suite leaves it out. */
    ASSERT_EQ(canary_spec_fits(specs, 1, &specs[1], err, sizeof(err)), 0);
    ASSERT_EQ(canary_spec_parse("health@1h", &again, err, sizeof(err)), 0);
    ASSERT_EQ(canary_spec_fits(specs, 1, &again, err, sizeof(err)), -1);
    ASSERT(strstr(err, "given twice") != NULL);
    /* A member of the suite alone: its runs would count for both. */
    ASSERT_EQ(canary_spec_parse("hbm_bandwidth@1h", &member, err, sizeof(err)), 0);
    ASSERT_EQ(canary_spec_fits(specs, 1, &member, err, sizeof(err)), -1);
    ASSERT_STR_EQ(err, "the canary health runs hbm_bandwidth already");
    /* a suite that holds another whole joins it, either order (issue 32);
     * a member of it alone still does not */
    ASSERT_EQ(canary_spec_parse("health_deep@7d", &again, err, sizeof(err)), 0);
    ASSERT(canary_spec_contains(&again, &specs[0]));
    ASSERT(!canary_spec_contains(&specs[0], &again));
    ASSERT_EQ(canary_spec_fits(specs, 1, &again, err, sizeof(err)), 0);
    ASSERT_EQ(canary_spec_fits(&again, 1, &specs[0], err, sizeof(err)), 0);
    ASSERT_EQ(canary_spec_parse("soak@1d", &member, err, sizeof(err)), 0);
    ASSERT_EQ(canary_spec_fits(&again, 1, &member, err, sizeof(err)), -1);
    ASSERT_STR_EQ(err, "the canary health_deep runs soak already");
    return 0;
}

static int test_due(void)
{
    struct canary_facts f = idle_card();
    enum canary_defer defer;
    char why[CANARY_REASON_MAX];

    ASSERT_EQ(canary_due_ms(-1, 60), -1);
    ASSERT_EQ(canary_due_ms(5000, 60), 65000);
    /* Never ran: due now. */
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_QUEUE);
    ASSERT_EQ(defer, CANARY_DEFER_NONE);
    /* Ran an hour ago with a period of a day: not due. */
    f.last_ms = f.now_ms - 60 * MIN_MS;
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_NOT_DUE);
    /* A day ago to the millisecond: due. */
    f.last_ms = f.now_ms - 24 * 60 * MIN_MS;
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_QUEUE);
    /* Not due wins over a busy card: no deferral is counted. */
    f.last_ms = f.now_ms - 1;
    f.quiet = 0;
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_NOT_DUE);
    return 0;
}

static int test_one_canary_per_card(void)
{
    struct canary_facts f = idle_card();
    enum canary_defer defer;
    char why[CANARY_REASON_MAX];

    f.active = 1;
    f.queued = 1; /* the canary itself */
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_ACTIVE);
    ASSERT_EQ(defer, CANARY_DEFER_NONE);
    return 0;
}

static int test_user_runs_first(void)
{
    struct canary_facts f = idle_card();
    enum canary_defer defer;
    char why[CANARY_REASON_MAX];

    f.queued = 2;
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_DEFERRED);
    ASSERT_EQ(defer, CANARY_DEFER_USER_RUNS);
    ASSERT_STR_EQ(why, "user runs queued (2)");
    f.queued = 0;
    f.running = 1;
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_DEFERRED);
    ASSERT_EQ(defer, CANARY_DEFER_USER_RUNS);
    ASSERT_STR_EQ(why, "a run is running");
    return 0;
}

static int test_quiet_long_enough(void)
{
    struct canary_facts f = idle_card();
    enum canary_defer defer;
    char why[CANARY_REASON_MAX];

    f.quiet = 0;
    f.why = "pid 4242 python3 on the card";
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_DEFERRED);
    ASSERT_EQ(defer, CANARY_DEFER_BUSY);
    ASSERT_STR_EQ(why, "card busy: pid 4242 python3 on the card");
    f.quiet = -1;
    f.why = "the worker is starting";
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_DEFERRED);
    ASSERT_EQ(defer, CANARY_DEFER_NO_READING);
    ASSERT_STR_EQ(why, "no reading yet: the worker is starting");
    f.quiet = 1;
    f.quiet_since_ms = f.now_ms - 3 * MIN_MS;
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_DEFERRED);
    ASSERT_EQ(defer, CANARY_DEFER_SETTLING);
    ASSERT_STR_EQ(why, "card quiet for 3m of 10m");
    f.quiet_since_ms = f.now_ms - 10 * MIN_MS;
    ASSERT_EQ(decide(&f, &defer, why, sizeof(why)), CANARY_QUEUE);
    return 0;
}

static int test_node_waits_for_every_card(void)
{
    struct canary_facts cards[2] = {idle_card(), idle_card()};
    const int index[2] = {0, 1};
    struct canary_node_facts f = {cards[0].now_ms, -1, 2, cards, index};
    enum canary_defer defer;
    char why[CANARY_REASON_MAX];

    /* Each card's own canary ran a minute ago: the node's is still due. */
    cards[0].last_ms = cards[1].last_ms = f.now_ms - MIN_MS;
    ASSERT_EQ(canary_decide_node(&f, 24 * HOUR_S, 600, &defer, why, sizeof(why)), CANARY_QUEUE);
    /* One busy card defers it, naming the card. */
    cards[1].quiet = 0;
    cards[1].why = "pid 4242 python3 on the card";
    ASSERT_EQ(canary_decide_node(&f, 24 * HOUR_S, 600, &defer, why, sizeof(why)),
              CANARY_DEFERRED);
    ASSERT_EQ(defer, CANARY_DEFER_BUSY);
    ASSERT_STR_EQ(why, "GPU 1: card busy: pid 4242 python3 on the card");
    cards[1].quiet = 1;
    cards[1].quiet_since_ms = f.now_ms - 3 * MIN_MS;
    ASSERT_EQ(canary_decide_node(&f, 24 * HOUR_S, 600, &defer, why, sizeof(why)),
              CANARY_DEFERRED);
    ASSERT_STR_EQ(why, "GPU 1: card quiet for 3m of 10m");
    /* A run queued on another card. */
    cards[1].quiet_since_ms = f.now_ms - 60 * MIN_MS;
    cards[0].queued = 1;
    ASSERT_EQ(canary_decide_node(&f, 24 * HOUR_S, 600, &defer, why, sizeof(why)),
              CANARY_DEFERRED);
    ASSERT_STR_EQ(why, "GPU 0: user runs queued (1)");
    /* A canary on any card, its own included: wait, counting no deferral. */
    cards[0].queued = 0;
    cards[1].active = 1;
    ASSERT_EQ(canary_decide_node(&f, 24 * HOUR_S, 600, &defer, why, sizeof(why)),
              CANARY_ACTIVE);
    ASSERT_EQ(defer, CANARY_DEFER_NONE);
    /* Its own newest run on the node decides when it is due, busy or not. */
    f.last_ms = f.now_ms - HOUR_S * 1000LL;
    ASSERT_EQ(canary_decide_node(&f, 24 * HOUR_S, 600, &defer, why, sizeof(why)),
              CANARY_NOT_DUE);
    return 0;
}

static int test_deferrals_counted_once_each(void)
{
    struct canary_record r = {0};

    ASSERT_EQ(canary_note(&r, CANARY_DEFERRED, CANARY_DEFER_BUSY, "card busy: pid 1 a", 1), 1);
    ASSERT_EQ(canary_note(&r, CANARY_DEFERRED, CANARY_DEFER_BUSY, "card busy: pid 2 b", 2), 0);
    ASSERT_EQ(r.deferred, 1);
    ASSERT_STR_EQ(r.reason, "card busy: pid 2 b"); /* kept up to date */
    ASSERT_EQ(canary_note(&r, CANARY_DEFERRED, CANARY_DEFER_SETTLING, "card quiet", 3), 1);
    ASSERT_EQ(r.deferred, 2);
    ASSERT_EQ(canary_note(&r, CANARY_QUEUE, CANARY_DEFER_NONE, "", 4), 0);
    ASSERT_EQ(r.kind, CANARY_DEFER_NONE);
    ASSERT_STR_EQ(r.reason, "card quiet"); /* the last reason stays to be read */
    ASSERT_EQ(canary_note(&r, CANARY_DEFERRED, CANARY_DEFER_SETTLING, "card quiet", 5), 1);
    ASSERT_EQ(r.deferred, 3);
    return 0;
}

TEST_MAIN({"durations", test_durations}, {"--canary parsed", test_spec_parse},
          {"no two canaries run one benchmark", test_spec_fits}, {"due", test_due},
          {"one canary per card", test_one_canary_per_card},
          {"user runs first", test_user_runs_first},
          {"quiet long enough", test_quiet_long_enough},
          {"the node waits for every card", test_node_waits_for_every_card},
          {"deferrals counted once each", test_deferrals_counted_once_each})
