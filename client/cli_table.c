/*
 * cli_table.c - see cli_table.h.  The table is a fixed array (no growth
 * to bound); result rows are shown through one column table below, so a
 * benchmark's new field is a line there.
 */
#include "cli_table.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

struct cli_table *cli_table_new(void)
{
    return calloc(1, sizeof(struct cli_table));
}

void cli_table_row(struct cli_table *t)
{
    if (t->nrows == CLI_TABLE_MAX_ROWS) {
        t->dropped++;
        return;
    }
    t->nrows++;
    t->ncols = 0;
}

void cli_table_cell(struct cli_table *t, const char *fmt, ...)
{
    va_list ap;

    if (t->dropped || t->nrows == 0 || t->ncols == CLI_TABLE_MAX_COLS)
        return;
    va_start(ap, fmt);
    vsnprintf(t->cells[t->nrows - 1][t->ncols++], CLI_TABLE_CELL, fmt, ap);
    va_end(ap);
}

void cli_table_json(struct cli_table *t, const cJSON *v, const char *fmt)
{
    char *text;

    if (v == NULL || cJSON_IsNull(v)) {
        cli_table_cell(t, "-");
    } else if (cJSON_IsString(v)) {
        cli_table_cell(t, "%s", v->valuestring);
    } else if (cJSON_IsNumber(v)) {
        double x = v->valuedouble;
        if (x == floor(x) && fabs(x) < 1e15)
            cli_table_cell(t, "%.0f", x);
        else
            cli_table_cell(t, fmt, x);
    } else if ((text = cJSON_PrintUnformatted(v)) != NULL) {
        cli_table_cell(t, "%s", text);
        free(text);
    } else {
        cli_table_cell(t, "?");
    }
}

void cli_table_print(FILE *out, const struct cli_table *t, int colour)
{
    size_t width[CLI_TABLE_MAX_COLS] = {0};
    int cols = 0;

    for (int r = 0; r < t->nrows; r++)
        for (int k = 0; k < CLI_TABLE_MAX_COLS; k++) {
            size_t n = strlen(t->cells[r][k]);
            if (n > width[k])
                width[k] = n;
            if (n && k + 1 > cols)
                cols = k + 1;
        }
    for (int r = 0; r < t->nrows; r++) {
        if (r == 0 && colour)
            fputs("\033[1m", out);
        for (int k = 0; k < cols; k++)
            fprintf(out, "%s%-*s", k ? "  " : "", k + 1 < cols ? (int)width[k] : 0,
                    t->cells[r][k]);
        fputs(r == 0 && colour ? "\033[0m\n" : "\n", out);
    }
    if (t->dropped)
        fprintf(out, "(%d more rows not shown; --json has them all)\n", t->dropped);
}

/* The measured fields a result row may have, in the order shown. */
static const struct {
    const char *field, *header, *fmt;
} result_columns[] = {
    {"predicted_degree", "predicted", "%.2f"},
    {"median_ms", "median ms", "%.4f"},
    {"min_ms", "min ms", "%.4f"},
    {"max_ms", "max ms", "%.4f"},
    {"spread", "spread", "%.4f"},
    {"ratio", "ratio", "%.3f"},
    {"gbps", "GB/s", "%.1f"},
    {"share_of_peak", "of peak", "%.3f"},
    {"valid", "valid", "%g"},
};

#define RESULT_COLUMNS (sizeof(result_columns) / sizeof(result_columns[0]))

/* The row key field the daemon aligns rows by (compare.c's list). */
static const char *row_key(const cJSON *rows)
{
    static const char *const keys[] = {"stride", "variant", "pattern", NULL};
    const cJSON *first = cJSON_GetArrayItem(rows, 0);

    for (int i = 0; keys[i]; i++)
        if (cJSON_GetObjectItem(first, keys[i]))
            return keys[i];
    return NULL;
}

void cli_table_result_rows(struct cli_table *t, const cJSON *rows)
{
    const char *key = row_key(rows);
    int shown[RESULT_COLUMNS] = {0};
    const cJSON *row;

    cJSON_ArrayForEach(row, rows) {
        for (size_t k = 0; k < RESULT_COLUMNS; k++)
            shown[k] |= cJSON_GetObjectItem(row, result_columns[k].field) != NULL;
    }
    cli_table_row(t);
    if (key)
        cli_table_cell(t, "%s", key);
    for (size_t k = 0; k < RESULT_COLUMNS; k++)
        if (shown[k])
            cli_table_cell(t, "%s", result_columns[k].header);
    cJSON_ArrayForEach(row, rows) {
        cli_table_row(t);
        if (key)
            cli_table_json(t, cJSON_GetObjectItem(row, key), "%g");
        for (size_t k = 0; k < RESULT_COLUMNS; k++)
            if (shown[k])
                cli_table_json(t, cJSON_GetObjectItem(row, result_columns[k].field),
                               result_columns[k].fmt);
    }
}
