/*
 * cli_table.h - text tables for the terminal: cells are added row by row
 * (copied, at most CLI_TABLE_MAX_ROWS x CLI_TABLE_MAX_COLS, each cut to
 * CLI_TABLE_CELL bytes), then printed with every column as wide as its
 * widest cell, counted in characters (UTF-8: "×", "…").  The header is
 * bold only when colour is on.
 */
#ifndef GPUBENCH_CLIENT_CLI_TABLE_H
#define GPUBENCH_CLIENT_CLI_TABLE_H

#include <cjson/cJSON.h>
#include <stdio.h>

#define CLI_TABLE_MAX_ROWS 1024
#define CLI_TABLE_MAX_COLS 24
#define CLI_TABLE_CELL 72

struct cli_table {
    int ncols, nrows; /* nrows counts the header */
    int dropped;      /* rows past the cap, said under the table */
    char cells[CLI_TABLE_MAX_ROWS][CLI_TABLE_MAX_COLS][CLI_TABLE_CELL];
};

/* A NEW empty table the caller frees with free(); NULL out of memory. */
struct cli_table *cli_table_new(void);

/* Starts a row (the first is the header); then cli_table_cell per column. */
void cli_table_row(struct cli_table *t);
void cli_table_cell(struct cli_table *t, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

/* A JSON value as a cell: a string as it is, a number in fmt ("%.3f"),
 * a whole number without decimals, anything else as compact JSON, and
 * "-" for NULL or null. */
void cli_table_json(struct cli_table *t, const cJSON *v, const char *fmt);

/* A number as a cell with `digits` significant digits (0: whole numbers
 * as they are, others to 6), without an exponent from 0.001 to 1e9, then
 * suffix ("" for none): 3843 GB/s, 0.002119, 97.6%. */
void cli_table_number(struct cli_table *t, double v, int digits, const char *suffix);

void cli_table_print(FILE *out, const struct cli_table *t, int colour);

#endif
