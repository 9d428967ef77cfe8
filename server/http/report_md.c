/*
 * report_md.c - see report_md.h.  A run's table is the row key (stride,
 * variant, pattern or the row's label) and then the result-field table's
 * report columns (common/result_fields.c, GB_USE_REPORT) that any row has,
 * each written as its unit says: a value or peak in the row's own unit
 * (GB/s, TFLOP/s, us).  Below it: whence each peak comes (the rows'
 * peak_source, once for the rows that share it), the peaks a summary
 * states once (summary_peaks), and p2p_bandwidth's device matrices
 * (matrices) as tables.  The validity above the table says the reasons of
 * an invalid run and every note.  Text from a run (labels, hosts,
 * messages) is escaped so that a '|' or a line break cannot break the
 * table.  Times are "0.286 ms", as in the seed's tables (three significant
 * digits below that); a shift is the answer's fraction (candidate /
 * baseline - 1) written as a percentage.
 */
#include "report_md.h"

#include "json_items.h"
#include "compare.h"
#include "result_fields.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum md_format {
    MD_NUMBER,
    MD_MS,
};

/* The report's own headers where the result-field table's label is not
 * the one the seed's tables use (and people quote); a ratio's header names
 * the run's baseline when it has one ("vs stride 1"). */
static const struct {
    const char *field, *header;
} header_words[] = {
    {"median_ms", "Time"},
    {"stride", "Stride"},
    {"variant", "Kernel"},
};

/* The report's header of field name: its word above, else the table's
 * label; NULL when the table has no such field. */
static const char *header_of(const char *name)
{
    const struct gb_result_field *f = gb_result_field_find(name);

    for (size_t i = 0; name && i < sizeof(header_words) / sizeof(header_words[0]); i++)
        if (strcmp(name, header_words[i].field) == 0)
            return header_words[i].header;
    return f ? f->label : NULL;
}

/* The matrices of a p2p_bandwidth summary ("matrix": devices, then one
 * n x n array a measure, from the row's device to the column's); unit
 * NULL: a link object, written as words. */
static const struct {
    const char *field, *title, *unit;
} matrices[] = {
    {"gbps", "Peer bandwidth", "GB/s"},
    {"latency_us", "Peer latency", "us"},
    {"link", "Link", NULL},
};

/* Peaks a run states once, in its summary rather than in each row: the
 * object, its value in GB/s, and the field that says whence. */
static const struct {
    const char *object, *value, *source, *name;
} summary_peaks[] = {
    {"peak", "peak_gbps", "clock_source", "Peak"},
    {"ceiling", "gbps", "source", "Copy ceiling"},
};

/* Text as one table cell or sentence: '|' and the marks that would start
 * code or emphasis escaped ('_' inside a word is safe and kept readable),
 * line breaks as spaces. */
static void md_text(struct dynbuf *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|' || *s == '\\' || *s == '`' || *s == '*')
            (void)!dynbuf_add(out, "\\", 1);
        (void)!dynbuf_add(out, *s == '\n' || *s == '\r' ? " " : s, 1);
    }
}

static const char *text_at(const cJSON *obj, const char *a, const char *b, const char *c)
{
    obj = cJSON_GetObjectItem(obj, a);
    if (b)
        obj = cJSON_GetObjectItem(obj, b);
    if (c)
        obj = cJSON_GetObjectItem(obj, c);
    return cJSON_GetStringValue(obj);
}

/* x to digits significant digits, never as an exponent: 3843 GB/s,
 * 65.32 TFLOP/s, 1.919 us; digits 0: as it is. */
static void md_number(struct dynbuf *out, double x, int digits)
{
    int decimals = 0;

    if (digits <= 0) {
        (void)!dynbuf_printf(out, "%.15g", x);
        return;
    }
    if (x != 0)
        decimals = digits - 1 - (int)floor(log10(fabs(x)));
    if (decimals < 0)
        decimals = 0;
    (void)!dynbuf_printf(out, "%.*f", decimals > 12 ? 12 : decimals, x);
}

/* A time: three decimals as the seed's tables have them ("0.286 ms"), and
 * three significant digits below that ("0.00212 ms"). */
static void md_ms(struct dynbuf *out, double x)
{
    int decimals = x > 0 ? 2 - (int)floor(log10(x)) : 3;

    if (decimals < 3)
        decimals = 3;
    (void)!dynbuf_printf(out, "%.*f ms", decimals > 12 ? 12 : decimals, x);
}

static void md_value(struct dynbuf *out, const cJSON *v, enum md_format f)
{
    double x = cJSON_GetNumberValue(v);

    if (cJSON_IsString(v)) {
        md_text(out, v->valuestring);
        return;
    }
    if (!cJSON_IsNumber(v) || !isfinite(x)) {
        (void)!dynbuf_printf(out, "-");
        return;
    }
    if (f == MD_MS)
        md_ms(out, x);
    else
        (void)!dynbuf_printf(out, "%.15g", x);
}

/* One cell of a result-row field, written as its unit says
 * (common/result_fields.c): a time in ms, a share as a percentage, a ratio
 * with its "×", other numbers to the field's digits with their unit, the
 * row's own unit for the fields measured in it (value, peak). */
static void md_field(struct dynbuf *out, const struct gb_result_field *f, const cJSON *row)
{
    const cJSON *v = cJSON_GetObjectItem(row, f->name);
    const char *unit = f->unit;
    double x = cJSON_GetNumberValue(v);

    if (f->uses & GB_USE_ROW_UNIT)
        unit = cJSON_GetStringValue(cJSON_GetObjectItem(row, "unit"));
    if (unit == NULL)
        unit = "";
    if (cJSON_IsBool(v)) {
        (void)!dynbuf_printf(out, cJSON_IsTrue(v) ? "yes" : "no");
    } else if (!cJSON_IsNumber(v)) {
        md_value(out, v, MD_NUMBER);
    } else if (!isfinite(x)) {
        (void)!dynbuf_printf(out, "-");
    } else if (strcmp(unit, "ms") == 0) {
        md_ms(out, x);
    } else if (strcmp(unit, "share") == 0) {
        (void)!dynbuf_printf(out, "%.1f%%", 100 * x);
    } else if (strcmp(unit, "x") == 0) {
        md_number(out, x, f->digits);
        (void)!dynbuf_printf(out, "×");
    } else {
        md_number(out, x, f->type == GB_FIELD_INT ? 0 : f->digits);
        if (unit[0]) {
            (void)!dynbuf_printf(out, " ");
            md_text(out, unit);
        }
    }
}

static const char *key_header(const char *key)
{
    const char *h = header_of(key);

    return h ? h : "Row";
}

/* A key column of numbers (strides) is right-aligned, of names left. */
static const char *key_align(const char *key)
{
    const struct gb_result_field *f = gb_result_field_find(key);

    return f && f->type == GB_FIELD_INT ? "---:|" : ":---|";
}

/* "NVIDIA H200 (GPU-...), driver 580.1, CUDA 13.0 (nvcc 13.0.88), 2026-11-30" */
static void card_sentence(struct dynbuf *out, const char *name, const char *uuid,
                          const cJSON *run)
{
    const char *driver = text_at(run, "meta", "driver", "nvidia_version");
    const char *cuda = text_at(run, "meta", "cuda", "runtime_version");
    const char *nvcc = text_at(run, "meta", "build", "nvcc_version");
    const char *when = text_at(run, "finished_at", NULL, NULL);

    md_text(out, name ? name : "an unnamed card");
    if (uuid && uuid[0]) {
        (void)!dynbuf_printf(out, " (");
        md_text(out, uuid);
        (void)!dynbuf_printf(out, ")");
    }
    (void)!dynbuf_printf(out, ", driver ");
    md_text(out, driver ? driver : "unknown");
    (void)!dynbuf_printf(out, ", CUDA ");
    md_text(out, cuda ? cuda : "unknown");
    if (nvcc) {
        (void)!dynbuf_printf(out, " (nvcc ");
        md_text(out, nvcc);
        (void)!dynbuf_printf(out, ")");
    }
    if (when == NULL)
        when = text_at(run, "created_at", NULL, NULL);
    if (when)
        (void)!dynbuf_printf(out, ", %.10s", when);
}

static void run_status_sentence(struct dynbuf *out, const cJSON *run)
{
    const char *status = text_at(run, "status", NULL, NULL);
    const cJSON *valid = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "valid");
    const cJSON *r;
    const char *sep = ": ";

    md_text(out, text_at(run, "benchmark", NULL, NULL));
    (void)!dynbuf_printf(out, ", run `%.40s` on ", text_at(run, "id", NULL, NULL));
    md_text(out, text_at(run, "host", NULL, NULL) ? text_at(run, "host", NULL, NULL) : "?");
    if (text_at(run, "label", NULL, NULL) && text_at(run, "label", NULL, NULL)[0]) {
        (void)!dynbuf_printf(out, ", label ");
        md_text(out, text_at(run, "label", NULL, NULL));
    }
    /* The method it was measured by: numbers of two are not comparable. */
    if (cJSON_IsNumber(cJSON_GetObjectItem(run, "method")))
        (void)!dynbuf_printf(out, ", method %.0f", cJSON_GetObjectItem(run, "method")->valuedouble);
    else
        (void)!dynbuf_printf(out, ", method unknown (gpubench 0.1.0)");
    if (status && strcmp(status, "done") != 0) {
        (void)!dynbuf_printf(out, ": **");
        md_text(out, status);
        (void)!dynbuf_printf(out, "**");
        if (text_at(run, "error", "code", NULL)) {
            (void)!dynbuf_printf(out, " (");
            md_text(out, text_at(run, "error", "code", NULL));
            (void)!dynbuf_printf(out, ": ");
            md_text(out, text_at(run, "error", "message", NULL));
            (void)!dynbuf_printf(out, ")");
        }
    } else if (cJSON_IsFalse(valid)) {
        (void)!dynbuf_printf(out, ": **invalid**");
        cJSON_ArrayForEach(r, cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"),
                                                  "reasons")) {
            const char *why = text_at(r, "message", NULL, NULL);
            (void)!dynbuf_printf(out, "%s", sep);
            md_text(out, why ? why : text_at(r, "code", NULL, NULL));
            sep = "; ";
        }
    } else {
        (void)!dynbuf_printf(out, cJSON_IsTrue(valid) ? ": valid" : ": validity not judged");
    }
    (void)!dynbuf_printf(out, ".\n");
    cJSON_ArrayForEach(r, cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "notes")) {
        const char *code = text_at(r, "code", NULL, NULL);
        const char *what = text_at(r, "message", NULL, NULL);
        (void)!dynbuf_printf(out, "\nNote");
        if (code) {
            (void)!dynbuf_printf(out, " (");
            md_text(out, code);
            (void)!dynbuf_printf(out, ")");
        }
        (void)!dynbuf_printf(out, ": ");
        md_text(out, what ? what : "(no message)");
        (void)!dynbuf_printf(out, ".\n");
    }
    if (cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "meta"), "synthetic")))
        (void)!dynbuf_printf(out, "\nSynthetic: no number here was measured on a GPU.\n");
}

/* " Header |" of a report column. */
static void column_header(struct dynbuf *out, const struct gb_result_field *f,
                          const cJSON *summary)
{
    const cJSON *base = cJSON_GetObjectItem(cJSON_GetObjectItem(summary, "baseline"), "stride");

    if (strcmp(f->name, "ratio") == 0 && cJSON_IsNumber(base))
        (void)!dynbuf_printf(out, " vs stride %g |", base->valuedouble);
    else
        (void)!dynbuf_printf(out, " %s |", header_of(f->name));
}

/* The rows as a table: the key, then each of the table's report fields
 * (GB_USE_REPORT) that some row has. */
static void rows_table(struct dynbuf *out, const cJSON *rows, const cJSON *summary)
{
    const char *key = compare_row_key(cJSON_GetArrayItem(rows, 0));
    const struct gb_result_field *cols[GB_RESULT_FIELDS_MAX];
    size_t n = 0;
    const cJSON *row;

    for (size_t i = 0; i < gb_result_field_count() && n < GB_RESULT_FIELDS_MAX; i++) {
        const struct gb_result_field *f = gb_result_field_at(i);
        int shown = 0;
        if (!(f->uses & GB_USE_REPORT))
            continue;
        cJSON_ArrayForEach(row, rows) {
            const cJSON *v = cJSON_GetObjectItem(row, f->name);
            shown |= v != NULL && !cJSON_IsNull(v);
        }
        if (shown)
            cols[n++] = f;
    }
    (void)!dynbuf_printf(out, "\n| %s |", key_header(key));
    for (size_t k = 0; k < n; k++)
        column_header(out, cols[k], summary);
    (void)!dynbuf_printf(out, "\n|%s", key_align(key));
    for (size_t k = 0; k < n; k++)
        (void)!dynbuf_printf(out, "---:|");
    (void)!dynbuf_printf(out, "\n");
    cJSON_ArrayForEach(row, rows) {
        (void)!dynbuf_printf(out, "| ");
        md_value(out, key ? cJSON_GetObjectItem(row, key) : NULL, MD_NUMBER);
        (void)!dynbuf_printf(out, " |");
        for (size_t k = 0; k < n; k++) {
            (void)!dynbuf_printf(out, " ");
            md_field(out, cols[k], row);
            (void)!dynbuf_printf(out, " |");
        }
        (void)!dynbuf_printf(out, "\n");
    }
}

/* Whence each row's peak (its peak_source), said once for the rows that
 * share it: "Peak of copy, scale: DRAM peak: ...". */
static void peak_sources(struct dynbuf *out, const cJSON *rows)
{
    const char *key = compare_row_key(cJSON_GetArrayItem(rows, 0));
    int n;
    const cJSON **row = json_items(rows, &n); /* indexed below: built once */

    for (int i = 0; row && i < n; i++) {
        const char *src = text_at(row[i], "peak_source", NULL, NULL);
        int seen = 0, all = 1, sep = 0;
        for (int j = 0; src && j < n; j++) {
            const char *other = text_at(row[j], "peak_source", NULL, NULL);
            int same = other && strcmp(other, src) == 0;
            seen |= same && j < i;
            all &= same;
        }
        if (src == NULL || seen)
            continue;
        (void)!dynbuf_printf(out, "\nPeak of ");
        if (all)
            (void)!dynbuf_printf(out, "every row");
        for (int j = i; !all && j < n; j++) {
            const cJSON *r = row[j];
            const char *other = text_at(r, "peak_source", NULL, NULL);
            if (other == NULL || strcmp(other, src) != 0)
                continue;
            (void)!dynbuf_printf(out, "%s", sep++ ? ", " : "");
            md_value(out, key ? cJSON_GetObjectItem(r, key) : NULL, MD_NUMBER);
        }
        (void)!dynbuf_printf(out, ": ");
        md_text(out, src);
        (void)!dynbuf_printf(out, ".\n");
    }
    if (n < 0)
        out->failed = 1; /* out of memory: the report is not whole (dynbuf.h) */
    free(row);
}

/* The peaks of the summary (summary_peaks): "Peak: 33440 GB/s = 132 SMs x
 * 128 bytes a clock x 1979 MHz; median over ...". */
static void summary_peak_lines(struct dynbuf *out, const cJSON *summary)
{
    for (size_t i = 0; i < sizeof(summary_peaks) / sizeof(summary_peaks[0]); i++) {
        const cJSON *o = cJSON_GetObjectItem(summary, summary_peaks[i].object);
        const cJSON *v = cJSON_GetObjectItem(o, summary_peaks[i].value);
        const cJSON *sms = cJSON_GetObjectItem(o, "sm_count");
        const cJSON *bytes = cJSON_GetObjectItem(o, "bytes_per_clock_per_sm");
        const cJSON *mhz = cJSON_GetObjectItem(o, "sm_clock_mhz");
        const char *src = text_at(o, summary_peaks[i].source, NULL, NULL);

        if (!cJSON_IsObject(o) || !cJSON_IsNumber(v))
            continue;
        (void)!dynbuf_printf(out, "\n%s: ", summary_peaks[i].name);
        md_number(out, v->valuedouble, 4);
        (void)!dynbuf_printf(out, " GB/s");
        if (cJSON_IsNumber(sms) && cJSON_IsNumber(bytes) && cJSON_IsNumber(mhz))
            (void)!dynbuf_printf(out, " = %g SMs x %g bytes a clock x %.0f MHz", sms->valuedouble,
                                 bytes->valuedouble, mhz->valuedouble);
        if (src) {
            (void)!dynbuf_printf(out, "; ");
            md_text(out, src);
        }
        (void)!dynbuf_printf(out, ".\n");
    }
}

/* A link of the matrix as words: "nvlink 4 x18 via nvswitch". */
static void link_words(struct dynbuf *out, const cJSON *link)
{
    const cJSON *version = cJSON_GetObjectItem(link, "version");
    const cJSON *links = cJSON_GetObjectItem(link, "links");

    md_text(out, text_at(link, "type", NULL, NULL) ? text_at(link, "type", NULL, NULL) : "?");
    if (cJSON_IsNumber(version))
        (void)!dynbuf_printf(out, " %g", version->valuedouble);
    if (cJSON_IsNumber(links))
        (void)!dynbuf_printf(out, " x%g", links->valuedouble);
    if (text_at(link, "via", NULL, NULL)) {
        (void)!dynbuf_printf(out, " via ");
        md_text(out, text_at(link, "via", NULL, NULL));
    }
}

/* The summary's device matrices (p2p_bandwidth), one table each. */
static void matrix_tables(struct dynbuf *out, const cJSON *summary)
{
    const cJSON *m = cJSON_GetObjectItem(summary, "matrix");
    const cJSON *devices = cJSON_GetObjectItem(m, "devices"), *d;
    const char *no_pair = text_at(summary, "no_pair", NULL, NULL);

    if (no_pair) {
        (void)!dynbuf_printf(out, "\nNo pair measured: ");
        md_text(out, no_pair);
        (void)!dynbuf_printf(out, ".\n");
    }
    if (!cJSON_IsArray(devices) || cJSON_GetArraySize(devices) < 2)
        return;
    for (size_t i = 0; i < sizeof(matrices) / sizeof(matrices[0]); i++) {
        const cJSON *grid = cJSON_GetObjectItem(m, matrices[i].field), *line;
        const cJSON *dev;
        if (!cJSON_IsArray(grid))
            continue;
        (void)!dynbuf_printf(out, "\n%s", matrices[i].title);
        if (matrices[i].unit)
            (void)!dynbuf_printf(out, " (%s)", matrices[i].unit);
        (void)!dynbuf_printf(out, ", from the row's GPU to the column's:\n\n| From |");
        cJSON_ArrayForEach(d, devices)
            (void)!dynbuf_printf(out, " to GPU %g |", cJSON_GetNumberValue(d));
        (void)!dynbuf_printf(out, "\n|:---|");
        cJSON_ArrayForEach(d, devices)
            (void)!dynbuf_printf(out, "---:|");
        (void)!dynbuf_printf(out, "\n");
        dev = devices ? devices->child : NULL; /* walked beside the grid's lines */
        cJSON_ArrayForEach(line, grid) {
            const cJSON *cell;
            (void)!dynbuf_printf(out, "| GPU %g |", cJSON_GetNumberValue(dev));
            dev = dev ? dev->next : NULL;
            cJSON_ArrayForEach(cell, line) {
                (void)!dynbuf_printf(out, " ");
                if (cJSON_IsNumber(cell) && isfinite(cell->valuedouble)) {
                    md_number(out, cell->valuedouble, 4);
                    (void)!dynbuf_printf(out, " %s", matrices[i].unit ? matrices[i].unit : "");
                } else if (cJSON_IsObject(cell)) {
                    link_words(out, cell);
                } else {
                    (void)!dynbuf_printf(out, "-");
                }
                (void)!dynbuf_printf(out, " |");
            }
            (void)!dynbuf_printf(out, "\n");
        }
    }
}

/* The lines of a deep check's failed checks (issue 32: "known_answer
 * fp32_fma: 3 mismatches on SM 17"), which name where the card went
 * wrong. */
static void failed_check_lines(struct dynbuf *out, const cJSON *checks)
{
    const cJSON *c;

    cJSON_ArrayForEach(c, checks) {
        const char *msg = cJSON_GetStringValue(cJSON_GetObjectItem(c, "message"));
        if (msg == NULL || !cJSON_IsFalse(cJSON_GetObjectItem(c, "pass")))
            continue;
        (void)!dynbuf_printf(out, "\nFailed: ");
        md_text(out, msg);
        (void)!dynbuf_printf(out, ".\n");
    }
}

int report_md_run(const cJSON *run, struct dynbuf *out)
{
    const cJSON *results = cJSON_GetObjectItem(run, "results");
    const cJSON *rows = cJSON_GetObjectItem(results, "rows");
    const cJSON *summary = cJSON_GetObjectItem(results, "summary");

    card_sentence(out, text_at(run, "device", "name", NULL), text_at(run, "device", "uuid", NULL),
                  run);
    (void)!dynbuf_printf(out, ".\n\n");
    run_status_sentence(out, run);
    failed_check_lines(out, cJSON_GetObjectItem(run, "checks"));
    if (cJSON_GetArraySize(rows) > 0) {
        rows_table(out, rows, summary);
        peak_sources(out, rows);
    }
    summary_peak_lines(out, summary);
    matrix_tables(out, summary);
    return dynbuf_failed(out) ? -1 : 0;
}

/* The sentence of one group or series: its card, driver, CUDA and newest
 * date, fetched through run_of from its first (newest) run. */
static void group_sentence(struct dynbuf *out, const char *name, const char *uuid,
                           const cJSON *runs, report_run_fn run_of, void *ctx)
{
    const char *id = cJSON_GetStringValue(cJSON_GetArrayItem(runs, 0));
    cJSON *run = run_of && id ? run_of(ctx, id) : NULL;

    card_sentence(out, name ? name : text_at(run, "device", "name", NULL),
                  uuid ? uuid : text_at(run, "device", "uuid", NULL), run);
    (void)!dynbuf_printf(out, "; %d run%s", cJSON_GetArraySize(runs),
                         cJSON_GetArraySize(runs) == 1 ? "" : "s");
    cJSON_Delete(run);
}

/* A shift as the answer gives it: already a fraction (candidate /
 * baseline - 1, common/shift.h), not a log. */
static void shift_percent(struct dynbuf *out, const cJSON *v)
{
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        (void)!dynbuf_printf(out, "%+.2f%%", 100 * v->valuedouble);
    else
        (void)!dynbuf_printf(out, "-");
}

/* What the answer's times are per (common/work_units.h); a sample where
 * an older answer does not say. */
static const char *time_per(const cJSON *a)
{
    const char *unit = text_at(a, "time_per", NULL, NULL);

    return unit ? unit : "sample";
}

static void verdicts_md(const cJSON *a, report_run_fn run_of, void *ctx, struct dynbuf *out)
{
    static const char *const sides[2] = {"baseline", "candidate"};
    const char *key = text_at(a, "key", NULL, NULL), *verdict = text_at(a, "verdict", NULL, NULL);
    const cJSON *row, *d;

    for (int i = 0; i < 2; i++) {
        const cJSON *g = cJSON_GetObjectItem(a, sides[i]);
        (void)!dynbuf_printf(out, "%s `", i ? "Candidate" : "Baseline");
        md_text(out, text_at(g, "selector", NULL, NULL));
        (void)!dynbuf_printf(out, "`: ");
        group_sentence(out, text_at(g, "key", "card_model", NULL), NULL,
                       cJSON_GetObjectItem(g, "runs"), run_of, ctx);
        (void)!dynbuf_printf(out, ".\n\n");
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItem(a, "comparable"))) {
        (void)!dynbuf_printf(out, "**Not comparable**");
        if (text_at(a, "reason", NULL, NULL)) {
            (void)!dynbuf_printf(out, ": ");
            md_text(out, text_at(a, "reason", NULL, NULL));
        }
        cJSON_ArrayForEach(d, cJSON_GetObjectItem(a, "differences")) {
            char *text = cJSON_PrintUnformatted(d);
            (void)!dynbuf_printf(out, "\n- ");
            md_text(out, text);
            cJSON_free(text);
        }
        (void)!dynbuf_printf(out, "\n");
        return;
    }
    /* the times compared are per unit of work (common/work_units.h) */
    (void)!dynbuf_printf(out, "Median times in ms per %s; more samples: what a group would need to "
                              "decide a row, where more can.\n\n",
                         time_per(a));
    (void)!dynbuf_printf(out,
                         "| %s | Baseline | Candidate | Shift | 95%% interval | More samples | ",
                         key_header(key));
    (void)!dynbuf_printf(out, "Verdict |\n");
    (void)!dynbuf_printf(out, "|%s---:|---:|---:|---:|:---|:---|\n", key_align(key));
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(a, "rows")) {
        (void)!dynbuf_printf(out, "| ");
        md_value(out, cJSON_GetObjectItem(row, "key"), MD_NUMBER);
        (void)!dynbuf_printf(out, " | ");
        md_value(out, cJSON_GetObjectItem(row, "baseline_median_ms"), MD_MS);
        (void)!dynbuf_printf(out, " | ");
        md_value(out, cJSON_GetObjectItem(row, "candidate_median_ms"), MD_MS);
        (void)!dynbuf_printf(out, " | ");
        shift_percent(out, cJSON_GetObjectItem(row, "shift"));
        (void)!dynbuf_printf(out, " | ");
        shift_percent(out, cJSON_GetObjectItem(row, "ci_low"));
        (void)!dynbuf_printf(out, " to ");
        shift_percent(out, cJSON_GetObjectItem(row, "ci_high"));
        (void)!dynbuf_printf(out, " | ");
        if (text_at(row, "undecidable", NULL, NULL))
            md_text(out, text_at(row, "undecidable", NULL, NULL));
        else
            md_value(out, cJSON_GetObjectItem(row, "more_samples"), MD_NUMBER);
        (void)!dynbuf_printf(out, " | ");
        md_text(out, text_at(row, "verdict", NULL, NULL));
        (void)!dynbuf_printf(out, " |\n");
    }
    (void)!dynbuf_printf(out, "\nVerdict: **%s**", verdict ? verdict : "none");
    if (cJSON_GetArraySize(cJSON_GetObjectItem(a, "verdict_rows")) > 0) {
        const char *sep = " (";
        cJSON_ArrayForEach(d, cJSON_GetObjectItem(a, "verdict_rows")) {
            (void)!dynbuf_printf(out, "%s%s ", sep, key ? key : "row");
            md_value(out, d, MD_NUMBER);
            sep = ", ";
        }
        (void)!dynbuf_printf(out, ")");
    }
    (void)!dynbuf_printf(out, ", within a margin of %g%% (",
                         100 * cJSON_GetNumberValue(cJSON_GetObjectItem(a, "margin")));
    md_text(out, text_at(a, "method", NULL, NULL));
    (void)!dynbuf_printf(out, ").\n");
}

static void series_md(const cJSON *a, report_run_fn run_of, void *ctx, struct dynbuf *out)
{
    const char *key = text_at(a, "key", NULL, NULL);
    const cJSON *series = cJSON_GetObjectItem(a, "series"), *s, *k;
    int n = 0;

    (void)!dynbuf_printf(out, "The median time over each card's runs, in ms per %s; ", time_per(a));
    (void)!dynbuf_printf(out, "one column a card.\n\n");
    cJSON_ArrayForEach(s, series) {
        (void)!dynbuf_printf(out, "%d. ", ++n);
        group_sentence(out, text_at(s, "card", "name", NULL), text_at(s, "card", "uuid", NULL),
                       cJSON_GetObjectItem(s, "runs"), run_of, ctx);
        (void)!dynbuf_printf(out, ", host ");
        md_text(out, text_at(s, "card", "host", NULL));
        (void)!dynbuf_printf(out, ".\n");
    }
    if (n == 0) {
        (void)!dynbuf_printf(out, "No done runs to compare.\n");
        return;
    }
    (void)!dynbuf_printf(out, "\n| %s |", key_header(key));
    for (int i = 1; i <= n; i++)
        (void)!dynbuf_printf(out, " Card %d |", i);
    (void)!dynbuf_printf(out, "\n|%s", key_align(key));
    for (int i = 1; i <= n; i++)
        (void)!dynbuf_printf(out, "---:|");
    (void)!dynbuf_printf(out, "\n");
    cJSON_ArrayForEach(k, cJSON_GetObjectItem(a, "keys")) {
        (void)!dynbuf_printf(out, "| ");
        md_value(out, k, MD_NUMBER);
        (void)!dynbuf_printf(out, " |");
        cJSON_ArrayForEach(s, series) {
            const cJSON *row, *found = NULL;
            cJSON_ArrayForEach(row, cJSON_GetObjectItem(s, "rows"))
                if (cJSON_Compare(cJSON_GetObjectItem(row, "key"), k, 1))
                    found = row;
            (void)!dynbuf_printf(out, " ");
            md_value(out, cJSON_GetObjectItem(found, "median_ms"), MD_MS);
            (void)!dynbuf_printf(out, " |");
        }
        (void)!dynbuf_printf(out, "\n");
    }
}

int report_md_compare(const cJSON *answer, report_run_fn run_of, void *ctx, struct dynbuf *out)
{
    const char *bench = text_at(answer, "benchmark", NULL, NULL);

    (void)!dynbuf_printf(out, "**");
    md_text(out, bench ? bench : "the baseline's benchmark");
    (void)!dynbuf_printf(out, "**\n\n");
    if (cJSON_GetObjectItem(answer, "candidate"))
        verdicts_md(answer, run_of, ctx, out);
    else
        series_md(answer, run_of, ctx, out);
    return dynbuf_failed(out) ? -1 : 0;
}
