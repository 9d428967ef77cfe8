/*
 * prom_text.c - see prom_text.h.
 */
#include "prom_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

void prom_help(struct dynbuf *b, const char *name, const char *type, const char *text)
{
    (void)!dynbuf_printf(b, "# HELP %s %s\n# TYPE %s %s\n", name, text, name, type);
}

void prom_value(struct dynbuf *b, const char *v)
{
    const char *run = v;

    if (v == NULL)
        return;
    /* plain stretches in one append, an escape where one is needed */
    for (; *v; v++) {
        const char *esc = *v == '\\' ? "\\\\" : *v == '"' ? "\\\""
                                            : *v == '\n'  ? "\\n"
                                                          : NULL;
        if (esc == NULL)
            continue;
        (void)!dynbuf_add(b, run, (size_t)(v - run));
        (void)!dynbuf_add(b, esc, 2);
        run = v + 1;
    }
    (void)!dynbuf_add(b, run, (size_t)(v - run));
}

/* A comma, unless the series' label set has just been opened. */
static void separate(struct dynbuf *b)
{
    if (b->len > 0 && b->data[b->len - 1] != '{')
        (void)!dynbuf_add(b, ",", 1);
}

void prom_label(struct dynbuf *b, const char *name, const char *value)
{
    separate(b);
    (void)!dynbuf_printf(b, "%s=\"", name);
    prom_value(b, value);
    (void)!dynbuf_add(b, "\"", 1);
}

void prom_label_number(struct dynbuf *b, const char *name, double v, int digits)
{
    separate(b);
    (void)!dynbuf_printf(b, "%s=\"%.*g\"", name, digits, v);
}

void prom_open(struct dynbuf *b, const char *metric)
{
    (void)!dynbuf_printf(b, "%s{", metric);
}

void prom_close(struct dynbuf *b)
{
    (void)!dynbuf_add(b, "}", 1);
}

void prom_sample(struct dynbuf *b, double v)
{
    char digits[24], *p = digits + sizeof(digits);
    long long whole;
    int negative;

    if (!(isfinite(v) && v == floor(v) && fabs(v) < 1e15)) {
        (void)!dynbuf_printf(b, " %.9g\n", v);
        return;
    }
    /* a whole number's digits by hand: most samples are counts, ages and
     * 0/1 states, and printf is most of a big scrape's time */
    whole = (long long)v;
    negative = whole < 0;
    if (negative)
        whole = -whole;
    *--p = '\n';
    do {
        *--p = (char)('0' + whole % 10);
        whole /= 10;
    } while (whole > 0);
    if (negative)
        *--p = '-';
    *--p = ' ';
    (void)!dynbuf_add(b, p, (size_t)(digits + sizeof(digits) - p));
}

int prom_label_name(const char *name, char *out, size_t cap)
{
    size_t n = 0;

    if (cap == 0)
        return -1;
    for (; name[n] && n + 1 < cap; n++) {
        char c = name[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
                 (n > 0 && c >= '0' && c <= '9');
        out[n] = ok ? c : '_';
    }
    out[n] = '\0';
    return n == 0 || strncmp(out, "__", 2) == 0 ? -1 : 0;
}

int prom_set_put(struct prom_set *s, const struct dynbuf *line, double v, const void *tag)
{
    char *copy;

    if (dynbuf_failed(line) || line->data == NULL)
        goto failed;
    if (s->n == s->cap) {
        size_t cap = s->cap ? 2 * s->cap : 256;
        struct prom_entry *grown = realloc(s->e, cap * sizeof(*grown));
        if (grown == NULL)
            goto failed;
        s->e = grown;
        s->cap = cap;
    }
    if ((copy = strdup(line->data)) == NULL)
        goto failed;
    s->e[s->n] = (struct prom_entry){copy, v, s->n, tag};
    s->n++;
    return 0;

failed:
    s->failed = 1;
    return -1;
}

static int by_line(const void *a, const void *b)
{
    const struct prom_entry *x = a, *y = b;
    int c = strcmp(x->line, y->line);

    return c ? c : (x->seq > y->seq) - (x->seq < y->seq);
}

void prom_set_merge(struct prom_set *s, int add)
{
    size_t kept = 0;

    if (s->n == 0)
        return;
    qsort(s->e, s->n, sizeof(*s->e), by_line);
    for (size_t i = 1; i < s->n; i++) {
        if (strcmp(s->e[i].line, s->e[kept].line) == 0) {
            if (add)
                s->e[kept].v += s->e[i].v;
            free(s->e[i].line);
        } else {
            s->e[++kept] = s->e[i];
        }
    }
    s->n = kept + 1;
}

void prom_set_print(struct dynbuf *b, const struct prom_set *s)
{
    for (size_t i = 0; i < s->n; i++) {
        (void)!dynbuf_add(b, s->e[i].line, strlen(s->e[i].line));
        prom_sample(b, s->e[i].v);
    }
}

void prom_set_free(struct prom_set *s)
{
    for (size_t i = 0; i < s->n; i++)
        free(s->e[i].line);
    free(s->e);
    memset(s, 0, sizeof(*s));
}

static double now_s(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int prom_collect(const struct prom_collector *c, size_t n, void *ctx, size_t cap,
                 struct dynbuf *out)
{
    double *took = calloc(n > 0 ? n : 1, sizeof(double));
    char *ok = calloc(n > 0 ? n : 1, 1);
    struct dynbuf one;
    int failed = 0;

    dynbuf_init(&one, cap);
    for (size_t i = 0; i < n; i++) {
        double t0 = now_s();
        int rc;

        dynbuf_reset(&one);
        rc = c[i].collect(ctx, &one);
        if (took)
            took[i] = now_s() - t0;
        rc = rc == 0 && !dynbuf_failed(&one) ? dynbuf_add(out, one.data ? one.data : "", one.len)
                                             : -1;
        if (rc == 0) {
            if (ok)
                ok[i] = 1;
        } else {
            failed++;
        }
    }
    dynbuf_free(&one);
    prom_help(out, "gpubench_scrape_collector_success", "gauge",
              "1 when the collector's families were written whole, 0 when it failed (its "
              "families are left out of this scrape).");
    for (size_t i = 0; i < n; i++) {
        prom_open(out, "gpubench_scrape_collector_success");
        prom_label(out, "collector", c[i].name);
        prom_close(out);
        prom_sample(out, ok && ok[i]);
    }
    prom_help(out, "gpubench_scrape_collector_duration_seconds", "gauge",
              "Seconds the collector took in this scrape.");
    for (size_t i = 0; i < n; i++) {
        prom_open(out, "gpubench_scrape_collector_duration_seconds");
        prom_label(out, "collector", c[i].name);
        prom_close(out);
        (void)!dynbuf_printf(out, " %.6f\n", took ? took[i] : 0.0);
    }
    free(took);
    free(ok);
    return failed;
}
