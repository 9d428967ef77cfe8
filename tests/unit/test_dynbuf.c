/* The capped buffer: it must refuse to pass its cap and keep its contents. */
#include "dynbuf.h"
#include "test.h"

#include <stdlib.h>

static int test_cap_refused(void)
{
    struct dynbuf b;

    dynbuf_init(&b, 10);
    ASSERT_EQ(dynbuf_add(&b, "12345", 5), 0);
    ASSERT_EQ(dynbuf_add(&b, "67890", 5), 0);
    ASSERT_EQ(dynbuf_add(&b, "x", 1), -1);
    ASSERT_EQ(b.len, 10);
    ASSERT_STR_EQ(b.data, "1234567890");
    ASSERT_EQ(dynbuf_printf(&b, "%d", 1), -1);
    dynbuf_free(&b);
    return 0;
}

static int test_consume_and_take(void)
{
    struct dynbuf b;
    size_t n;
    char *p;

    dynbuf_init(&b, 100);
    ASSERT_EQ(dynbuf_printf(&b, "line one\nline %d", 2), 0);
    dynbuf_consume(&b, 9);
    ASSERT_STR_EQ(b.data, "line 2");
    p = dynbuf_take(&b, &n);
    ASSERT_EQ(n, 6);
    ASSERT_STR_EQ(p, "line 2");
    ASSERT(b.data == NULL && b.len == 0);
    free(p);
    p = dynbuf_take(&b, &n);
    ASSERT(p != NULL && n == 0 && p[0] == '\0');
    free(p);
    return 0;
}

/* A refused append is remembered until the buffer is emptied, even when
 * later (smaller) appends fit: a text with a hole must not pass as whole. */
static int test_failed_is_sticky(void)
{
    struct dynbuf b;

    dynbuf_init(&b, 8);
    ASSERT_EQ(dynbuf_failed(&b), 0);
    ASSERT_EQ(dynbuf_add(&b, "123456", 6), 0);
    ASSERT_EQ(dynbuf_add(&b, "abc", 3), -1);
    ASSERT_EQ(dynbuf_add(&b, "7", 1), 0);
    ASSERT_EQ(dynbuf_failed(&b), 1);
    dynbuf_truncate(&b, 3);
    ASSERT_STR_EQ(b.data, "123");
    ASSERT_EQ(dynbuf_failed(&b), 1);
    dynbuf_reset(&b);
    ASSERT_EQ(dynbuf_failed(&b), 0);
    ASSERT_EQ(dynbuf_printf(&b, "%s", "too long for it"), -1);
    ASSERT_EQ(dynbuf_failed(&b), 1);
    dynbuf_free(&b);
    ASSERT_EQ(dynbuf_failed(&b), 0);
    return 0;
}

TEST_MAIN({"the cap is never passed", test_cap_refused},
          {"a refused append is remembered", test_failed_is_sticky},
          {"consume and take", test_consume_and_take})
