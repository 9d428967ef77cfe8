/*
 * card_events.c - see card_events.h.
 */
#include "card_events.h"

#include "json_build.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct diff {
    struct card_event *out;
    int n, cap;
    struct json_build jb; /* the events' details: a failure sticks */
};

static struct card_event *add(struct diff *d, const char *kind, int critical)
{
    struct card_event *e;

    if (d->n >= d->cap)
        return NULL;
    e = &d->out[d->n];
    memset(e, 0, sizeof(*e));
    snprintf(e->kind, sizeof(e->kind), "%s", kind);
    e->critical = critical;
    e->detail = jb_new_object(&d->jb);
    if (e->detail == NULL)
        return NULL;
    d->n++;
    return e;
}

/* o.name as a number, or -1 where missing or null. */
static double num(const cJSON *o, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(o, name);

    if (cJSON_IsBool(v))
        return cJSON_IsTrue(v);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/* A count that rose: both read and cur above prev. */
static int rose(const cJSON *prev, const cJSON *cur, const char *name, double *by)
{
    double a = num(prev, name), b = num(cur, name);

    *by = b - a;
    return prev != NULL && a >= 0 && b > a;
}

static void counter_rose(struct diff *d, const cJSON *prev, const cJSON *cur, const char *name,
                         const char *kind, int critical, const char *what)
{
    struct card_event *e;
    double by;

    if (!rose(prev, cur, name, &by) || (e = add(d, kind, critical)) == NULL)
        return;
    snprintf(e->message, sizeof(e->message), "%s rose by %.0f to %.0f", what, by,
             num(cur, name));
    jb_number(&d->jb, e->detail, name, num(cur, name));
    jb_number(&d->jb, e->detail, "rose_by", by);
}

/* A state that holds now and did not (or: the first reading). */
static int became(const cJSON *prev, const cJSON *cur, const char *name, int first)
{
    return num(cur, name) > 0 && (first || num(prev, name) <= 0);
}

static void xids(struct diff *d, const cJSON *cur, const int *critical, int n_critical)
{
    const cJSON *x;

    cJSON_ArrayForEach(x, cJSON_GetObjectItem(cur, "xid")) {
        int xid = (int)num(x, "xid"), listed = 0;
        struct card_event *e;
        for (int i = 0; i < n_critical; i++)
            listed |= critical[i] == xid;
        if ((e = add(d, "xid", listed)) == NULL)
            return;
        snprintf(e->message, sizeof(e->message), "XID %d%s", xid,
                 listed ? " (a critical kind: the card needs attention)" : "");
        jb_number(&d->jb, e->detail, "xid", xid);
    }
}

static void remaps(struct diff *d, const cJSON *prev, const cJSON *cur, int first)
{
    const cJSON *a = cJSON_GetObjectItem(prev, "remapped_rows");
    const cJSON *b = cJSON_GetObjectItem(cur, "remapped_rows");
    struct card_event *e;

    if (became(a, b, "pending", first) && (e = add(d, "row_remap_pending", 1)) != NULL) {
        snprintf(e->message, sizeof(e->message),
                 "memory rows wait for a GPU reset to be remapped");
        jb_item(&d->jb, e->detail, "remapped_rows", cJSON_Duplicate(b, 1));
    }
    if (became(a, b, "failed", first) && (e = add(d, "row_remap_failed", 1)) != NULL) {
        snprintf(e->message, sizeof(e->message), "a memory row could not be remapped");
        jb_item(&d->jb, e->detail, "remapped_rows", cJSON_Duplicate(b, 1));
    }
    counter_rose(d, a, b, "correctable", "row_remapped", 0, "rows remapped (correctable)");
    counter_rose(d, a, b, "uncorrectable", "row_remapped", 0, "rows remapped (uncorrectable)");
}

static void ecc(struct diff *d, const cJSON *prev, const cJSON *cur)
{
    static const char *const kinds[2] = {"volatile", "aggregate"};
    const cJSON *a = cJSON_GetObjectItem(prev, "ecc"), *b = cJSON_GetObjectItem(cur, "ecc");
    char what[64];

    for (int k = 0; k < 2; k++) {
        const cJSON *pa = cJSON_GetObjectItem(a, kinds[k]), *pb = cJSON_GetObjectItem(b, kinds[k]);
        snprintf(what, sizeof(what), "uncorrected ECC errors (%s)", kinds[k]);
        counter_rose(d, pa, pb, "uncorrected", "ecc_uncorrected", 1, what);
        snprintf(what, sizeof(what), "corrected ECC errors (%s)", kinds[k]);
        counter_rose(d, pa, pb, "corrected", "ecc_corrected", 0, what);
    }
}

static void pages(struct diff *d, const cJSON *prev, const cJSON *cur, int first)
{
    const cJSON *a = cJSON_GetObjectItem(prev, "retired_pages");
    const cJSON *b = cJSON_GetObjectItem(cur, "retired_pages");
    struct card_event *e;

    if (became(a, b, "pending", first) && (e = add(d, "page_retire_pending", 1)) != NULL) {
        snprintf(e->message, sizeof(e->message),
                 "memory pages wait for a GPU reset to be retired");
        jb_item(&d->jb, e->detail, "retired_pages", cJSON_Duplicate(b, 1));
    }
    counter_rose(d, a, b, "sbe", "page_retired", 0, "pages retired (single-bit errors)");
    counter_rose(d, a, b, "dbe", "page_retired", 0, "pages retired (double-bit errors)");
}

static const cJSON *link_in(const cJSON *reading, int link)
{
    const cJSON *l;

    cJSON_ArrayForEach(l, cJSON_GetObjectItem(reading, "nvlink"))
        if ((int)num(l, "link") == link)
            return l;
    return NULL;
}

static void nvlinks(struct diff *d, const cJSON *prev, const cJSON *cur, int first)
{
    static const char *const counters[4] = {"replay", "recovery", "crc_flit", "crc_data"};
    const cJSON *l;
    char what[64];

    cJSON_ArrayForEach(l, cJSON_GetObjectItem(cur, "nvlink")) {
        int link = (int)num(l, "link");
        const cJSON *was = link_in(prev, link);
        struct card_event *e;
        if (!cJSON_IsTrue(cJSON_GetObjectItem(l, "up")) &&
            (first || cJSON_IsTrue(cJSON_GetObjectItem(was, "up"))) &&
            (e = add(d, "nvlink_down", 1)) != NULL) {
            snprintf(e->message, sizeof(e->message), "NVLink %d is down", link);
            jb_number(&d->jb, e->detail, "link", link);
        }
        for (int c = 0; c < 4; c++) {
            int before = d->n;
            snprintf(what, sizeof(what), "NVLink %d %s errors", link, counters[c]);
            counter_rose(d, was, l, counters[c], "nvlink_errors", 0, what);
            if (d->n > before)
                jb_number(&d->jb, d->out[d->n - 1].detail, "link", link);
        }
    }
}

static void pcie(struct diff *d, const cJSON *prev, const cJSON *cur, int first)
{
    const cJSON *a = cJSON_GetObjectItem(prev, "pcie"), *b = cJSON_GetObjectItem(cur, "pcie");
    double width = num(b, "width"), max = num(b, "width_max");
    struct card_event *e;

    if (width > 0 && max > 0 && width < max && (first || num(a, "width") != width) &&
        (e = add(d, "pcie_width_down", 1)) != NULL) {
        snprintf(e->message, sizeof(e->message), "the PCIe link runs at x%.0f of x%.0f", width,
                 max);
        jb_item(&d->jb, e->detail, "pcie", cJSON_Duplicate(b, 1));
    }
    counter_rose(d, a, b, "replay", "pcie_replay", 0, "PCIe replays");
}

int card_events_diff(const cJSON *prev, const cJSON *cur, const int *critical_xids, int n_xids,
                     struct card_event *out, int cap)
{
    struct diff d = {out, 0, cap, {0}};
    int first;

    if (!cJSON_IsTrue(cJSON_GetObjectItem(cur, "available")))
        return 0;
    if (!cJSON_IsTrue(cJSON_GetObjectItem(prev, "available")))
        prev = NULL;
    first = prev == NULL;
    xids(&d, cur, critical_xids, n_xids);
    remaps(&d, prev, cur, first);
    ecc(&d, prev, cur);
    pages(&d, prev, cur, first);
    nvlinks(&d, prev, cur, first);
    pcie(&d, prev, cur, first);
    if (jb_failed(&d.jb)) {
        card_events_free(out, d.n);
        return -1;
    }
    return d.n;
}

void card_events_free(struct card_event *events, int n)
{
    for (int i = 0; i < n; i++) {
        cJSON_Delete(events[i].detail);
        events[i].detail = NULL;
    }
}

int card_critical_xids_parse(const char *text, int *xids, int cap)
{
    int n = 0;

    while (*text) {
        char *end;
        long v = strtol(text, &end, 10);
        if (end == text || v <= 0 || v > 100000 || n >= cap || (*end != ',' && *end != '\0'))
            return -1;
        xids[n++] = (int)v;
        text = *end == ',' ? end + 1 : end;
    }
    return n;
}

/* The lasting kinds and the field of the reading each is read from. */
static const struct lasting {
    const char *kind, *group, *field;
} lasting_kinds[] = {
    {"row_remap_pending", "remapped_rows", "pending"},
    {"row_remap_failed", "remapped_rows", "failed"},
    {"page_retire_pending", "retired_pages", "pending"},
    {"nvlink_down", "nvlink", "up"},
    {"pcie_width_down", "pcie", "width"},
};

static const struct lasting *lasting_of(const char *kind)
{
    for (size_t i = 0; i < sizeof(lasting_kinds) / sizeof(lasting_kinds[0]); i++)
        if (strcmp(lasting_kinds[i].kind, kind) == 0)
            return &lasting_kinds[i];
    return NULL;
}

int card_event_lasting(const char *kind)
{
    return lasting_of(kind) != NULL;
}

int card_event_holds(const char *kind, const cJSON *detail, const cJSON *reading)
{
    const struct lasting *l = lasting_of(kind);
    const cJSON *group = cJSON_GetObjectItem(reading, l ? l->group : "");
    double v;

    if (l == NULL || !cJSON_IsTrue(cJSON_GetObjectItem(reading, "available")) || group == NULL)
        return 1;
    if (strcmp(kind, "nvlink_down") == 0) {
        const cJSON *link = link_in(reading, (int)num(detail, "link"));
        return link == NULL || !cJSON_IsTrue(cJSON_GetObjectItem(link, "up"));
    }
    if (strcmp(kind, "pcie_width_down") == 0)
        return num(group, "width") <= 0 || num(group, "width_max") <= 0 ||
               num(group, "width") < num(group, "width_max");
    v = num(group, l->field);
    return v < 0 || v > 0; /* null, or still pending / failed */
}

void card_event_subject(const struct card_event *e, char *buf, size_t cap)
{
    const cJSON *n = cJSON_GetObjectItem(e->detail, strcmp(e->kind, "xid") == 0 ? "xid" : "link");

    if (cJSON_IsNumber(n) && (strcmp(e->kind, "xid") == 0 || strncmp(e->kind, "nvlink", 6) == 0))
        snprintf(buf, cap, "%s %d", e->kind, n->valueint);
    else
        snprintf(buf, cap, "%s", e->kind);
}
