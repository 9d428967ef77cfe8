/*
 * shift.h - is one group of timings slower than another, and how sure is
 * that?  The statistics behind the verdicts, pure C with no I/O
 * and no JSON, so that GET /compare, a run judged at its end and the fleet
 * view all decide by the same rules, and the rules are measured on their
 * own by seeded simulation (tests/unit/test_shift.c).
 *
 * Two groups (a baseline and a candidate, each every sample of every run
 * of one row) are compared in log time, so that a shift is a ratio and
 * reads as a fraction: +0.02 is "the candidate takes 2% longer".
 *
 *  - The estimate is the Hodges-Lehmann shift: the median of the
 *    differences log(c_j) - log(b_i) over ALL pairs.
 *  - Its 95% interval is the distribution-free one that goes with it
 *    (Moses; the Mann-Whitney test inverted): the C-th smallest and C-th
 *    largest pairwise differences, C from the normal approximation of the
 *    rank sum, C = floor(m n / 2 - 1.96 sqrt(m n (m + n + 1) / 12)).
 *    Chosen over a bootstrap because it needs no random numbers (the same
 *    runs give the same answer on every node), no assumption about the
 *    shape of timing noise (skewed, a few slow samples), and costs
 *    O((m + n) log) with the pair counting below rather than thousands of
 *    resamples.  Ties are not corrected for (timings are continuous).
 *  - The k-th pairwise difference is found without listing the m n pairs:
 *    bisection on the value, counting the pairs below it in O(m + n), so
 *    a group of many runs costs no memory per pair.
 *
 * Samples are pooled over runs: run-to-run variation within a group is
 * treated as sample noise, which makes the interval optimistic when runs
 * of one card differ more than samples of one run do.
 *
 * The verdict, with margin a fraction (0.01 = 1%):
 *   same          the interval lies inside [-margin, +margin]
 *   slower        the interval lies above 0 and the estimate above +margin
 *   faster        the interval lies below 0 (and, not being inside the
 *                 margin, reaches below -margin)
 *   inconclusive  anything else, with a rough count of further samples a
 *                 group that would decide it (the interval's width taken
 *                 to scale as sqrt(1/m + 1/n)), or why no count would.
 * The rule is lopsided on purpose: a false "slower" fails a CI
 * job, so slower also wants the estimate past the margin; a candidate
 * that cannot be slower at all (its whole interval below 0) is faster,
 * whatever its estimate, rather than an "inconclusive" that fails the
 * gate.  Every inconclusive row can still be slower or faster by more
 * than the margin (were it not, its interval would be inside the margin).
 * test_shift.c measures both rules' rates side by side.
 *
 * The fleet's rule: a card's value x among its siblings' has the robust
 * z = 0.6745 (x - median) / MAD, and is an outlier when |z| > 3.5 AND x
 * differs from the median by more than the margin.  The second condition
 * is ours: in a tight fleet the MAD is a fraction of a per cent and z alone
 * flags differences that are measurement noise (about one trial in nine
 * among 16 equal cards with 0.5% noise; the rate is printed by the unit
 * test), the false alarms the issue cites.
 */
#ifndef GPUBENCH_COMMON_SHIFT_H
#define GPUBENCH_COMMON_SHIFT_H

#ifdef __cplusplus
extern "C" {
#endif

#define GB_SHIFT_MARGIN_DEFAULT 0.01
#define GB_SHIFT_MARGIN_MIN 0.001
#define GB_SHIFT_MARGIN_MAX 0.5
/* The most further samples a group that more_samples names; past it the
 * row says why more samples will not decide (gb_undecidable).  2,000 is
 * ten runs at the default max_samples (200), or a hundred runs at the
 * default 20 samples: what a lab would run to settle one question.  Past
 * a few times a group's size the count is not worth much anyway: it
 * scales the interval as sqrt(1/m + 1/n), as if pooled samples were
 * independent, and run-to-run variation (see above) makes them less so
 * the more runs are pooled. */
#define GB_SHIFT_MORE_CAP 2000
#define GB_OUTLIER_Z 3.5

/* The method, as the answers name it. */
#define GB_SHIFT_METHOD "hodges-lehmann shift of log time, 95% moses (mann-whitney) interval"

/* What gb_shift_compare decides, in order of severity, then the two that
 * only a run judged against its card's history gets (gb_history_verdict).
 * A run's verdict is its worst row's, by gb_verdict_severity. */
enum gb_verdict {
    GB_SAME = 0,
    GB_FASTER = 1,
    GB_INCONCLUSIVE = 2,
    GB_SLOWER = 3,
    GB_WITHIN_SPREAD = 4, /* the pooled samples differ, the run's median
                           * not beyond the card's run-to-run spread */
    GB_TOO_FEW_RUNS = 5,  /* fewer than GB_HISTORY_MIN_RUNS history runs */
};

/* "same", "faster", "inconclusive", "slower", "within_spread",
 * "too_few_runs" (static strings). */
const char *gb_verdict_name(enum gb_verdict v);

/* Rank for a run's worst row: same, within_spread, too_few_runs, faster,
 * inconclusive, slower. */
int gb_verdict_severity(enum gb_verdict v);

/* Why an inconclusive row has no more_samples. */
enum gb_undecidable {
    GB_DECIDABLE = 0, /* more_samples says how many, or the row is decided */
    GB_AT_MARGIN = 1, /* the estimate sits at +margin: the interval would
                       * have to shrink to the distance between them */
    GB_TOO_NOISY = 2, /* the interval is too wide for the margin: more
                       * than GB_SHIFT_MORE_CAP samples a group */
};

/* The reason, as the answers give it (static strings), or NULL for
 * GB_DECIDABLE. */
const char *gb_undecidable_reason(enum gb_undecidable u);

struct gb_shift {
    double shift;  /* candidate / baseline - 1, Hodges-Lehmann */
    double ci_low; /* its 95% interval, same units */
    double ci_high;
    int n_baseline; /* samples used (positive and finite) */
    int n_candidate;
    enum gb_verdict verdict;
    /* inconclusive: further samples a group that would decide it,
     * roughly; -1 otherwise, or past GB_SHIFT_MORE_CAP, and then
     * undecidable says why */
    long more_samples;
    enum gb_undecidable undecidable;
};

/* Compares candidate[0..nc-1] with baseline[0..nb-1] (times, or cycles:
 * any positive scale; values not positive or not finite are skipped).
 * margin must lie in [GB_SHIFT_MARGIN_MIN, GB_SHIFT_MARGIN_MAX].  The
 * inputs are not changed.  Returns 0 and fills *out; 1 when a group has
 * fewer than 2 usable samples (out->verdict inconclusive, shift and
 * interval NaN, the counts set); -1 on a bad margin or out of memory. */
int gb_shift_compare(const double *baseline, int nb, const double *candidate,
                     int nc, double margin, struct gb_shift *out);

/* The verdict rule alone, on an estimate and its interval (fractions). */
enum gb_verdict gb_shift_verdict(double shift, double ci_low, double ci_high,
                                 double margin);

/* 1 when a row with verdict v and interval top ci_high (a fraction; NaN
 * when unknown) could still be slower than +margin, undecided: what makes
 * `gpubench compare` exit 2.  A row that is slower is decided, and one
 * whose interval stays under +margin cannot be slower by more than it. */
int gb_shift_could_be_slower(enum gb_verdict v, double ci_high, double margin);

/* The median of x[0..n-1] (n >= 1), sorting x in place. */
double gb_median_inplace(double *x, int n);

/* Robust z of each x[i] among x[0..n-1] into z[0..n-1] (x is not
 * changed); *median and *mad (when not NULL) get the centre and the median
 * absolute deviation.  A MAD of 0 gives z 0 for values at the median and
 * +-INFINITY for the others.  Returns 0, or -1 when n < 1 or out of
 * memory. */
int gb_robust_z(const double *x, int n, double *z, double *median, double *mad);

/* 1 when a value x with robust z among values of median med is an outlier:
 * |z| > GB_OUTLIER_Z and |x / med - 1| > margin. */
int gb_is_outlier(double z, double x, double med, double margin);

/* Robust z of x among h[0..n-1] (x not one of them), as gb_robust_z
 * scores the values among themselves; *median (when not NULL) gets h's.
 * Returns 0, or -1 when n < 1 or out of memory. */
int gb_robust_z_among(double x, const double *h, int n, double *z, double *median);

/* History verdicts: a run judged at its end against its card's last runs
 * of the same key (server/runs/run_verdicts.c), which raise alerts.  The
 * pooled-sample interval above treats the card's run-to-run variation as
 * sample noise; on an idle, healthy H200 smem_stride's ~1 ms rows moved
 * 1.5-3% from run to run while one run's samples sat far tighter, so a
 * one-run history called a swing slower and its confirming run confirmed
 * it.  So a history verdict also asks whether the run lies
 * beyond the card's own spread, and needs enough runs to know that spread.
 *
 * GB_HISTORY_MIN_RUNS: the fewest history runs a row is judged against;
 * below it every row is too_few_runs and nothing is raised.
 * The rule, with z = gb_robust_z_among(the run's median per unit of work,
 * the history runs' medians):
 *   slower         pooled slower (interval above 0, shift past +margin)
 *                  AND z > GB_OUTLIER_Z
 *   faster         pooled faster AND z < -GB_OUTLIER_Z
 *   within_spread  pooled slower or faster, |z| not past GB_OUTLIER_Z:
 *                  a swing the card makes anyway
 *   same, inconclusive  as pooled
 * Chosen by seeded simulation (tests/unit/test_shift.c, simulated_history,
 * which prints the table): a healthy card whose every run has its own
 * lognormal offset (sigma 1.09%, the run-to-run spread of the H200's
 * stride-33 medians per iteration in tests/api/data/h200_alternating_smem_
 * runs.ndjson; 0.53% for stride 1) around which its samples scatter
 * (sigma 0.37%, resp. 0.16%: the robust spread of that data's samples
 * about their run's median; tests/api/h200_spread.py prints both), runs of
 * 5 and 20 samples alternating as in that data.  A false alert is a run
 * and its confirming run both slower.  With one history run the pooled
 * rule alone gives a false alert in 13% of trials at stride 33's spread
 * (2.9% at stride 1's), the alert an idle H200 raised.  With the z rule, from 8
 * to 12 runs a false alert comes in at most 0.3% of trials at stride 33's
 * spread and 0.1% at stride 1's, and a card 10% slower is confirmed in at
 * least 99.7%; a card 5% slower in at least 99.8% at stride 1's spread,
 * about 70% at stride 33's (there 5% is under five of the card's own
 * sigmas).  At 7 runs the false alerts at stride 33's spread are 0.6%
 * (2.9% at 3 runs): a MAD of a few medians is itself noisy, so the z of a
 * swing is large more often than 3.5 suggests.  A single run called
 * slower raises no alert, only queues a confirming run (2.4% of healthy
 * runs at stride 33's spread from 8 runs on, 20% with the pooled rule). */
#define GB_HISTORY_MIN_RUNS 8

/* The history verdict of a row whose pooled samples gave pooled, from
 * n_runs history runs and the run's robust z among their medians. */
enum gb_verdict gb_history_verdict(enum gb_verdict pooled, int n_runs, double z);

/* The rule alone, whatever the number of runs (the simulation's). */
enum gb_verdict gb_history_rule(enum gb_verdict pooled, double z);

#ifdef __cplusplus
}
#endif

#endif
