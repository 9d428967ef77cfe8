/*
 * report_md.c - see report_md.h.  The columns of a run's table are one
 * table below (a field, its header, how it is written), shown when any row
 * has the field; the row key (stride, variant, pattern) comes first.  Text
 * from a run (labels, hosts, messages) is escaped so that a '|' or a line
 * break cannot break the table.  Times are "0.286 ms", as in the seed's
 * tables; a shift is the daemon's log-time shift written as a percentage
 * of time (exp(shift) - 1).
 */
#include "report_md.h"
#include "compare.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

enum md_format { MD_NUMBER,
                 MD_MS,
                 MD_RATIO,
                 MD_GBPS,
                 MD_SHARE };

static const struct {
    const char *field, *header;
    enum md_format format;
} run_columns[] = {
    {"predicted_degree", "Predicted degree", MD_NUMBER},
    {"median_ms", "Time", MD_MS},
    {"ratio", NULL, MD_RATIO}, /* "vs stride 1": the run's own baseline row */
    {"gbps", "GB/s", MD_GBPS},
    {"share_of_ceiling", "Share of the copy ceiling", MD_SHARE},
    {"share_of_peak", "Share of peak", MD_SHARE},
};

#define RUN_COLUMNS (sizeof(run_columns) / sizeof(run_columns[0]))

/* Text as one table cell or sentence: '|' and the marks that would start
 * code or emphasis escaped ('_' inside a word is safe and kept readable),
 * line breaks as spaces. */
static void md_text(struct dynbuf *out, const char *s)
{
    for (; s && *s; s++) {
        if (*s == '|' || *s == '\\' || *s == '`' || *s == '*')
            dynbuf_add(out, "\\", 1);
        dynbuf_add(out, *s == '\n' || *s == '\r' ? " " : s, 1);
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

static void md_value(struct dynbuf *out, const cJSON *v, enum md_format f)
{
    double x = cJSON_GetNumberValue(v);

    if (cJSON_IsString(v)) {
        md_text(out, v->valuestring);
        return;
    }
    if (!cJSON_IsNumber(v) || !isfinite(x)) {
        dynbuf_printf(out, "-");
        return;
    }
    switch (f) {
    case MD_MS:
        dynbuf_printf(out, "%.3f ms", x);
        break;
    case MD_RATIO:
        dynbuf_printf(out, "%.2f", x);
        break;
    case MD_GBPS:
        dynbuf_printf(out, "%.1f", x);
        break;
    case MD_SHARE:
        dynbuf_printf(out, "%.1f%%", 100 * x);
        break;
    default:
        dynbuf_printf(out, "%.15g", x);
    }
}

static const char *key_header(const char *key)
{
    if (key == NULL)
        return "Row";
    if (strcmp(key, "stride") == 0)
        return "Stride";
    if (strcmp(key, "variant") == 0)
        return "Kernel";
    return "Pattern";
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
        dynbuf_printf(out, " (");
        md_text(out, uuid);
        dynbuf_printf(out, ")");
    }
    dynbuf_printf(out, ", driver ");
    md_text(out, driver ? driver : "unknown");
    dynbuf_printf(out, ", CUDA ");
    md_text(out, cuda ? cuda : "unknown");
    if (nvcc) {
        dynbuf_printf(out, " (nvcc ");
        md_text(out, nvcc);
        dynbuf_printf(out, ")");
    }
    if (when == NULL)
        when = text_at(run, "created_at", NULL, NULL);
    if (when)
        dynbuf_printf(out, ", %.10s", when);
}

static void run_status_sentence(struct dynbuf *out, const cJSON *run)
{
    const char *status = text_at(run, "status", NULL, NULL);
    const cJSON *valid = cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"), "valid");
    const cJSON *r;
    const char *sep = ": ";

    md_text(out, text_at(run, "benchmark", NULL, NULL));
    dynbuf_printf(out, ", run `%.40s` on ", text_at(run, "id", NULL, NULL));
    md_text(out, text_at(run, "host", NULL, NULL) ? text_at(run, "host", NULL, NULL) : "?");
    if (text_at(run, "label", NULL, NULL) && text_at(run, "label", NULL, NULL)[0]) {
        dynbuf_printf(out, ", label ");
        md_text(out, text_at(run, "label", NULL, NULL));
    }
    if (status && strcmp(status, "done") != 0) {
        dynbuf_printf(out, ": **");
        md_text(out, status);
        dynbuf_printf(out, "**");
        if (text_at(run, "error", "code", NULL)) {
            dynbuf_printf(out, " (");
            md_text(out, text_at(run, "error", "code", NULL));
            dynbuf_printf(out, ": ");
            md_text(out, text_at(run, "error", "message", NULL));
            dynbuf_printf(out, ")");
        }
    } else if (cJSON_IsFalse(valid)) {
        dynbuf_printf(out, ": **invalid**");
        cJSON_ArrayForEach(r, cJSON_GetObjectItem(cJSON_GetObjectItem(run, "validity"),
                                                  "reasons")) {
            const char *why = text_at(r, "message", NULL, NULL);
            dynbuf_printf(out, "%s", sep);
            md_text(out, why ? why : text_at(r, "code", NULL, NULL));
            sep = "; ";
        }
    } else {
        dynbuf_printf(out, cJSON_IsTrue(valid) ? ": valid" : ": validity not judged");
    }
    dynbuf_printf(out, ".\n");
    if (cJSON_IsTrue(cJSON_GetObjectItem(cJSON_GetObjectItem(run, "meta"), "synthetic")))
        dynbuf_printf(out, "\nSynthetic: no number here was measured on a GPU.\n");
}

int report_md_run(const cJSON *run, struct dynbuf *out)
{
    const cJSON *results = cJSON_GetObjectItem(run, "results");
    const cJSON *rows = cJSON_GetObjectItem(results, "rows"), *row;
    const char *key = compare_row_key(cJSON_GetArrayItem(rows, 0));
    const cJSON *base = cJSON_GetObjectItem(cJSON_GetObjectItem(results, "summary"), "baseline");
    int shown[RUN_COLUMNS] = {0};

    card_sentence(out, text_at(run, "device", "name", NULL), text_at(run, "device", "uuid", NULL),
                  run);
    dynbuf_printf(out, ".\n\n");
    run_status_sentence(out, run);
    if (cJSON_GetArraySize(rows) == 0)
        return dynbuf_failed(out) ? -1 : 0;
    cJSON_ArrayForEach(row, rows) {
        for (size_t k = 0; k < RUN_COLUMNS; k++) {
            const cJSON *v = cJSON_GetObjectItem(row, run_columns[k].field);
            shown[k] |= v != NULL && !cJSON_IsNull(v);
        }
    }
    dynbuf_printf(out, "\n| %s |", key_header(key));
    for (size_t k = 0; k < RUN_COLUMNS; k++) {
        if (!shown[k])
            continue;
        if (run_columns[k].header)
            dynbuf_printf(out, " %s |", run_columns[k].header);
        else if (cJSON_IsNumber(cJSON_GetObjectItem(base, "stride")))
            dynbuf_printf(out, " vs stride %g |",
                          cJSON_GetObjectItem(base, "stride")->valuedouble);
        else
            dynbuf_printf(out, " Ratio |");
    }
    dynbuf_printf(out, "\n|%s", key && strcmp(key, "stride") == 0 ? "---:|" : ":---|");
    for (size_t k = 0; k < RUN_COLUMNS; k++)
        if (shown[k])
            dynbuf_printf(out, "---:|");
    dynbuf_printf(out, "\n");
    cJSON_ArrayForEach(row, rows) {
        dynbuf_printf(out, "| ");
        md_value(out, key ? cJSON_GetObjectItem(row, key) : NULL, MD_NUMBER);
        dynbuf_printf(out, " |");
        for (size_t k = 0; k < RUN_COLUMNS; k++) {
            if (!shown[k])
                continue;
            dynbuf_printf(out, " ");
            md_value(out, cJSON_GetObjectItem(row, run_columns[k].field), run_columns[k].format);
            dynbuf_printf(out, " |");
        }
        dynbuf_printf(out, "\n");
    }
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
    dynbuf_printf(out, "; %d run%s", cJSON_GetArraySize(runs),
                  cJSON_GetArraySize(runs) == 1 ? "" : "s");
    cJSON_Delete(run);
}

static void shift_percent(struct dynbuf *out, const cJSON *v)
{
    if (cJSON_IsNumber(v) && isfinite(v->valuedouble))
        dynbuf_printf(out, "%+.2f%%", 100 * (exp(v->valuedouble) - 1));
    else
        dynbuf_printf(out, "-");
}

static void verdicts_md(const cJSON *a, report_run_fn run_of, void *ctx, struct dynbuf *out)
{
    static const char *const sides[2] = {"baseline", "candidate"};
    const char *key = text_at(a, "key", NULL, NULL), *verdict = text_at(a, "verdict", NULL, NULL);
    const cJSON *row, *d;

    for (int i = 0; i < 2; i++) {
        const cJSON *g = cJSON_GetObjectItem(a, sides[i]);
        dynbuf_printf(out, "%s `", i ? "Candidate" : "Baseline");
        md_text(out, text_at(g, "selector", NULL, NULL));
        dynbuf_printf(out, "`: ");
        group_sentence(out, text_at(g, "key", "card_model", NULL), NULL,
                       cJSON_GetObjectItem(g, "runs"), run_of, ctx);
        dynbuf_printf(out, ".\n\n");
    }
    if (!cJSON_IsTrue(cJSON_GetObjectItem(a, "comparable"))) {
        dynbuf_printf(out, "**Not comparable**");
        if (text_at(a, "reason", NULL, NULL)) {
            dynbuf_printf(out, ": ");
            md_text(out, text_at(a, "reason", NULL, NULL));
        }
        cJSON_ArrayForEach(d, cJSON_GetObjectItem(a, "differences")) {
            char *text = cJSON_PrintUnformatted(d);
            dynbuf_printf(out, "\n- ");
            md_text(out, text);
            cJSON_free(text);
        }
        dynbuf_printf(out, "\n");
        return;
    }
    dynbuf_printf(out, "| %s | Baseline | Candidate | Shift | 95%% interval | Verdict |\n",
                  key_header(key));
    dynbuf_printf(out, "|---:|---:|---:|---:|---:|:---|\n");
    cJSON_ArrayForEach(row, cJSON_GetObjectItem(a, "rows")) {
        dynbuf_printf(out, "| ");
        md_value(out, cJSON_GetObjectItem(row, "key"), MD_NUMBER);
        dynbuf_printf(out, " | ");
        md_value(out, cJSON_GetObjectItem(row, "baseline_median_ms"), MD_MS);
        dynbuf_printf(out, " | ");
        md_value(out, cJSON_GetObjectItem(row, "candidate_median_ms"), MD_MS);
        dynbuf_printf(out, " | ");
        shift_percent(out, cJSON_GetObjectItem(row, "shift"));
        dynbuf_printf(out, " | ");
        shift_percent(out, cJSON_GetObjectItem(row, "ci_low"));
        dynbuf_printf(out, " to ");
        shift_percent(out, cJSON_GetObjectItem(row, "ci_high"));
        dynbuf_printf(out, " | ");
        md_text(out, text_at(row, "verdict", NULL, NULL));
        dynbuf_printf(out, " |\n");
    }
    dynbuf_printf(out, "\nVerdict: **%s**", verdict ? verdict : "none");
    if (cJSON_GetArraySize(cJSON_GetObjectItem(a, "verdict_rows")) > 0) {
        const char *sep = " (";
        cJSON_ArrayForEach(d, cJSON_GetObjectItem(a, "verdict_rows")) {
            dynbuf_printf(out, "%s%s ", sep, key ? key : "row");
            md_value(out, d, MD_NUMBER);
            sep = ", ";
        }
        dynbuf_printf(out, ")");
    }
    dynbuf_printf(out, ", within a margin of %g%% (",
                  100 * cJSON_GetNumberValue(cJSON_GetObjectItem(a, "margin")));
    md_text(out, text_at(a, "method", NULL, NULL));
    dynbuf_printf(out, ").\n");
}

static void series_md(const cJSON *a, report_run_fn run_of, void *ctx, struct dynbuf *out)
{
    const char *key = text_at(a, "key", NULL, NULL);
    const cJSON *series = cJSON_GetObjectItem(a, "series"), *s, *k;
    int n = 0;

    dynbuf_printf(out, "The median time over each card's runs; one column a card.\n\n");
    cJSON_ArrayForEach(s, series) {
        dynbuf_printf(out, "%d. ", ++n);
        group_sentence(out, text_at(s, "card", "name", NULL), text_at(s, "card", "uuid", NULL),
                       cJSON_GetObjectItem(s, "runs"), run_of, ctx);
        dynbuf_printf(out, ", host ");
        md_text(out, text_at(s, "card", "host", NULL));
        dynbuf_printf(out, ".\n");
    }
    if (n == 0) {
        dynbuf_printf(out, "No done runs to compare.\n");
        return;
    }
    dynbuf_printf(out, "\n| %s |", key_header(key));
    for (int i = 1; i <= n; i++)
        dynbuf_printf(out, " Card %d |", i);
    dynbuf_printf(out, "\n|---:|");
    for (int i = 1; i <= n; i++)
        dynbuf_printf(out, "---:|");
    dynbuf_printf(out, "\n");
    cJSON_ArrayForEach(k, cJSON_GetObjectItem(a, "keys")) {
        dynbuf_printf(out, "| ");
        md_value(out, k, MD_NUMBER);
        dynbuf_printf(out, " |");
        cJSON_ArrayForEach(s, series) {
            const cJSON *row, *found = NULL;
            cJSON_ArrayForEach(row, cJSON_GetObjectItem(s, "rows"))
                if (cJSON_Compare(cJSON_GetObjectItem(row, "key"), k, 1))
                    found = row;
            dynbuf_printf(out, " ");
            md_value(out, cJSON_GetObjectItem(found, "median_ms"), MD_MS);
            dynbuf_printf(out, " |");
        }
        dynbuf_printf(out, "\n");
    }
}

int report_md_compare(const cJSON *answer, report_run_fn run_of, void *ctx, struct dynbuf *out)
{
    const char *bench = text_at(answer, "benchmark", NULL, NULL);

    dynbuf_printf(out, "**");
    md_text(out, bench ? bench : "the baseline's benchmark");
    dynbuf_printf(out, "**\n\n");
    if (cJSON_GetObjectItem(answer, "candidate"))
        verdicts_md(answer, run_of, ctx, out);
    else
        series_md(answer, run_of, ctx, out);
    return dynbuf_failed(out) ? -1 : 0;
}
