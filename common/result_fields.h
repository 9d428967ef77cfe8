/*
 * result_fields.h - the one table of result-row fields (result_fields.c):
 * what a row of a run's results.rows may hold, with its type, unit, the
 * benchmarks that report it and what each reader does with it.
 *
 * The server walks it for the CSV columns (api_exports.c), the aggregates
 * of GET /compare (compare.c), the /metrics gauges (api_metrics.c) and the
 * columns of a run's markdown report (report_md.c);
 * GET /benchmarks publishes it (gb_result_fields_describe), and the page
 * builds its row tables and its compare menu from that.  Adding a field a
 * benchmark reports is adding a line there.  A field not in the table is
 * still stored and shown in the run's JSON; it is only not a column.
 */
#ifndef GPUBENCH_COMMON_RESULT_FIELDS_H
#define GPUBENCH_COMMON_RESULT_FIELDS_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "bench_spec.h"

#ifdef __cplusplus
extern "C" {
#endif

enum gb_field_type {
    GB_FIELD_NUMBER,  /* any number */
    GB_FIELD_INT,     /* a whole number (a count, a stride) */
    GB_FIELD_TEXT,    /* a string */
    GB_FIELD_BOOL,    /* true or false */
    GB_FIELD_SAMPLES, /* an array of numbers (every sample, ms) */
};

/* What the readers do with a field (gb_result_field.uses). */
enum {
    GB_USE_KEY = 1 << 0,          /* the row's key within its run (stride, variant) */
    GB_USE_CSV = 1 << 1,          /* a column of the CSV exports, in table order */
    GB_USE_MEDIAN = 1 << 2,       /* /compare: the median over runs, per row key */
    GB_USE_LOWEST = 1 << 3,       /* /compare: the lowest over runs */
    GB_USE_HIGHEST = 1 << 4,      /* /compare: the highest over runs */
    GB_USE_GAUGE = 1 << 5,        /* /metrics: gpubench_result_NAME of each card's latest run */
    GB_USE_COMPARE_MENU = 1 << 6, /* the page's compare view offers it as its metric */
    GB_USE_REPORT = 1 << 7,       /* a column of a run's markdown report (GET /runs/ID.md) */
    GB_USE_ROW_UNIT = 1 << 8,     /* its unit is the row's own "unit" (GB/s, TFLOP/s, us) */
    GB_USE_DIGEST = 1 << 10,      /* kept in a run's digest, as KEY and the aggregated
                                   * fields are (GET /fleet reads it) */
    GB_USE_CSV_LATE = 1 << 9,     /* with GB_USE_CSV: after the run's trailing columns
                                   * (method, checks_failed, damaged), since it came
                                   * after them: new columns go at the end */
};

/* The most fields the table may hold (readers size arrays by it; a unit
 * test holds the table to it). */
#define GB_RESULT_FIELDS_MAX 48

/* A gauge's metric name is this prefix and the field's name in
 * Prometheus base units (gb_result_field_gauge). */
#define GB_GAUGE_PREFIX "gpubench_result_"

struct gb_result_field {
    const char *name;
    enum gb_field_type type;
    const char *unit;              /* "ms", "GB/s", "MHz", "x" (times a baseline),
                                    * "share" (0..1), "" for counts and names */
    const char *label;             /* a table's column header */
    const char *short_label;       /* in a sentence or a menu: "median time" */
    int digits;                    /* significant digits a page shows; 0: all */
    const char *const *benchmarks; /* NULL-terminated; NULL: every benchmark */
    unsigned uses;                 /* GB_USE_* */
    const char *help;              /* a sentence: what it is */
};

/* The table, in CSV column order.  Static storage. */
const struct gb_result_field *gb_result_field_at(size_t i);
size_t gb_result_field_count(void);

/* The field called name, or NULL.  Static storage. */
const struct gb_result_field *gb_result_field_find(const char *name);

/* The name of f's CSV column: its name, but for a field whose name a run
 * column of the CSV already has (the row's label is row_label beside the
 * run's label), so that every column's name is unique.  Static storage. */
const char *gb_result_field_csv_name(const struct gb_result_field *f);

/* The /metrics gauge of a GB_USE_GAUGE field, in Prometheus base units:
 * its name into name (cap bytes) and the factor from the field's unit to
 * it into *scale: "median_ms" (ms) is gpubench_result_median_seconds times
 * 1e-3, "gbps" (GB/s) gpubench_result_bytes_per_second times 1e9, other
 * fields GB_GAUGE_PREFIX and their name times 1.  0, or -1 when name is
 * too small. */
int gb_result_field_gauge(const struct gb_result_field *f, char *name, size_t cap,
                          double *scale);

/* Checks the rows of a run of benchmark (results.rows, a JSON array)
 * against the table of the fields each benchmark's rows must carry
 * (result_fields.c, beside the field table): its key, median_ms and
 * samples, and for the rows measured against a peak their unit and value
 * (a row that says "available": false carries no timing).  A field of the
 * field table that a row holds must be of its type or null; fields the
 * table does not know are accepted (a newer node's).  0, or -1 with err
 * filled (code missing_field or wrong_type, the field's path under
 * "results.rows[i]."). */
int gb_result_rows_check(const char *benchmark, const cJSON *rows, struct gb_error *err);

/* 1 when benchmark has an entry in the table of required row fields (a
 * unit test holds every benchmark that is not test-only to having one). */
int gb_result_rows_known(const char *benchmark);

/* The type's name as GET /benchmarks spells it ("number", ...). */
const char *gb_field_type_name(enum gb_field_type type);

/* A NEW array describing every field for GET /benchmarks: name, type,
 * unit, label, short_label, digits, benchmarks (null: all), and the uses
 * as booleans (key, csv, compare: "median"/"lowest"/"highest"/null, gauge:
 * the metric's name or null, compare_menu, report, row_unit), help, and
 * csv_column (the CSV column's name, null when it is none).  Caller owns it; NULL on
 * allocation failure. */
cJSON *gb_result_fields_describe(void);

#ifdef __cplusplus
}
#endif

#endif
