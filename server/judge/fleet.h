/*
 * fleet.h - a card among the other cards of its model: per row, the robust
 * z of its median among every card's (common/shift.h's gb_robust_z and
 * gb_is_outlier), for a run judged at its end (run_verdicts.c) and for
 * GET /fleet and /metrics.
 *
 * Pure: cards come in as arrays of result rows (a run's rows, or their
 * digest: key field and median_ms are all that is read), the answer goes
 * out as JSON.  A row is judged only where at least FLEET_MIN_CARDS cards
 * have it: the median and MAD of a few values say little of which is off.
 */
#ifndef GPUBENCH_JUDGE_FLEET_H
#define GPUBENCH_JUDGE_FLEET_H

#include <cjson/cJSON.h>

/* The fewest cards of one model and key that are judged at all (issue 21:
 * three cards gave z -68.6 from a MAD of two nearly equal values).
 * Chosen by seeded simulation (tests/unit/test_shift.c, simulated_fleet_
 * minimum, which prints the table): cards of equal truth with 0.3%, 0.5%
 * and 1% run-to-run noise (the H200 runs in examples/ spread so), the
 * rule of shift.h.  With 3 cards a card 7% slow is flagged in only ~91%
 * of trials at 0.5% noise, and a healthy card falsely in ~2.2%; from 4 on
 * every count up to 16 flags the 7% card in at least 99%, a 5% one in at
 * least 95%, and a healthy card in at most 2% (at 1% noise at most 5%).
 * Below it a group says too_few_cards and flags nobody. */
#define FLEET_MIN_CARDS 4

/* The run of benchmark with rows judged against peers (an array of
 * {"host", "device_uuid", "run_id", "rows"}: each other card's latest
 * valid run of the same key), with margin a fraction.  Every row's time is
 * taken per unit of work, the units read from the row itself (pass a
 * digest: compare_row_digest), and the answer's times are per "time_per"
 * (common/work_units.h).  Returns a NEW object {"cards", "too_few_cards",
 * "cards_needed", "time_per", "peers": [run ids], "rows": [{"key",
 * "value_ms", "median_ms", "mad_ms", "z", "outlier"}], "outlier_rows":
 * [keys]}, or NULL out of memory.  z is null where the row was not judged
 * or is infinite (a MAD of 0; then outlier says whether it lies past the
 * margin). */
cJSON *fleet_judge_run(const char *benchmark, const cJSON *rows, const cJSON *peers,
                       double margin);

/* GET /fleet's answer from cards (an array of {"group", "benchmark",
 * "card_model", "params", "method", "build", "host", "device_uuid",
 * "run_id", "rows"}; cards of one group share its comparability key, and
 * so its method): per group its key (with "method", compare_method_of) and
 * the rows' median and MAD and each card's value (per unit of work, named
 * in the group's "time_per"), z and outlier, the cards with an outlier row
 * first (by largest |z|).  Cards of one model measured by different
 * methods are separate groups, never scored against each other; each such
 * group says so in "method_note" (null otherwise).  Each group also has
 * "too_few_cards", "n_cards" and "cards_needed"; a group of known_answer
 * runs "result_hashes" and each card "hash_differs" (fleet_hash.h).  A
 * NEW object {"margin",
 * "groups": [...]}, or NULL out of memory. */
cJSON *fleet_build(const cJSON *cards, double margin);

#endif
