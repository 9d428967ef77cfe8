/*
 * change_series.c - see change_series.h.  The blob is this build's own
 * layout (a magic and a version first, then the fields in host order):
 * a database moved to a machine of another byte order, or a build with
 * another layout, starts each series afresh rather than misreading it.
 */
#include "change_series.h"

#include <math.h>
#include <string.h>

#define CS_MAGIC 0x31534347u /* "GCS1" */

/* The daily sums rebuilt from the window's points (after a step: the new
 * segment is the window's right side). */
static void rebuild_days(struct change_series *s)
{
    s->ndays = 0;
    s->t0 = s->n > 0 ? floor(s->pts[0].t) : 0;
    double newest = s->n > 0 ? floor(s->pts[s->n - 1].t) : 0;
    for (int i = 0; i < s->n; i++) {
        double day = floor(s->pts[i].t);
        if (day < newest - CP_DRIFT_DAYS)
            continue;
        if (s->ndays == 0 || s->days[s->ndays - 1].day != day) {
            memset(&s->days[s->ndays], 0, sizeof(s->days[0]));
            s->days[s->ndays++].day = day;
        }
        cp_sums_add(&s->days[s->ndays - 1].sums, s->pts[i].t - s->t0, s->pts[i].x);
    }
}

/* Adds one point to the daily sums, dropping days past the drift window. */
static void add_to_days(struct change_series *s, double t, double x)
{
    double day = floor(t);
    int i;

    if (s->ndays == 0)
        s->t0 = day;
    double newest = s->ndays > 0 && s->days[s->ndays - 1].day > day ? s->days[s->ndays - 1].day
                                                                    : day;
    if (day < newest - CP_DRIFT_DAYS)
        return; /* older than the window: it says nothing of the drift now */
    for (i = s->ndays - 1; i >= 0 && s->days[i].day > day; i--)
        ;
    if (i < 0 || s->days[i].day != day) {
        /* a new day after i */
        int at = i + 1;
        if (s->ndays == CS_DAYS) {
            memmove(&s->days[0], &s->days[1], sizeof(s->days[0]) * (size_t)(--s->ndays));
            at--;
        }
        memmove(&s->days[at + 1], &s->days[at], sizeof(s->days[0]) * (size_t)(s->ndays - at));
        memset(&s->days[at], 0, sizeof(s->days[0]));
        s->days[at].day = day;
        s->ndays++;
        i = at;
    }
    cp_sums_add(&s->days[i].sums, t - s->t0, x);
    /* days that fell out of the window */
    int drop = 0;
    while (drop < s->ndays && s->days[drop].day < newest - CP_DRIFT_DAYS)
        drop++;
    if (drop > 0) {
        s->ndays -= drop;
        memmove(&s->days[0], &s->days[drop], sizeof(s->days[0]) * (size_t)s->ndays);
    }
}

/* Inserts the point in time order (ties by id), the oldest dropped when
 * the window is full. */
static void add_point(struct change_series *s, double t, double x, const char *run_id)
{
    int at;

    if (s->n == CP_WINDOW)
        memmove(&s->pts[0], &s->pts[1], sizeof(s->pts[0]) * (size_t)(--s->n));
    for (at = s->n; at > 0; at--) {
        const struct cs_point *p = &s->pts[at - 1];
        if (p->t < t || (p->t == t && strcmp(p->run_id, run_id) <= 0))
            break;
    }
    memmove(&s->pts[at + 1], &s->pts[at], sizeof(s->pts[0]) * (size_t)(s->n - at));
    s->pts[at].t = t;
    s->pts[at].x = x;
    /* zero-filled: the blob keeps all CS_RUN_ID_MAX bytes, and none of
     * them may be whatever the heap held before */
    memset(s->pts[at].run_id, 0, sizeof(s->pts[at].run_id));
    memcpy(s->pts[at].run_id, run_id, strlen(run_id));
    s->n++;
}

/* The drift's window summed into *total (changepoint.h): the segment's
 * last CP_DRIFT_DAYS days (the daily sums) or, where those hold fewer
 * runs than the change window does, the window's runs (the segment's
 * newest CP_WINDOW) within CP_DRIFT_MAX_DAYS of the newest.  *span: the
 * points' first to last day; *window: the window's length in days. */
static void drift_sums(const struct change_series *s, struct cp_sums *total, double *span,
                       double *window)
{
    memset(total, 0, sizeof(*total));
    for (int i = 0; i < s->ndays; i++) {
        const struct cp_sums *d = &s->days[i].sums;
        total->n += d->n;
        total->st += d->st;
        total->sx += d->sx;
        total->stt += d->stt;
        total->stx += d->stx;
        total->sxx += d->sxx;
    }
    *span = s->ndays > 0 ? s->days[s->ndays - 1].day - s->days[0].day : 0;
    *window = CP_DRIFT_DAYS;
    if (s->n <= total->n)
        return;
    struct cp_sums runs = {0};
    double newest = s->pts[s->n - 1].t;
    int first = s->n - 1;
    while (first > 0 && s->pts[first - 1].t >= newest - CP_DRIFT_MAX_DAYS)
        first--;
    for (int i = first; i < s->n; i++)
        cp_sums_add(&runs, s->pts[i].t - newest, s->pts[i].x);
    if (runs.n <= total->n)
        return;
    *total = runs;
    *span = floor(newest) - floor(s->pts[first].t);
    *window = newest - s->pts[first].t > CP_DRIFT_DAYS ? newest - s->pts[first].t : CP_DRIFT_DAYS;
}

int change_series_step(struct change_series *s, double t, double x, const char *run_id,
                       struct cs_found *found)
{
    double xs[CP_WINDOW], span, window;
    struct cp_sums total;

    memset(found, 0, sizeof(*found));
    memset(&s->last, 0, sizeof(s->last));
    if (strlen(run_id) >= CS_RUN_ID_MAX || !isfinite(t) || !isfinite(x))
        return -1;
    s->runs++;
    if (s->n > 0 && t < s->pts[0].t)
        return 0; /* before the window: counted, joins nothing */
    add_point(s, t, x, run_id);
    add_to_days(s, t, x);
    for (int i = 0; i < s->n; i++)
        xs[i] = s->pts[i].x;
    if (cp_find_step(xs, s->n, CP_MIN_SEGMENT, CP_MAX_PVALUE,
                     s->drifting > CP_DRIFT_SETTLED_RUNS, &found->s)) {
        int k = found->s.index;
        found->step = 1;
        strcpy(found->step_run_id, s->pts[k].run_id);
        found->step_t = s->pts[k].t;
        found->n_before = k;
        found->n_after = s->n - k;
        s->n -= k;
        memmove(&s->pts[0], &s->pts[k], sizeof(s->pts[0]) * (size_t)s->n);
        rebuild_days(s);
        s->drifting = 0;
    }
    drift_sums(s, &total, &span, &window);
    if (cp_drift_of(&total, span, CP_DRIFT_PER_MONTH, &found->d) == 0 &&
        (found->d.reported || (s->drifting && (found->d.ci_low > 0 || found->d.ci_high < 0)))) {
        /* reported once, when it starts; it goes on while its 95%
         * interval excludes zero (changepoint.h: the end's hysteresis) */
        found->drift = !s->drifting;
        s->drifting++;
    } else {
        s->drifting = 0;
    }
    found->d.window_days = window;
    s->last = *found;
    return 0;
}

struct cs_header {
    unsigned magic;
    unsigned size; /* sizeof(struct change_series): the layout's check */
    long long runs;
    int n, ndays, drifting, pad;
    double t0;
};

int change_series_encode(const struct change_series *s, unsigned char *buf, size_t cap,
                         size_t *len)
{
    struct cs_header h = {CS_MAGIC, (unsigned)sizeof(*s), s->runs, s->n, s->ndays, s->drifting,
                          0, s->t0};
    size_t pts = sizeof(s->pts[0]) * (size_t)s->n, days = sizeof(s->days[0]) * (size_t)s->ndays;

    *len = sizeof(h) + pts + days + sizeof(s->last);
    if (*len > cap)
        return -1;
    memcpy(buf, &h, sizeof(h));
    memcpy(buf + sizeof(h), s->pts, pts);
    memcpy(buf + sizeof(h) + pts, s->days, days);
    memcpy(buf + sizeof(h) + pts + days, &s->last, sizeof(s->last));
    return 0;
}

int change_series_decode(struct change_series *s, const unsigned char *buf, size_t len)
{
    struct cs_header h;

    memset(s, 0, sizeof(*s));
    if (len < sizeof(h))
        return -1;
    memcpy(&h, buf, sizeof(h));
    if (h.magic != CS_MAGIC || h.size != sizeof(*s) || h.n < 0 || h.n > CP_WINDOW ||
        h.ndays < 0 || h.ndays > CS_DAYS ||
        len != sizeof(h) + sizeof(s->pts[0]) * (size_t)h.n + sizeof(s->days[0]) * (size_t)h.ndays +
                   sizeof(s->last))
        return -1;
    s->runs = h.runs;
    s->n = h.n;
    s->ndays = h.ndays;
    s->drifting = h.drifting;
    s->t0 = h.t0;
    memcpy(s->pts, buf + sizeof(h), sizeof(s->pts[0]) * (size_t)h.n);
    memcpy(s->days, buf + sizeof(h) + sizeof(s->pts[0]) * (size_t)h.n,
           sizeof(s->days[0]) * (size_t)h.ndays);
    memcpy(&s->last,
           buf + sizeof(h) + sizeof(s->pts[0]) * (size_t)h.n + sizeof(s->days[0]) * (size_t)h.ndays,
           sizeof(s->last));
    s->last.step_run_id[CS_RUN_ID_MAX - 1] = '\0';
    for (int i = 0; i < s->n; i++)
        s->pts[i].run_id[CS_RUN_ID_MAX - 1] = '\0';
    return 0;
}
