/*
 * test_duration.c - common/duration.c: the units, seconds by default, and
 * what is refused.
 */
#include "duration.h"
#include "test.h"

static int test_units(void)
{
    int64_t ms = 0;

    ASSERT_EQ(gb_duration_ms("24h", &ms), 0);
    ASSERT_EQ(ms, 24LL * 3600 * 1000);
    ASSERT_EQ(gb_duration_ms("10m", &ms), 0);
    ASSERT_EQ(ms, 600000);
    ASSERT_EQ(gb_duration_ms("1.5s", &ms), 0);
    ASSERT_EQ(ms, 1500);
    ASSERT_EQ(gb_duration_ms("7d", &ms), 0);
    ASSERT_EQ(ms, 7LL * 86400 * 1000);
    ASSERT_EQ(gb_duration_ms("3600", &ms), 0);
    ASSERT_EQ(ms, 3600000);
    return 0;
}

static int test_refused(void)
{
    static const char *const bad[] = {"", "h", "-1h", "0", "24x", "24hh", "400d", "1e400", NULL};
    int64_t ms = 42;

    for (const char *const *b = bad; *b; b++)
        ASSERT_EQ(gb_duration_ms(*b, &ms), -1);
    ASSERT_EQ(gb_duration_ms(NULL, &ms), -1);
    ASSERT_EQ(ms, 42);
    return 0;
}

TEST_MAIN({"units", test_units}, {"refused", test_refused})
