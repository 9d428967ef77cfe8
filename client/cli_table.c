/*
 * cli_table.c - see cli_table.h.  The table is a fixed array (no growth
 * to bound).  A run's result rows are made into a table by cli_rows.c.
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

void cli_table_number(struct cli_table *t, double v, int digits, const char *suffix)
{
    double a = fabs(v);

    if (!isfinite(v))
        cli_table_cell(t, "%g%s", v, suffix);
    else if (digits <= 0 && v == floor(v) && a < 1e15)
        cli_table_cell(t, "%.0f%s", v, suffix);
    else if (a != 0 && (a < 1e-3 || a >= 1e9))
        cli_table_cell(t, "%.*e%s", (digits > 0 ? digits : 6) - 1, v, suffix);
    else {
        /* Decimals for `digits` significant ones: 3843.03 at 4 is 3843,
         * 0.0021191 is 0.002119. */
        int d = (digits > 0 ? digits : 6) - 1 - (a == 0 ? 0 : (int)floor(log10(a)));
        cli_table_cell(t, "%.*f%s", d > 0 ? d : 0, v, suffix);
    }
}

/* Characters, not bytes: a UTF-8 continuation byte (10xxxxxx) adds none. */
static int text_width(const char *s)
{
    int n = 0;

    for (; *s; s++)
        n += ((unsigned char)*s & 0xC0) != 0x80;
    return n;
}

void cli_table_print(FILE *out, const struct cli_table *t, int colour)
{
    int width[CLI_TABLE_MAX_COLS] = {0};
    int cols = 0;

    for (int r = 0; r < t->nrows; r++)
        for (int k = 0; k < CLI_TABLE_MAX_COLS; k++) {
            int n = text_width(t->cells[r][k]);
            if (n > width[k])
                width[k] = n;
            if (n && k + 1 > cols)
                cols = k + 1;
        }
    for (int r = 0; r < t->nrows; r++) {
        if (r == 0 && colour)
            fputs("\033[1m", out);
        for (int k = 0; k < cols; k++) {
            const char *cell = t->cells[r][k];
            int pad = k + 1 < cols ? width[k] - text_width(cell) : 0;
            fprintf(out, "%s%s%*s", k ? "  " : "", cell, pad, "");
        }
        fputs(r == 0 && colour ? "\033[0m\n" : "\n", out);
    }
    if (t->dropped)
        fprintf(out, "(%d more rows not shown; --json has them all)\n", t->dropped);
}
