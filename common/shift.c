/*
 * shift.c - the Hodges-Lehmann shift, its Moses interval, the verdict and
 * the robust z; see shift.h for the rules and why these.
 *
 * The pairwise differences are never all listed: with both groups sorted,
 * the number of pairs whose difference is at most t is counted in one merge
 * pass, and the k-th smallest difference is found by search on t until
 * no more than m + n pairs lie between the two bounds; those few are then
 * listed (one more merge pass) and the k-th picked among them.  The answer
 * is the same difference bisection alone would end on (it is exactly the
 * k-th smallest of the differences as computed), in a handful of passes
 * instead of 55 or more: bisection on a double halves the value range, not
 * the pairs, and needs ~52 halvings to close down on one value; the
 * search also interpolates the counts to choose where to look next.
 */
#include "shift.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define Z_95 1.959963984540054
#define TEXT_OF(x) #x
#define TEXT(x) TEXT_OF(x)
#define CAP_TEXT TEXT(GB_SHIFT_MORE_CAP)

const char *gb_verdict_name(enum gb_verdict v)
{
    static const char *const names[] = {"same", "faster", "inconclusive",
                                        "slower", "within_spread", "too_few_runs"};

    return (unsigned)v < sizeof(names) / sizeof(names[0]) ? names[v] : "inconclusive";
}

int gb_verdict_severity(enum gb_verdict v)
{
    static const int rank[] = {
        [GB_SAME] = 0,
        [GB_WITHIN_SPREAD] = 1,
        [GB_TOO_FEW_RUNS] = 2,
        [GB_FASTER] = 3,
        [GB_INCONCLUSIVE] = 4,
        [GB_SLOWER] = 5,
    };

    return (unsigned)v < sizeof(rank) / sizeof(rank[0]) ? rank[v] : rank[GB_INCONCLUSIVE];
}

const char *gb_undecidable_reason(enum gb_undecidable u)
{
    static const char *const reasons[] = {
        [GB_AT_MARGIN] = "the shift sits at the margin: more samples will not decide it",
        [GB_TOO_NOISY] = "the interval is too wide for the margin: more than " CAP_TEXT
                         " samples a group would be needed",
    };

    return (unsigned)u < sizeof(reasons) / sizeof(reasons[0]) ? reasons[u] : NULL;
}

/* Sorts v[0..n-1] ascending (no NaN): quicksort on a median of three with
 * Hoare's partition (which splits runs of equal values down the middle:
 * pooled timings repeat), insertion sort for short spans, the smaller side
 * first so that the stack stays shallow.  Written out rather than qsort's:
 * a verdict sorts a few dozen arrays of thousands, and the comparison
 * through a function pointer was a fifth of a GET /compare. */
static void sort_doubles(double *v, int n)
{
    while (n > 16) {
        double a = v[0], b = v[n / 2], c = v[n - 1], pivot, t;
        int i = -1, j = n;
        pivot = a < b ? (b < c ? b : (a < c ? c : a)) : (a < c ? a : (b < c ? c : b));
        for (;;) {
            do
                i++;
            while (v[i] < pivot);
            do
                j--;
            while (v[j] > pivot);
            if (i >= j)
                break;
            t = v[i];
            v[i] = v[j];
            v[j] = t;
        }
        /* v[0..j] <= pivot <= v[j+1..n-1] */
        if (j + 1 < n - j - 1) {
            sort_doubles(v, j + 1);
            v += j + 1;
            n -= j + 1;
        } else {
            sort_doubles(v + j + 1, n - j - 1);
            n = j + 1;
        }
    }
    for (int i = 1; i < n; i++) {
        double x = v[i];
        int k = i;
        for (; k > 0 && v[k - 1] > x; k--)
            v[k] = v[k - 1];
        v[k] = x;
    }
}

double gb_median_inplace(double *x, int n)
{
    sort_doubles(x, n);
    return n % 2 ? x[n / 2] : (x[n / 2 - 1] + x[n / 2]) / 2;
}

/* The logs of the usable values of v, sorted, into a NEW array (*out, the
 * caller frees); returns how many, or -1 out of memory. */
static int sorted_logs(const double *v, int n, double **out)
{
    double *l = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    int k = 0;

    *out = l;
    if (l == NULL)
        return -1;
    for (int i = 0; i < n; i++)
        if (isfinite(v[i]) && v[i] > 0)
            l[k++] = log(v[i]);
    sort_doubles(l, k);
    return k;
}

/* Pairs (i, j) with y[j] - x[i] <= t; x[0..m-1], y[0..n-1] sorted.  Also
 * the largest such difference (*below; -INFINITY: none) and the smallest
 * larger one (*above; INFINITY: none), found in the same pass. */
static double count_le(const double *x, int m, const double *y, int n, double t, double *below,
                       double *above)
{
    double count = 0;
    int j = 0;

    *below = -INFINITY;
    *above = INFINITY;
    for (int i = 0; i < m; i++) {
        while (j < n && y[j] - x[i] <= t)
            j++;
        count += j;
        if (j > 0 && y[j - 1] - x[i] > *below)
            *below = y[j - 1] - x[i];
        if (j < n && y[j] - x[i] < *above)
            *above = y[j] - x[i];
    }
    return count;
}

/* The differences y[j] - x[i] with lo < d <= hi (the predicate count_le
 * uses), into out[cap]; how many (more than cap: out holds cap of them). */
static long list_between(const double *x, int m, const double *y, int n, double lo, double hi,
                         double *out, long cap)
{
    long k = 0;
    int jl = 0, jh = 0;

    for (int i = 0; i < m; i++) {
        while (jl < n && y[jl] - x[i] <= lo)
            jl++;
        while (jh < n && y[jh] - x[i] <= hi)
            jh++;
        for (int j = jl; j < jh; j++, k++)
            if (k < cap)
                out[k] = y[j] - x[i];
    }
    return k;
}

/* The k-th smallest (0-based) of v[0..n-1], reordering v (quickselect). */
static double select_kth(double *v, int n, int k)
{
    int lo = 0, hi = n - 1;

    while (lo < hi) {
        double pivot = v[lo + (hi - lo) / 2], t;
        int i = lo, j = hi;
        while (i <= j) {
            while (v[i] < pivot)
                i++;
            while (v[j] > pivot)
                j--;
            if (i <= j) {
                t = v[i];
                v[i++] = v[j];
                v[j--] = t;
            }
        }
        if (k <= j)
            hi = j;
        else if (k >= i)
            lo = i;
        else
            return v[k];
    }
    return v[k];
}

/* The k-th smallest (1-based) of the m n differences y[j] - x[i]; NAN
 * when out of memory. */
static double kth_difference(const double *x, int m, const double *y, int n, double k)
{
    double lo = y[0] - x[m - 1], hi = y[n - 1] - x[0], below, above;
    double c_lo = count_le(x, m, y, n, lo, &below, &above), c_hi = (double)m * n, c;

    if (c_lo >= k)
        return lo;
    /* count(lo) < k <= count(hi), hi always a difference.  The next t is
     * found by interpolating the counts, aimed a little below and then a
     * little above k so that both bounds close in, every third a plain
     * halving (which bounds the steps whatever the shape of the
     * differences).  A count below k with no difference between t and hi
     * makes hi the k-th (how ties end the search: timings repeat to the
     * last bit more often than one would think); so does no double
     * between lo and hi.  Once few pairs lie between, they are listed. */
    for (int step = 0;; step++) {
        double window = (m + n) / 4.0, aim = step % 3 == 0 ? k - window : k + window;
        double mid = lo + (hi - lo) * ((aim - c_lo) / (c_hi - c_lo));
        if (c_hi - c_lo <= m + n) {
            long want = (long)(c_hi - c_lo);
            double *between = malloc(sizeof(double) * (size_t)want);
            long got = between ? list_between(x, m, y, n, lo, hi, between, want) : 0;
            double kth = between && got == want
                             ? select_kth(between, (int)got, (int)(k - c_lo) - 1)
                             : NAN;
            free(between);
            return kth;
        }
        if (step % 3 == 2 || !(mid > lo && mid < hi))
            mid = lo + (hi - lo) / 2;
        if (!(mid > lo && mid < hi))
            return hi;
        c = count_le(x, m, y, n, mid, &below, &above);
        if (c >= k) {
            hi = below; /* the largest difference up to mid: same count */
            c_hi = c;
        } else {
            if (above >= hi)
                return hi;
            lo = mid;
            c_lo = c;
        }
    }
}

enum gb_verdict gb_shift_verdict(double shift, double ci_low, double ci_high,
                                 double margin)
{
    if (isnan(shift) || isnan(ci_low) || isnan(ci_high))
        return GB_INCONCLUSIVE;
    if (ci_low >= -margin && ci_high <= margin)
        return GB_SAME;
    if (ci_low > 0 && shift > margin)
        return GB_SLOWER;
    if (ci_high < 0) /* not inside the margin, so reaching below -margin */
        return GB_FASTER;
    return GB_INCONCLUSIVE;
}

int gb_shift_could_be_slower(enum gb_verdict v, double ci_high, double margin)
{
    return v == GB_INCONCLUSIVE && !(ci_high <= margin);
}

/* The interval's half-width at which the verdict rule decides a row whose
 * estimate is shift: inside the margin (same) when a positive estimate is
 * within it; clear of 0 (slower) when past it; a negative estimate is
 * decided by whichever comes first, clear of 0 (faster) or inside
 * (same).  0 when the estimate sits exactly at +margin. */
static double deciding_half(double shift, double margin)
{
    double a = fabs(shift);

    if (shift < 0)
        return a > margin - a ? a : margin - a;
    return a < margin ? margin - a : a > margin ? a
                                                : 0;
}

/* Further samples a group that would shrink the interval around shift to
 * a decision, with its width taken to scale as sqrt(1/m + 1/n); -1 with
 * *why set when more than GB_SHIFT_MORE_CAP would be needed. */
static long more_samples(const struct gb_shift *s, double margin, enum gb_undecidable *why)
{
    double half = (s->ci_high - s->ci_low) / 2, target = deciding_half(s->shift, margin);
    double want, base = 1.0 / s->n_baseline + 1.0 / s->n_candidate;
    long lo = 0, hi = 1;

    /* Past the cap, the estimate within half a margin under +margin is
     * what keeps it undecided (the target is that distance); otherwise
     * the noise is. */
    *why = s->shift > margin / 2 && s->shift <= margin ? GB_AT_MARGIN : GB_TOO_NOISY;
    if (!(half > 0) || !(target > 0))
        return -1;
    want = base * (target / half) * (target / half);
    if (want >= base) {
        *why = GB_DECIDABLE;
        return 1; /* as wide as it needs to be already: one more settles */
    }
    while (1.0 / (s->n_baseline + hi) + 1.0 / (s->n_candidate + hi) > want) {
        lo = hi;
        hi *= 2;
        if (lo >= GB_SHIFT_MORE_CAP)
            return -1;
    }
    while (hi - lo > 1) { /* the fewest k with the width small enough */
        long mid = lo + (hi - lo) / 2;
        if (1.0 / (s->n_baseline + mid) + 1.0 / (s->n_candidate + mid) > want)
            lo = mid;
        else
            hi = mid;
    }
    if (hi > GB_SHIFT_MORE_CAP)
        return -1;
    *why = GB_DECIDABLE;
    return hi;
}

int gb_shift_compare(const double *baseline, int nb, const double *candidate,
                     int nc, double margin, struct gb_shift *out)
{
    double *x = NULL, *y = NULL, pairs, c, mid;
    int m, n, rc = -1;

    memset(out, 0, sizeof(*out));
    out->shift = out->ci_low = out->ci_high = NAN;
    out->verdict = GB_INCONCLUSIVE;
    out->more_samples = -1;
    out->undecidable = GB_DECIDABLE;
    if (!(margin >= GB_SHIFT_MARGIN_MIN && margin <= GB_SHIFT_MARGIN_MAX))
        goto done;
    m = sorted_logs(baseline, nb, &x);
    n = m < 0 ? -1 : sorted_logs(candidate, nc, &y);
    if (m < 0 || n < 0)
        goto done;
    out->n_baseline = m;
    out->n_candidate = n;
    if (m < 2 || n < 2) {
        rc = 1;
        goto done;
    }
    pairs = (double)m * n;
    mid = kth_difference(x, m, y, n, floor((pairs + 1) / 2));
    if (fmod(pairs, 2) == 0)
        mid = (mid + kth_difference(x, m, y, n, pairs / 2 + 1)) / 2;
    c = floor(pairs / 2 - Z_95 * sqrt(pairs * (m + n + 1) / 12.0));
    if (c < 1)
        c = 1; /* too few samples for 95%: the whole range */
    out->shift = expm1(mid);
    out->ci_low = expm1(kth_difference(x, m, y, n, c));
    out->ci_high = expm1(kth_difference(x, m, y, n, pairs + 1 - c));
    if (isnan(out->shift) || isnan(out->ci_low) || isnan(out->ci_high)) {
        out->shift = out->ci_low = out->ci_high = NAN; /* out of memory */
        goto done;
    }
    out->verdict = gb_shift_verdict(out->shift, out->ci_low, out->ci_high, margin);
    if (out->verdict == GB_INCONCLUSIVE)
        out->more_samples = more_samples(out, margin, &out->undecidable);
    rc = 0;

done:
    free(x);
    free(y);
    return rc;
}

/* The median and the MAD of x[0..n-1]; 0, or -1 when n < 1 or out of
 * memory. */
static int centre_and_spread(const double *x, int n, double *median, double *mad)
{
    double *dev;

    if (n < 1 || (dev = malloc(sizeof(double) * (size_t)n)) == NULL)
        return -1;
    memcpy(dev, x, sizeof(double) * (size_t)n);
    *median = gb_median_inplace(dev, n);
    for (int i = 0; i < n; i++)
        dev[i] = fabs(x[i] - *median);
    *mad = gb_median_inplace(dev, n);
    free(dev);
    return 0;
}

/* x's robust z about med with MAD mad; a MAD of 0 gives 0 or +-INFINITY. */
static double robust_z(double x, double med, double mad)
{
    if (mad > 0)
        return 0.6745 * (x - med) / mad;
    return x == med ? 0 : x > med ? INFINITY
                                  : -INFINITY;
}

int gb_robust_z(const double *x, int n, double *z, double *median, double *mad)
{
    double med, spread;

    if (centre_and_spread(x, n, &med, &spread) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        z[i] = robust_z(x[i], med, spread);
    if (median)
        *median = med;
    if (mad)
        *mad = spread;
    return 0;
}

int gb_is_outlier(double z, double x, double med, double margin)
{
    return fabs(z) > GB_OUTLIER_Z && med != 0 && fabs(x / med - 1) > margin;
}

int gb_robust_z_among(double x, const double *h, int n, double *z, double *median)
{
    double med, spread;

    if (centre_and_spread(h, n, &med, &spread) != 0)
        return -1;
    *z = robust_z(x, med, spread);
    if (median)
        *median = med;
    return 0;
}

enum gb_verdict gb_history_verdict(enum gb_verdict pooled, int n_runs, double z)
{
    return n_runs < GB_HISTORY_MIN_RUNS ? GB_TOO_FEW_RUNS : gb_history_rule(pooled, z);
}

enum gb_verdict gb_history_rule(enum gb_verdict pooled, double z)
{
    if (pooled == GB_SLOWER)
        return z > GB_OUTLIER_Z ? GB_SLOWER : GB_WITHIN_SPREAD;
    if (pooled == GB_FASTER)
        return z < -GB_OUTLIER_Z ? GB_FASTER : GB_WITHIN_SPREAD;
    return pooled;
}
