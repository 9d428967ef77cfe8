/*
 * changepoint.c - see changepoint.h.  The E-divisive sweep is O(n^2) for a
 * window of n points: the three sums of distances (across, within the
 * left, within the right) are moved one point at a time from the right
 * side to the left, each move O(n).  Student's t distribution is the
 * regularized incomplete beta function by Lentz's continued fraction.
 */
#include "changepoint.h"

#include <math.h>
#include <string.h>

/* The continued fraction of the incomplete beta I_x(a, b) (modified
 * Lentz), valid for x < (a + 1) / (a + b + 2). */
static double beta_cf(double a, double b, double x)
{
    const double tiny = 1e-300;
    double c = 1.0, d = 1.0 - (a + b) * x / (a + 1.0), h;

    if (fabs(d) < tiny)
        d = tiny;
    d = 1.0 / d;
    h = d;
    for (int m = 1; m <= 300; m++) {
        double m2 = 2.0 * m;
        double num = m * (b - m) * x / ((a + m2 - 1.0) * (a + m2));
        d = 1.0 + num * d;
        d = fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
        c = 1.0 + num / c;
        if (fabs(c) < tiny)
            c = tiny;
        h *= d * c;
        num = -(a + m) * (a + b + m) * x / ((a + m2) * (a + m2 + 1.0));
        d = 1.0 + num * d;
        d = fabs(d) < tiny ? 1.0 / tiny : 1.0 / d;
        c = 1.0 + num / c;
        if (fabs(c) < tiny)
            c = tiny;
        double del = d * c;
        h *= del;
        if (fabs(del - 1.0) < 1e-14)
            break;
    }
    return h;
}

/* The regularized incomplete beta I_x(a, b). */
static double beta_inc(double a, double b, double x)
{
    double front;

    if (x <= 0.0)
        return 0.0;
    if (x >= 1.0)
        return 1.0;
    front = exp(lgamma(a + b) - lgamma(a) - lgamma(b) + a * log(x) + b * log1p(-x));
    if (x < (a + 1.0) / (a + b + 2.0))
        return front * beta_cf(a, b, x) / a;
    return 1.0 - front * beta_cf(b, a, 1.0 - x) / b;
}

double cp_t_two_sided_p(double t, double df)
{
    if (!(df > 0) || isnan(t))
        return 1.0;
    if (isinf(t))
        return 0.0;
    return beta_inc(df / 2.0, 0.5, df / (df + t * t));
}

double cp_t_quantile(double p, double df)
{
    double lo = 0.0, hi = 1e3, two_sided = 2.0 * (1.0 - p);

    /* P(|T| > q) falls as q grows: bisect it to two_sided. */
    for (int i = 0; i < 100; i++) {
        double mid = 0.5 * (lo + hi);
        if (cp_t_two_sided_p(mid, df) > two_sided)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

double cp_t975(double df)
{
    /* Cornish-Fisher expansion of Student's quantile about the normal's
     * (Abramowitz and Stegun 26.7.5): within 1e-4 of the exact from 8
     * degrees of freedom, the fewest either test here has; the exact
     * (cp_t_quantile) costs a bisection. */
    const double z = 1.959963984540054, z2 = z * z;
    double g1 = (z2 + 1) * z / 4, g2 = ((5 * z2 + 16) * z2 + 3) * z / 96;
    double g3 = (((3 * z2 + 19) * z2 + 17) * z2 - 15) * z / 384;
    double g4 = ((((79 * z2 + 776) * z2 + 1482) * z2 - 1920) * z2 - 945) * z / 92160;

    return z + g1 / df + g2 / (df * df) + g3 / (df * df * df) + g4 / (df * df * df * df);
}

/* Residual sum of squares of the least-squares line of x over its index. */
static double line_rss(const double *x, int n)
{
    struct cp_sums s = {0};

    for (int i = 0; i < n; i++)
        cp_sums_add(&s, i, x[i]);
    double stt = s.stt - s.st * s.st / s.n, stx = s.stx - s.st * s.sx / s.n;
    double sxx = s.sxx - s.sx * s.sx / s.n;
    return stt > 0 ? sxx - stx * stx / stt : sxx;
}

/* Whether the step at index is a step rather than a steady slope: least
 * squares of x on (1, i, [i >= index]), each coefficient t-tested.  A
 * steady decline makes the best split look like a step to the two-sample
 * test; fitted with its line, the step is not significant, and a line
 * fits it about as well as the step.  A step near the middle of the
 * window is much like a line too (the two columns correlate), hence the
 * second way: a fit clearly better than the line's (changepoint.h). */
static int not_a_slope(const double *x, int n, int index, double step_rss, int beside_line)
{
    double m[3][7] = {{0}}, coef[3], rss = 0;

    for (int i = 0; i < n; i++) {
        double row[3] = {1.0, (double)i, i >= index ? 1.0 : 0.0};
        for (int r = 0; r < 3; r++) {
            for (int c = 0; c < 3; c++)
                m[r][c] += row[r] * row[c];
            m[r][3] += row[r] * x[i];
        }
    }
    /* Gauss-Jordan on [A | b | I]: the coefficients and A's inverse. */
    for (int r = 0; r < 3; r++)
        m[r][4 + r] = 1.0;
    for (int c = 0; c < 3; c++) {
        int p = c;
        for (int r = c + 1; r < 3; r++)
            if (fabs(m[r][c]) > fabs(m[p][c]))
                p = r;
        if (fabs(m[p][c]) < 1e-12)
            return 1; /* degenerate: the two-sample test decides */
        for (int k = 0; k < 7; k++) {
            double t = m[c][k];
            m[c][k] = m[p][k];
            m[p][k] = t;
        }
        for (int r = 0; r < 3; r++) {
            if (r == c)
                continue;
            double f = m[r][c] / m[c][c];
            for (int k = 0; k < 7; k++)
                m[r][k] -= f * m[c][k];
        }
    }
    for (int r = 0; r < 3; r++)
        coef[r] = m[r][3] / m[r][r];
    for (int i = 0; i < n; i++) {
        double e = x[i] - coef[0] - coef[1] * i - (i >= index ? coef[2] : 0.0);
        rss += e * e;
    }
    double se_step = sqrt(rss / (n - 3) * m[2][6] / m[2][2]);
    if (!(se_step > 0))
        return 1;
    if (cp_t_two_sided_p(coef[2] / se_step, n - 3) <= CP_STEP_OVER_LINE_P)
        return 1;
    /* a drifting series' windows are a line already: only the first way */
    return !beside_line && line_rss(x, n) >= CP_STEP_OVER_LINE_RSS * step_rss;
}

/* The step at index of x[0..n) tested: out filled, 1 when it is
 * significant as cp_find_step says. */
static int test_step(const double *x, int n, int index, double max_p, int beside_line,
                     struct cp_step *out)
{
    double ml = 0, mr = 0, ssl = 0, ssr = 0;
    int nl = index, nr = n - index;

    for (int i = 0; i < n; i++)
        *(i < index ? &ml : &mr) += x[i];
    ml /= nl;
    mr /= nr;
    for (int i = 0; i < n; i++) {
        double d = x[i] - (i < index ? ml : mr);
        *(i < index ? &ssl : &ssr) += d * d;
    }
    double df = n - 2, pooled = (ssl + ssr) / df;
    double se = sqrt(pooled * (1.0 / nl + 1.0 / nr)), diff = mr - ml;
    double tq = cp_t975(df);

    out->index = index;
    out->mean_before = ml;
    out->mean_after = mr;
    out->shift = expm1(diff);
    out->ci_low = expm1(diff - tq * se);
    out->ci_high = expm1(diff + tq * se);
    /* The exact p only where it could matter: far from the threshold the
     * continued fraction would be the sweep's dearest part. */
    double t = se > 0 ? diff / se : (diff != 0 ? INFINITY : 0);
    out->p_value = fabs(t) >= CP_P_EXACT_FROM_T ? cp_t_two_sided_p(t, df) : NAN;
    return !isnan(out->p_value) && out->p_value <= max_p && fabs(out->shift) >= CP_MIN_MAGNITUDE &&
           not_a_slope(x, n, index, ssl + ssr, beside_line);
}

/* Each point's distances to every other summed (row[k]), and all pairs'
 * sum, from the sorted values and their prefix sums: O(n log n). */
static double distance_rows(const double *x, int n, double *row)
{
    double sorted[CP_WINDOW], prefix[CP_WINDOW + 1], pairs = 0;

    /* insertion sort: 50 values at most, inlined, faster than qsort's calls */
    for (int i = 0; i < n; i++) {
        int j = i;
        for (; j > 0 && sorted[j - 1] > x[i]; j--)
            sorted[j] = sorted[j - 1];
        sorted[j] = x[i];
    }
    prefix[0] = 0;
    for (int i = 0; i < n; i++) {
        prefix[i + 1] = prefix[i] + sorted[i];
        pairs += sorted[i] * (2.0 * i - n + 1);
    }
    for (int k = 0; k < n; k++) {
        int lo = 0, hi = n; /* the first sorted value >= x[k] */
        while (lo < hi) {
            int mid = (lo + hi) / 2;
            if (sorted[mid] < x[k])
                lo = mid + 1;
            else
                hi = mid;
        }
        row[k] = x[k] * lo - prefix[lo] + (prefix[n] - prefix[lo]) - x[k] * (n - lo);
    }
    return pairs;
}

/* The largest |t| of the pooled two-sample t-test over every split of
 * x[0..n) with at least min_seg points a side, from prefix sums. */
static double max_split_t(const double *x, int n, int min_seg)
{
    double sum = 0, sq = 0, left = 0, left_sq = 0, best = 0;

    for (int i = 0; i < n; i++) {
        sum += x[i];
        sq += x[i] * x[i];
    }
    for (int k = 0; k < n - min_seg; k++) {
        left += x[k];
        left_sq += x[k] * x[k];
        int nl = k + 1, nr = n - nl;
        if (nl < min_seg)
            continue;
        double ml = left / nl, mr = (sum - left) / nr;
        double ss = (left_sq - left * ml) + ((sq - left_sq) - (sum - left) * mr);
        double se = sqrt((ss > 0 ? ss : 0) / (n - 2) * (1.0 / nl + 1.0 / nr));
        double t = se > 0 ? fabs(mr - ml) / se : (mr != ml ? INFINITY : 0);
        if (t > best)
            best = t;
    }
    return best;
}

int cp_find_step(const double *x, int n, int min_seg, double max_p, int beside_line,
                 struct cp_step *out)
{
    double within_l = 0, within_r, across = 0, best = -INFINITY, row[CP_WINDOW];
    int best_index = -1;

    memset(out, 0, sizeof(*out));
    out->index = -1;
    out->p_value = 1.0;
    if (min_seg < 2 || n < 2 * min_seg || n > CP_WINDOW)
        return 0;
    /* Whatever split E-divisive picks, its t-test cannot pass when no
     * split's can: an O(n) look first, so a steady series (nearly every
     * run) costs no O(n^2) sweep. */
    if (max_p <= CP_SHORTCUT_MAX_P && max_split_t(x, n, min_seg) < CP_SHORTCUT_T)
        return 0;
    within_r = distance_rows(x, n, row);
    /* Move x[k] from the right to the left: the left is x[0..k] after. */
    for (int k = 0; k < n - min_seg; k++) {
        double dl = 0, dr;
        for (int i = 0; i < k; i++)
            dl += fabs(x[i] - x[k]);
        dr = row[k] - dl;
        within_l += dl;
        within_r -= dr;
        across += dr - dl;
        int nl = k + 1, nr = n - nl;
        if (nl < min_seg)
            continue;
        double e = 2.0 * across / ((double)nl * nr) - within_l / (nl * (nl - 1) / 2.0) -
                   within_r / (nr * (nr - 1) / 2.0);
        double q = (double)nl * nr / n * e;
        if (q > best) {
            best = q;
            best_index = nl;
        }
    }
    /* A best split at the last place it may be, min_seg from the end, may
     * be a step still coming in (its first runs after, with runs before
     * it on the right): wait for one more run before placing it. */
    int found = test_step(x, n, best_index, max_p, beside_line, out) && best_index < n - min_seg;
    out->q = best;
    return found;
}

void cp_sums_add(struct cp_sums *s, double t, double x)
{
    s->n += 1;
    s->st += t;
    s->sx += x;
    s->stt += t * t;
    s->stx += t * x;
    s->sxx += x * x;
}

int cp_drift_of(const struct cp_sums *s, double span_days, double threshold,
                struct cp_drift *out)
{
    memset(out, 0, sizeof(*out));
    out->n = (int)s->n;
    out->span_days = span_days;
    if (s->n < CP_DRIFT_MIN_RUNS || span_days < CP_DRIFT_MIN_DAYS)
        return -1;
    double stt = s->stt - s->st * s->st / s->n, stx = s->stx - s->st * s->sx / s->n;
    double sxx = s->sxx - s->sx * s->sx / s->n;
    if (!(stt > 0))
        return -1;
    double slope = stx / stt, df = s->n - 2;
    double rss = sxx - slope * stx;
    double se = sqrt((rss > 0 ? rss : 0) / df / stt);
    double tq = cp_t975(df);
    out->per_month = expm1(slope * CP_DRIFT_DAYS);
    out->ci_low = expm1((slope - tq * se) * CP_DRIFT_DAYS);
    out->ci_high = expm1((slope + tq * se) * CP_DRIFT_DAYS);
    double t = se > 0 ? slope / se : (slope != 0 ? INFINITY : 0);
    out->p_value = fabs(t) >= CP_P_EXACT_FROM_T ? cp_t_two_sided_p(t, df) : NAN;
    out->reported = !isnan(out->p_value) && out->p_value <= CP_DRIFT_MAX_PVALUE &&
                    fabs(out->per_month) >= threshold;
    return 0;
}
