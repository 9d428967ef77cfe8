/*
 * fleet.h - a card among the other cards of its model: per row, the robust
 * z of its median among every card's (common/shift.h's gb_robust_z and
 * gb_is_outlier), for a run judged at its end (run_verdicts.c) and for
 * GET /fleet and /metrics.
 *
 * Pure: cards come in as arrays of result rows (a run's rows, or their
 * digest: key field and median_ms are all that is read), the answer goes
 * out as JSON.  A row is judged only where at least FLEET_MIN_CARDS cards
 * have it: the median and MAD of two values say nothing of which is off.
 */
#ifndef GPUBENCH_JUDGE_FLEET_H
#define GPUBENCH_JUDGE_FLEET_H

#include <cjson/cJSON.h>

#define FLEET_MIN_CARDS 3

/* The run of benchmark with rows judged against peers (an array of
 * {"host", "device_uuid", "run_id", "rows"}: each other card's latest
 * valid run of the same key), with margin a fraction.  Every row's time is
 * taken per unit of work, the units read from the row itself (pass a
 * digest: compare_row_digest), and the answer's times are per "time_per"
 * (common/work_units.h).  Returns a NEW object {"cards", "time_per",
 * "peers": [run ids], "rows": [{"key", "value_ms", "median_ms", "mad_ms",
 * "z", "outlier"}], "outlier_rows": [keys]}, or NULL out of memory.  z is
 * null where the row was not judged or is infinite (a MAD of 0; then
 * outlier says whether it lies past the margin). */
cJSON *fleet_judge_run(const char *benchmark, const cJSON *rows, const cJSON *peers,
                       double margin);

/* GET /fleet's answer from cards (an array of {"group", "benchmark",
 * "card_model", "params", "host", "device_uuid", "run_id", "rows"}; cards
 * of one group share its comparability key): per group the rows' median
 * and MAD and each card's value (per unit of work, named in the group's
 * "time_per"), z and outlier, the cards with an outlier
 * row first (by largest |z|).  A NEW object {"margin", "groups": [...]},
 * or NULL out of memory. */
cJSON *fleet_build(const cJSON *cards, double margin);

#endif
