/*
 * prom_text.h - the Prometheus text format (0.0.4) as every /metrics
 * family writes it: one label writer and escaper (backslash, quote and
 * newline in a value; a name made of [a-zA-Z_][a-zA-Z0-9_]*), HELP and
 * TYPE lines, and the collectors' runner (node_exporter's pattern).
 *
 * A collector writes its families into a buffer of its own; the runner
 * keeps a collector's text only when it returned 0 and its buffer refused
 * nothing, so a failing collector leaves no half family behind and the
 * others are still served.  Each collector is reported as
 * gpubench_scrape_collector_success{collector="NAME"} (1 or 0) and
 * gpubench_scrape_collector_duration_seconds{collector="NAME"}.
 *
 * Appends follow dynbuf's rule: pieces are appended with (void)!, and the
 * caller asks dynbuf_failed() once before the text is used.
 */
#ifndef GPUBENCH_COMMON_PROM_TEXT_H
#define GPUBENCH_COMMON_PROM_TEXT_H

#include "dynbuf.h"

#include <stddef.h>

/* "# HELP name text\n# TYPE name type\n". */
void prom_help(struct dynbuf *b, const char *name, const char *type, const char *text);

/* v escaped as a label value (NULL writes nothing: an empty value). */
void prom_value(struct dynbuf *b, const char *v);

/* name="value" (value escaped, NULL as ""), after a comma unless the
 * buffer ends in '{': labels are written between prom_open and
 * prom_close, in the order given. */
void prom_label(struct dynbuf *b, const char *name, const char *value);

/* The same with a number written with printf's %.*g (digits). */
void prom_label_number(struct dynbuf *b, const char *name, double v, int digits);

/* "metric{" and "}"; a series is prom_open, prom_label..., prom_close
 * and prom_sample. */
void prom_open(struct dynbuf *b, const char *metric);
void prom_close(struct dynbuf *b);

/* " value\n": %.9g, or an integer's digits when v is whole. */
void prom_sample(struct dynbuf *b, double v);

/* name as a label name into out (cap bytes): each character outside
 * [a-zA-Z0-9_] (or a leading digit) as '_'.  0, or -1 when nothing is
 * left or the name is reserved (a "__" prefix, which file_sd drops). */
int prom_label_name(const char *name, char *out, size_t cap);

/* Series gathered before they are printed, so that two sources of one
 * label set make one line (Prometheus refuses a repeated series): each
 * entry is a whole "name{labels}" text, its value, and a borrowed tag the
 * caller may read back after the merge.  Sorting makes the merge
 * O(n log n) whatever the number of series (a cJSON object keyed by the
 * line was a linear search a series: quadratic at 8,000 cards). */
struct prom_entry {
    char *line;
    double v;
    size_t seq;      /* order put, which keep-first keeps */
    const void *tag; /* the caller's, borrowed */
};

struct prom_set {
    struct prom_entry *e;
    size_t n, cap;
    int failed; /* a put ran out of memory: the set is not whole */
};

/* Puts line's text (copied) with v.  0, or -1 (and failed set) when the
 * line's buffer failed or memory ran out. */
int prom_set_put(struct prom_set *s, const struct dynbuf *line, double v, const void *tag);

/* Sorts by line and makes each line one entry: the sum of its values
 * (add) or its first one's (add 0). */
void prom_set_merge(struct prom_set *s, int add);

/* "line value\n" for each entry, in the set's order. */
void prom_set_print(struct dynbuf *b, const struct prom_set *s);

void prom_set_free(struct prom_set *s);

/* One collector: its name (the collector label) and its function, which
 * writes its families into b from ctx and returns 0, or -1 when what it
 * reads failed. */
struct prom_collector {
    const char *name;
    int (*collect)(void *ctx, struct dynbuf *b);
};

/* Runs the n collectors in turn, each into a buffer of cap bytes, appends
 * the text of those that succeeded to out, then the two scrape families.
 * Returns the number of collectors that failed (0 when all wrote). */
int prom_collect(const struct prom_collector *c, size_t n, void *ctx, size_t cap,
                 struct dynbuf *out);

#endif
