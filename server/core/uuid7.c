/*
 * uuid7.c - see uuid7.h.  The clock and counter live under one mutex; the
 * random tail comes from getrandom(2).
 */
#include "uuid7.h"
#include "timeutil.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t last_ms;
static uint16_t counter;

void uuid7_format(uint64_t unix_ms, uint16_t count, const uint8_t rnd[8],
                  char out[UUID7_STRLEN + 1])
{
    uint8_t b[16];

    for (int i = 0; i < 6; i++)
        b[i] = (uint8_t)(unix_ms >> (8 * (5 - i)));
    b[6] = (uint8_t)(0x70 | ((count >> 8) & 0x0f));
    b[7] = (uint8_t)(count & 0xff);
    memcpy(b + 8, rnd, 8);
    b[8] = (uint8_t)(0x80 | (b[8] & 0x3f));
    snprintf(out, UUID7_STRLEN + 1,
             "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-"
             "%02x%02x%02x%02x%02x%02x",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9],
             b[10], b[11], b[12], b[13], b[14], b[15]);
}

int uuid7_new(char out[UUID7_STRLEN + 1])
{
    uint8_t rnd[8];
    uint64_t ms;
    uint16_t count;

    if (getrandom(rnd, sizeof(rnd), 0) != (ssize_t)sizeof(rnd))
        return -1;
    pthread_mutex_lock(&lock);
    ms = (uint64_t)time_now_unix_ms();
    if (ms <= last_ms) {
        /* Same millisecond, or the clock stepped back: keep order by
         * counting on from the last id; borrow the next millisecond when
         * the 12-bit counter runs out. */
        ms = last_ms;
        if (++counter > 0x0fff) {
            ms++;
            counter = 0;
        }
    } else {
        counter = 0;
    }
    last_ms = ms;
    count = counter;
    pthread_mutex_unlock(&lock);
    uuid7_format(ms, count, rnd, out);
    return 0;
}

/* isxdigit without the locale's table: every GET /runs/ID asks. */
static int hex_digit(char c)
{
    char lower = (char)(c | 0x20);

    return (c >= '0' && c <= '9') || (lower >= 'a' && lower <= 'f');
}

int uuid_is_valid(const char *s)
{
    if (s == NULL || strlen(s) != UUID7_STRLEN)
        return 0;
    for (int i = 0; i < UUID7_STRLEN; i++) {
        if (i == 8 || i == 13 || i == 18 || i == 23) {
            if (s[i] != '-')
                return 0;
        } else if (!hex_digit(s[i])) {
            return 0;
        }
    }
    return 1;
}
