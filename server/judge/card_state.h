/*
 * card_state.h - whether a card is healthy, degraded or unknown (issue 24;
 * README "Expected values"), judged from what the caller read: the card's
 * newest valid health runs and a list of faults.  Pure, so GET /cards,
 * /coverage and `gpubench check` give one answer, and it is unit-tested
 * alone (tests/unit/test_card_state.c).
 *
 * A fault is {"kind", "message", "at"}: anything that makes the card
 * degraded.  A confirmed floor alert is one (card_floor_fault), and so is
 * a floor missed by two runs in a row (card_repeat_faults); the card's
 * events (NVML's XIDs, row remaps, a link below its maximum) are others,
 * added by their own code.  A floor missed once is not a fault: its alert
 * waits for its confirming runs (alerts.h), and the state says so.
 */
#ifndef GPUBENCH_JUDGE_CARD_STATE_H
#define GPUBENCH_JUDGE_CARD_STATE_H

#include <stdint.h>
#include <cjson/cJSON.h>

/* The coverage window GET /cards and `gpubench check` use without
 * ?max_age=: a card with no valid health run younger is unknown. */
#define CARD_MAX_AGE_DEFAULT_MS (24LL * 3600 * 1000)

/* The state of a card: a NEW {"state": "healthy" | "degraded" | "unknown",
 * "reason", "last_checked_at" (the newest of health_runs' finished_at, or
 * null)}, or NULL when out of memory.
 *   health_runs: its newest valid health run of each benchmark, each
 *     {"benchmark", "finished_at", "finished_ms", "checks"} (as
 *     store_card_health reads them); NULL is none.
 *   faults: [{"kind", "message", "at"}]; NULL is none.
 * degraded when there is a fault (the reason is the newest one's message);
 * else unknown when no health run finished within max_age_ms of now_ms;
 * else healthy. */
cJSON *card_state_judge(const cJSON *health_runs, const cJSON *faults, int64_t now_ms,
                        int64_t max_age_ms);

/* The fault an open, confirmed floor alert (acknowledged or not) is
 * ({"benchmark", "row", "at", "check"} as store_card_floor_alerts reads
 * it): {"kind": "floor",
 * "message": "hbm_bandwidth triad 3100 GB/s < 3918 GB/s floor", "at"}.
 * NEW, or NULL when out of memory. */
cJSON *card_floor_fault(const cJSON *alert);

/* A floor missed twice in a row is confirmed whether or not this daemon
 * measured the runs (a hub's pulled runs, imported ones: no alert is
 * raised for those, so the runs themselves are the record): for each of
 * pairs (store_card_repeat_misses': a benchmark's newest valid run and the
 * run of the same request before it, each with its "checks"), each row
 * that failed its floor in both is a fault {"kind": "floor", "message"
 * (card_check_line of the newest), "at" (the newest's end)} appended to
 * faults, unless alerts (store_card_floor_alerts' list) has an open one of
 * that benchmark and row already.  A failed exact check (a wrong result:
 * common/expect_deep.h) is a fault in the newest run alone, as a wrong
 * result measured here is confirmed at once; such a card heals when its
 * newest valid run of the benchmark passes (no alert to acknowledge).  0,
 * or -1 out of memory. */
int card_repeat_faults(const cJSON *pairs, const cJSON *alerts, cJSON *faults);

/* The line of a missed check of benchmark: "BENCHMARK ROW VALUE UNIT <
 * FLOOR UNIT floor" (a ceiling's: "> CEILING UNIT ceiling"), or the
 * check's own "message" where it has one (a deep check's, naming the SM or
 * the address: common/expect_deep.h), into buf (cap). */
void card_check_line(const char *benchmark, const cJSON *check, char *buf, size_t cap);

/* The learned value of row of benchmark: the median of that row's value
 * over the cards of model_runs (as store_model_checks reads them, one run
 * a card and benchmark), into *median with the number of cards in
 * *n_cards; 1 when at least min_cards cards have it, else 0. */
int card_learned(const cJSON *model_runs, const char *benchmark, const char *row, int min_cards,
                 double *median, int *n_cards);

#endif
