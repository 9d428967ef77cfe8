/*
 * quiet.c - the quiet-card rule; see quiet.h.
 */
#include "quiet.h"

#include <string.h>

enum gb_quiet_mode gb_quiet_mode_parse(const char *text)
{
    if (text != NULL && strcmp(text, "off") == 0)
        return GB_QUIET_OFF;
    if (text != NULL && strcmp(text, "check") == 0)
        return GB_QUIET_CHECK;
    return GB_QUIET_WAIT;
}

const char *gb_quiet_mode_name(enum gb_quiet_mode mode)
{
    switch (mode) {
    case GB_QUIET_OFF:
        return "off";
    case GB_QUIET_CHECK:
        return "check";
    case GB_QUIET_WAIT:
        return "wait";
    }
    return "?";
}

void gb_quiet_begin(struct gb_quiet_state *st)
{
    memset(st, 0, sizeof(*st));
    st->util_max = -1;
}

int gb_quiet_reading_is_quiet(const struct gb_quiet_reading *r)
{
    return r->procs <= 0 && r->util_percent < GB_QUIET_UTIL_PERCENT;
}

enum gb_quiet_decision gb_quiet_step(struct gb_quiet_state *st, const struct gb_quiet_reading *r,
                                     enum gb_quiet_mode mode, double wait_s)
{
    int quiet = gb_quiet_reading_is_quiet(r);

    st->readings++;
    if (r->util_percent > st->util_max)
        st->util_max = r->util_percent;
    if (quiet && !st->quiet)
        st->quiet_since = r->t_s;
    st->quiet = quiet;
    if (mode != GB_QUIET_WAIT)
        return GB_QUIET_GO;
    if (quiet && r->t_s - st->quiet_since >= GB_QUIET_HOLD_S)
        return GB_QUIET_GO;
    if (r->t_s >= wait_s)
        return quiet ? GB_QUIET_GO : GB_QUIET_TIMED_OUT;
    return GB_QUIET_WAITING;
}

int gb_quiet_read_trace(FILE *f, struct gb_quiet_reading *out, int cap)
{
    char line[256];
    int n = 0;

    while (fgets(line, sizeof(line), f) != NULL) {
        struct gb_quiet_reading r;
        if (line[0] == '#' || line[0] == '\n')
            continue;
        if (sscanf(line, "%lf %d %d", &r.t_s, &r.procs, &r.util_percent) != 3)
            return -1;
        if (n < cap)
            out[n] = r;
        n++;
    }
    return n < cap ? n : cap;
}
