/*
 * test.h - the unit tests' whole framework: plain ASSERT macros and a
 * runner over a table of test functions.  A failed ASSERT prints the file,
 * line and expression and makes the test return 1; main() runs every entry
 * of the table and exits non-zero if any failed.
 *
 *   static int test_gcd(void) { ASSERT_EQ(gb_degree_for_stride(4), 4); return 0; }
 *   TEST_MAIN({"gcd", test_gcd})
 */
#ifndef GPUBENCH_TEST_H
#define GPUBENCH_TEST_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#define ASSERT(expr)                                                \
    do {                                                            \
        if (!(expr)) {                                              \
            fprintf(stderr, "%s:%d: ASSERT(%s) failed\n", __FILE__, \
                    __LINE__, #expr);                               \
            return 1;                                               \
        }                                                           \
    } while (0)

#define ASSERT_EQ(a, b)                                               \
    do {                                                              \
        long long a_ = (long long)(a), b_ = (long long)(b);           \
        if (a_ != b_) {                                               \
            fprintf(stderr, "%s:%d: %s == %s failed: %lld != %lld\n", \
                    __FILE__, __LINE__, #a, #b, a_, b_);              \
            return 1;                                                 \
        }                                                             \
    } while (0)

#define ASSERT_STR_EQ(a, b)                                               \
    do {                                                                  \
        const char *a_ = (a), *b_ = (b);                                  \
        if (a_ == NULL || b_ == NULL || strcmp(a_, b_) != 0) {            \
            fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n", \
                    __FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)",       \
                    b_ ? b_ : "(null)");                                  \
            return 1;                                                     \
        }                                                                 \
    } while (0)

#define ASSERT_NEAR(a, b, tol)                                             \
    do {                                                                   \
        double a_ = (a), b_ = (b);                                         \
        if (!(fabs(a_ - b_) <= (tol))) {                                   \
            fprintf(stderr, "%s:%d: %s ~ %s failed: %g vs %g\n", __FILE__, \
                    __LINE__, #a, #b, a_, b_);                             \
            return 1;                                                      \
        }                                                                  \
    } while (0)

struct test_entry {
    const char *name;
    int (*fn)(void);
};

#define TEST_MAIN(...)                                                   \
    int main(void)                                                       \
    {                                                                    \
        static const struct test_entry tests_[] = {__VA_ARGS__};         \
        int failed_ = 0, n_ = (int)(sizeof(tests_) / sizeof(tests_[0])); \
        for (int i_ = 0; i_ < n_; i_++) {                                \
            int rc_ = tests_[i_].fn();                                   \
            printf("%s %s\n", rc_ ? "FAIL" : "ok  ", tests_[i_].name);   \
            failed_ += rc_ != 0;                                         \
        }                                                                \
        printf("%d passed, %d failed\n", n_ - failed_, failed_);         \
        return failed_ ? 1 : 0;                                          \
    }

#endif
