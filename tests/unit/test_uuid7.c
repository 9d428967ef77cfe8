/* Run ids: UUIDv7 layout, and time order even within one millisecond. */
#include "test.h"
#include "uuid7.h"

#include <stdint.h>

static int test_layout(void)
{
    const uint8_t rnd[8] = {0xff, 1, 2, 3, 4, 5, 6, 7};
    char id[UUID7_STRLEN + 1];

    uuid7_format(0x0123456789abULL, 0x0fff, rnd, id);
    ASSERT_STR_EQ(id, "01234567-89ab-7fff-bf01-020304050607");
    ASSERT(uuid_is_valid(id));
    ASSERT(!uuid_is_valid("01234567-89ab-7fff-bf01-02030405060"));
    ASSERT(!uuid_is_valid("01234567x89ab-7fff-bf01-020304050607"));
    ASSERT(!uuid_is_valid(NULL));
    return 0;
}

static int test_time_ordered(void)
{
    char prev[UUID7_STRLEN + 1], id[UUID7_STRLEN + 1];

    ASSERT_EQ(uuid7_new(prev), 0);
    ASSERT_EQ(prev[14], '7');
    /* Far more than one millisecond's worth, so the counter is exercised. */
    for (int i = 0; i < 20000; i++) {
        ASSERT_EQ(uuid7_new(id), 0);
        ASSERT(strcmp(prev, id) < 0);
        memcpy(prev, id, sizeof(id));
    }
    return 0;
}

TEST_MAIN({"UUIDv7 layout", test_layout},
          {"ids sort in creation order", test_time_ordered})
