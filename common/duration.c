/*
 * duration.c - see duration.h.  Strict: "24 h", "1.5h" and "-1h" are
 * refused rather than read as something else, since a window that is
 * silently wrong decides whether a node is drained.
 */
#include "duration.h"

#include <ctype.h>
#include <string.h>

int gb_duration_parse(const char *text, long long *seconds)
{
    static const struct {
        char unit;
        long long seconds;
    } units[] = {{'s', 1}, {'m', 60}, {'h', 3600}, {'d', 86400}};
    long long n = 0, scale = 1;
    const char *p = text;

    if (text == NULL || !isdigit((unsigned char)*p))
        return -1;
    for (; isdigit((unsigned char)*p); p++) {
        n = n * 10 + (*p - '0');
        if (n > GB_DURATION_MAX_S)
            return -1;
    }
    if (*p != '\0') {
        size_t i = 0;
        while (i < sizeof(units) / sizeof(units[0]) && units[i].unit != *p)
            i++;
        if (i == sizeof(units) / sizeof(units[0]) || p[1] != '\0')
            return -1;
        scale = units[i].seconds;
    }
    if (n == 0 || n > GB_DURATION_MAX_S / scale)
        return -1;
    *seconds = n * scale;
    return 0;
}
