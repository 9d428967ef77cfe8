/*
 * duration.c - see duration.h.
 */
#include "duration.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int gb_duration_ms(const char *text, int64_t *ms)
{
    static const struct {
        char unit;
        double ms;
    } units[] = {{'s', 1e3}, {'m', 60e3}, {'h', 3600e3}, {'d', 86400e3}};
    double scale = 1e3, v;
    char *end;

    if (text == NULL || text[0] == '\0' || text[0] == '-' || text[0] == '+')
        return -1;
    v = strtod(text, &end);
    if (end == text)
        return -1;
    if (*end != '\0') {
        scale = 0;
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
            if (end[0] == units[i].unit && end[1] == '\0')
                scale = units[i].ms;
        if (scale == 0)
            return -1;
    }
    v *= scale;
    if (!isfinite(v) || v < 1 || v > (double)GB_DURATION_MAX_MS)
        return -1;
    *ms = (int64_t)llround(v);
    return 0;
}
