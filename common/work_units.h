/*
 * work_units.h - the one table of what a result row's times are a time of
 * (work_units.c): per benchmark, the unit of work (an iteration of the
 * shared-memory loop, a launch, a copy, ...) and where a run states how
 * many units one sample held.
 *
 * A row's samples (median_ms, min_ms, max_ms, ...) are the time of the
 * calibrated work of one sample, and the calibration picks that work per
 * run (a power of two that lasts at least min_sample_ms: kernels/
 * calibrate.c).  Two runs of one card whose calibration landed on
 * different work differ 2x or 4x in milliseconds for the same speed, so
 * every comparison across runs (GET /compare, verdicts, the fleet's z,
 * the /metrics result gauges) divides a row's times by its units a sample
 * (gb_work_units) and says which unit its times are per (gb_work_unit).
 * A single run's own page and exports keep the times as measured.
 */
#ifndef GPUBENCH_COMMON_WORK_UNITS_H
#define GPUBENCH_COMMON_WORK_UNITS_H

#include <cjson/cJSON.h>

#ifdef __cplusplus
extern "C" {
#endif

struct gb_work_unit {
    const char *benchmark;
    const char *unit; /* one unit of work, singular ("iteration") */
    /* The row's own count of units one sample held (a digest row and, from
     * the worker that writes it, every row carry it), or NULL. */
    const char *row_field;
    /* Where the run's summary says it for every row (summary.OBJECT.FIELD),
     * for runs whose rows do not; NULL: nowhere. */
    const char *summary_object, *summary_field;
    /* 1: the worker already divided each sample by its count (measure.cu's
     * per_launch), so a sample's time is per unit and the count is 1. */
    int per_unit;
    const char *help; /* a sentence: what one unit is */
};

/* The entry of benchmark, or the default one (unit "sample", per_unit: a
 * benchmark the table does not know is compared per sample, as measured).
 * Never NULL; static storage. */
const struct gb_work_unit *gb_work_unit(const char *benchmark);

/* The units of work one sample of row held, for a row of benchmark: 1 for a
 * per_unit benchmark; else the row's row_field, else summary's (summary
 * may be NULL: a digest row carries its own).  A row that states no count
 * (a hand-made run; every worker has written the summary's) is taken as
 * one unit a sample.  Never less than 1. */
double gb_work_units(const char *benchmark, const cJSON *summary, const cJSON *row);

/* Whether a result field is a time that gb_work_units divides: its unit
 * in the result-field table is "ms". */
int gb_field_is_time(const char *field);

/* A NEW object for GET /benchmarks: benchmark's entry as {"unit",
 * "help", "per_unit", "row_field", "summary_object", "summary_field"}
 * (absent ones null), so that the page divides as gb_work_units does;
 * NULL on allocation failure. */
cJSON *gb_work_unit_describe(const char *benchmark);

#ifdef __cplusplus
}
#endif

#endif
