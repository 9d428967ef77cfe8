/*
 * line_reader.c - bounded line input; see line_reader.h.
 */
#include "line_reader.h"

#include <stdlib.h>

static int grow(char **buf, size_t *cap, size_t need)
{
    size_t next = *cap ? *cap : 256;
    char *p;

    while (next < need)
        next *= 2;
    if (next == *cap)
        return 0;
    p = realloc(*buf, next);
    if (p == NULL)
        return -1;
    *buf = p;
    *cap = next;
    return 0;
}

enum gb_line_status gb_read_line(FILE *f, char **buf, size_t *cap, size_t max,
                                 size_t *len)
{
    size_t n = 0;
    int c, any = 0, too_long = 0;

    *len = 0;
    while ((c = getc(f)) != EOF) {
        any = 1;
        if (c == '\n')
            break;
        if (too_long)
            continue;
        if (n >= max) {
            too_long = 1;
            continue;
        }
        if (grow(buf, cap, n + 2) != 0)
            return GB_LINE_NOMEM;
        (*buf)[n++] = (char)c;
    }
    if (!any)
        return GB_LINE_EOF;
    if (too_long)
        return GB_LINE_TOO_LONG;
    if (grow(buf, cap, n + 1) != 0)
        return GB_LINE_NOMEM;
    if (n > 0 && (*buf)[n - 1] == '\r')
        n--;
    (*buf)[n] = '\0';
    *len = n;
    return GB_LINE_OK;
}
