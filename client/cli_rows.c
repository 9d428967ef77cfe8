/*
 * cli_rows.c - a run's results as tables for the terminal (cli_rows.h):
 * its rows, with the columns, headers and units of the result-field table
 * (common/result_fields.c, which the page and the reports read too), and
 * p2p_bandwidth's matrices (results.summary.matrix) as from-by-to tables.
 *
 * A terminal has less room than the page, so a column is a field the table
 * lists that some row has a value for, less the ones in left_out[] below
 * (every sample, the interval's ends, the clocks: --json and the page have
 * them).  Its header is the field's short label and unit.  The fields the
 * table marks GB_USE_ROW_UNIT (value, peak) are in the row's own unit
 * (GB/s, TFLOP/s, us), written in each cell, so rows of different units
 * (p2p's bandwidths and latencies) share columns.
 */
#include "cli_rows.h"
#include "cli_table.h"
#include "result_fields.h"
#include "work_units.h"

#include <stdlib.h>
#include <string.h>

/* Fields the terminal leaves to --json and the page. */
static const char *const left_out[] = {
    "min_ms",
    "max_ms",
    "ci_low_ms",
    "ci_high_ms",
    "mem_clock_mhz",
    "sm_clock_mhz_measured",
    "expected_bank_conflicts",
    "unit", /* written after value and peak instead */
    NULL,
};

/* results.summary.matrix's tables (p2p_bandwidth), in the order shown. */
static const struct {
    const char *field, *title, *unit;
} matrices[] = {
    {"gbps", "bandwidth", "GB/s"},
    {"latency_us", "latency", "us"},
};

static int listed(const char *const *list, const char *name)
{
    for (; *list; list++)
        if (strcmp(*list, name) == 0)
            return 1;
    return 0;
}

static int has_value(const cJSON *rows, const char *name)
{
    const cJSON *row, *v;

    cJSON_ArrayForEach(row, rows) {
        v = cJSON_GetObjectItem(row, name);
        if (v && !cJSON_IsNull(v))
            return 1;
    }
    return 0;
}

/* The row key (the first key field of the table that rows have), or NULL. */
static const struct gb_result_field *row_key(const cJSON *rows)
{
    const struct gb_result_field *f;

    for (size_t i = 0; (f = gb_result_field_at(i)) != NULL; i++)
        if ((f->uses & GB_USE_KEY) && has_value(rows, f->name))
            return f;
    return NULL;
}

static void header(struct cli_table *t, const struct gb_result_field *f)
{
    const char *u = f->unit;

    /* Shares are shown as %, ratios with ×, in the cells. */
    if (u[0] == '\0' || strcmp(u, "share") == 0 || strcmp(u, "x") == 0 ||
        strstr(f->short_label, u) != NULL)
        cli_table_cell(t, "%s", f->short_label);
    else
        cli_table_cell(t, "%s (%s)", f->short_label, u);
}

static void cell(struct cli_table *t, const struct gb_result_field *f, const cJSON *row)
{
    const cJSON *v = cJSON_GetObjectItem(row, f->name);
    const char *unit = NULL;
    char suffix[32] = "";

    if (f->uses & GB_USE_ROW_UNIT) /* value, peak: in the row's own unit */
        unit = cJSON_GetStringValue(cJSON_GetObjectItem(row, "unit"));
    if (v == NULL || cJSON_IsNull(v)) {
        cli_table_cell(t, "-");
    } else if (cJSON_IsBool(v)) {
        cli_table_cell(t, "%s", cJSON_IsTrue(v) ? "yes" : "no");
    } else if (!cJSON_IsNumber(v)) {
        cli_table_json(t, v, "%g");
    } else if (strcmp(f->unit, "share") == 0) {
        cli_table_number(t, 100 * v->valuedouble, f->digits, "%");
    } else {
        if (strcmp(f->unit, "x") == 0)
            snprintf(suffix, sizeof(suffix), "×");
        else if (unit)
            snprintf(suffix, sizeof(suffix), " %.24s", unit);
        cli_table_number(t, v->valuedouble, f->type == GB_FIELD_INT ? 0 : f->digits, suffix);
    }
}

void cli_rows_table(struct cli_table *t, const cJSON *rows)
{
    const struct gb_result_field *key = row_key(rows), *cols[GB_RESULT_FIELDS_MAX], *f;
    const cJSON *row;
    int n = 0;

    for (size_t i = 0; (f = gb_result_field_at(i)) != NULL && n < GB_RESULT_FIELDS_MAX; i++)
        if (!(f->uses & GB_USE_KEY) && f->type != GB_FIELD_SAMPLES &&
            !listed(left_out, f->name) && has_value(rows, f->name))
            cols[n++] = f;
    cli_table_row(t);
    if (key)
        cli_table_cell(t, "%s", key->short_label);
    for (int k = 0; k < n; k++)
        header(t, cols[k]);
    cJSON_ArrayForEach(row, rows) {
        cli_table_row(t);
        if (key)
            cli_table_json(t, cJSON_GetObjectItem(row, key->name), "%g");
        for (int k = 0; k < n; k++)
            cell(t, cols[k], row);
    }
}

static int any_number(const cJSON *matrix)
{
    const cJSON *line, *v;

    cJSON_ArrayForEach(line, matrix) {
        cJSON_ArrayForEach(v, line) {
            if (cJSON_IsNumber(v))
                return 1;
        }
    }
    return 0;
}

/* One matrix of summary.matrix: a row a source GPU, a column a destination. */
static void print_matrix(FILE *out, const cJSON *m, size_t which, int colour)
{
    const cJSON *devices = cJSON_GetObjectItem(m, "devices");
    const cJSON *values = cJSON_GetObjectItem(m, matrices[which].field), *d, *line;
    struct cli_table *t;

    if (!any_number(values) || cJSON_GetArraySize(devices) == 0)
        return; /* one GPU: no pair (summary.no_pair says why) */
    if ((t = cli_table_new()) == NULL) {
        fprintf(stderr, "gpubench: out of memory\n");
        return;
    }
    fprintf(out, "\n%s, %s, from the GPU of a row to the GPU of a column:\n",
            matrices[which].title, matrices[which].unit);
    cli_table_row(t);
    cli_table_cell(t, "from \\ to");
    cJSON_ArrayForEach(d, devices) {
        cli_table_cell(t, "GPU %d", cJSON_IsNumber(d) ? d->valueint : -1);
    }
    /* a line of values beside each device, the two lists walked together */
    line = cJSON_IsArray(values) ? values->child : NULL;
    cJSON_ArrayForEach(d, devices) {
        const cJSON *v = cJSON_IsArray(line) ? line->child : NULL, *col;
        cli_table_row(t);
        cli_table_cell(t, "GPU %d", cJSON_IsNumber(d) ? d->valueint : -1);
        cJSON_ArrayForEach(col, devices) {
            if (cJSON_IsNumber(v))
                cli_table_number(t, v->valuedouble, 4, "");
            else
                cli_table_cell(t, "-");
            v = v ? v->next : NULL;
        }
        line = line ? line->next : NULL;
    }
    cli_table_print(out, t, colour);
    free(t);
}

/* What one sample of the rows' times was, where it was more than one
 * unit of work (common/work_units.h): the run's times are as measured, a
 * comparison's are per unit. */
static void print_sample(FILE *out, const char *benchmark, const cJSON *results)
{
    const struct gb_work_unit *u = gb_work_unit(benchmark);
    double n = gb_work_units(benchmark, cJSON_GetObjectItem(results, "summary"),
                             cJSON_GetArrayItem(cJSON_GetObjectItem(results, "rows"), 0));

    if (!u->per_unit && n > 1)
        fprintf(out, "\ntimes are per sample: one sample is %.0f %ss (compare gives ms per %s)\n",
                n, u->unit, u->unit);
}

void cli_rows_print(FILE *out, const char *benchmark, const cJSON *results, int colour)
{
    const cJSON *rows = cJSON_GetObjectItem(results, "rows");
    const cJSON *matrix = cJSON_GetObjectItem(cJSON_GetObjectItem(results, "summary"), "matrix");
    struct cli_table *t;

    if (cJSON_GetArraySize(rows) > 0) {
        if ((t = cli_table_new()) == NULL) {
            fprintf(stderr, "gpubench: out of memory\n");
            return;
        }
        fputc('\n', out);
        cli_rows_table(t, rows);
        cli_table_print(out, t, colour);
        free(t);
        print_sample(out, benchmark, results);
    }
    for (size_t i = 0; i < sizeof(matrices) / sizeof(matrices[0]); i++)
        print_matrix(out, matrix, i, colour);
}
