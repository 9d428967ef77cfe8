/*
 * fleet.c - see fleet.h.
 *
 * Both answers come from one routine, judge_cards: given n cards' rows, it
 * lists the row keys (first seen first), gathers each card's median per
 * key and judges every card on every key.  A run judged at its end is card
 * 0 among its peers; a group of GET /fleet is all of its cards.
 */
#include "fleet.h"

#include "bench_spec.h"
#include "compare.h"
#include "fleet_hash.h"
#include "json_build.h"
#include "shift.h"
#include "work_units.h"

#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROW_KEYS 256 /* row keys judged in one group */

/* Whether a fleet of n cards is judged, said on obj (a group, or a run's
 * fleet part); the rows themselves are judged by judge_cards, which
 * holds every row of fewer cards back on its own. */
static void add_too_few(struct json_build *jb, cJSON *obj, int n)
{
    jb_bool(jb, obj, "too_few_cards", n < FLEET_MIN_CARDS);
    jb_number(jb, obj, "cards_needed", FLEET_MIN_CARDS);
}

/* The index of kv among keys[0..nkeys-1], or -1: tried first at hint
 * (the row's place: cards of one group list their rows in one order, so
 * a card's rows are matched in one pass instead of a search a row). */
static int key_index(const cJSON *const *keys, int nkeys, const cJSON *kv, int hint)
{
    if (hint < nkeys && cJSON_Compare(keys[hint], kv, 1))
        return hint;
    for (int k = 0; k < nkeys; k++)
        if (cJSON_Compare(keys[k], kv, 1))
            return k;
    return -1;
}

/* Each card's median_ms per key, per unit of work (a digest row says its
 * units: work_units.h), NAN where it has none, into value[c * nkeys + k]:
 * cards whose calibration landed on other work are judged on the same
 * speed.  One walk of each card's rows. */
static void row_values(const char *benchmark, const cJSON *const *cards, int n,
                       const cJSON *const *keys, int nkeys, double *value)
{
    for (int c = 0; c < n; c++) {
        const cJSON *row;
        int place = 0;
        for (int k = 0; k < nkeys; k++)
            value[(size_t)c * (size_t)nkeys + (size_t)k] = NAN;
        cJSON_ArrayForEach(row, cards[c]) {
            const char *field = compare_row_key(row);
            const cJSON *m = cJSON_GetObjectItem(row, "median_ms");
            const cJSON *kv = field ? cJSON_GetObjectItem(row, field) : NULL;
            int k = kv ? key_index(keys, nkeys, kv, place) : -1;
            double *v = k >= 0 ? &value[(size_t)c * (size_t)nkeys + (size_t)k] : NULL;
            place++;
            /* the first row of a key counts, as a search from the top found it */
            if (v && isnan(*v) && cJSON_IsNumber(m))
                *v = m->valuedouble / gb_work_units(benchmark, NULL, row);
        }
    }
}

/* The row keys of every card, first seen first, into keys (borrowed). */
static int row_keys(const cJSON *const *cards, int n, const cJSON **keys)
{
    int nkeys = 0;

    for (int c = 0; c < n; c++) {
        const cJSON *row;
        int place = 0;
        cJSON_ArrayForEach(row, cards[c]) {
            const char *field = compare_row_key(row);
            const cJSON *kv = field ? cJSON_GetObjectItem(row, field) : NULL;
            if (kv && key_index(keys, nkeys, kv, place) < 0 && nkeys < MAX_ROW_KEYS)
                keys[nkeys++] = kv;
            place++;
        }
    }
    return nkeys;
}

/* Judges n cards (their rows) on every row key.  rows_out gets one object
 * per key {"key", "median_ms", "mad_ms", "cards"}; per_card[c] one array
 * per card of {"key", "value_ms", "z", "outlier"}, and worst_z[c] the
 * largest |z| of an outlier row of card c (0 when none).  A failed
 * addition fails jb; 0, or -1 when the judging itself could not be done
 * (out of memory).  What was made is the caller's to free. */
static int judge_cards(struct json_build *jb, const char *benchmark, const cJSON *const *cards,
                       int n, double margin, cJSON *rows_out, cJSON **per_card,
                       double *worst_z)
{
    const cJSON *keys[MAX_ROW_KEYS];
    int nkeys = row_keys(cards, n, keys);
    double *value = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1) *
                           (size_t)(nkeys > 0 ? nkeys : 1));
    double *x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    double *z = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    int *who = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    int rc = -1;

    if (value == NULL || x == NULL || z == NULL || who == NULL)
        goto done;
    row_values(benchmark, cards, n, keys, nkeys, value);
    for (int c = 0; c < n; c++)
        worst_z[c] = 0;
    for (int k = 0; k < nkeys; k++) {
        double med = NAN, mad = NAN;
        int m = 0;
        cJSON *row;
        for (int c = 0; c < n; c++) {
            double v = value[(size_t)c * (size_t)nkeys + (size_t)k];
            if (isfinite(v) && v > 0) {
                x[m] = v;
                who[m++] = c;
            }
        }
        if (m >= FLEET_MIN_CARDS && gb_robust_z(x, m, z, &med, &mad) != 0)
            goto done;
        row = jb_new_object(jb);
        jb_item(jb, row, "key", cJSON_Duplicate(keys[k], 0));
        jb_number_or_null(jb, row, "median_ms", med);
        jb_number_or_null(jb, row, "mad_ms", mad);
        jb_number(jb, row, "cards", m);
        jb_push(jb, rows_out, row);
        for (int i = 0; i < m; i++) {
            int judged = m >= FLEET_MIN_CARDS;
            int out = judged && gb_is_outlier(z[i], x[i], med, margin);
            cJSON *cell = jb_new_object(jb);
            jb_item(jb, cell, "key", cJSON_Duplicate(keys[k], 0));
            jb_number(jb, cell, "value_ms", x[i]);
            jb_number_or_null(jb, cell, "z", judged ? z[i] : NAN);
            jb_bool(jb, cell, "outlier", out);
            jb_push(jb, per_card[who[i]], cell);
            if (out && fabs(z[i]) > worst_z[who[i]])
                worst_z[who[i]] = fabs(z[i]);
        }
    }
    rc = 0;

done:
    free(value);
    free(x);
    free(z);
    free(who);
    return rc;
}

cJSON *fleet_judge_run(const char *benchmark, const cJSON *rows, const cJSON *peers,
                       double margin)
{
    int n = 1 + cJSON_GetArraySize(peers), c = 1;
    const cJSON **cards = calloc((size_t)n, sizeof(*cards));
    cJSON **per_card = calloc((size_t)n, sizeof(*per_card));
    cJSON **differs = calloc((size_t)n, sizeof(*differs));
    double *worst = calloc((size_t)n, sizeof(double));
    struct json_build jb = {0};
    cJSON *out = jb_new_object(&jb), *ids, *keyed = jb_new_array(&jb), *outl;
    const cJSON *p, *info;
    cJSON *cell;

    if (cards == NULL || per_card == NULL || worst == NULL) {
        jb_fail(&jb);
        goto done;
    }
    cards[0] = rows;
    ids = jb_array(&jb, out, "peers");
    cJSON_ArrayForEach(p, peers) {
        const cJSON *id = cJSON_GetObjectItem(p, "run_id");
        cards[c++] = cJSON_GetObjectItem(p, "rows");
        if (id != NULL)
            jb_push(&jb, ids, cJSON_Duplicate(id, 0));
    }
    for (c = 0; c < n; c++)
        per_card[c] = jb_new_array(&jb);
    if (jb_failed(&jb) ||
        judge_cards(&jb, benchmark, cards, n, margin, keyed, per_card, worst) != 0) {
        jb_fail(&jb);
        goto done;
    }
    jb_number(&jb, out, "cards", n);
    add_too_few(&jb, out, n);
    jb_string(&jb, out, "time_per", gb_work_unit(benchmark)->unit);
    outl = jb_array(&jb, out, "outlier_rows");
    /* card 0's cells, with each row's median and MAD beside them */
    cJSON_ArrayForEach(cell, per_card[0]) {
        cJSON_ArrayForEach(info, keyed)
            if (cJSON_Compare(cJSON_GetObjectItem(info, "key"), cJSON_GetObjectItem(cell, "key"),
                              1)) {
                jb_copy(&jb, cell, info, "median_ms");
                jb_copy(&jb, cell, info, "mad_ms");
                break;
            }
        if (cJSON_IsTrue(cJSON_GetObjectItem(cell, "outlier")))
            jb_push(&jb, outl, cJSON_Duplicate(cJSON_GetObjectItem(cell, "key"), 0));
    }
    jb_item(&jb, out, "rows", per_card[0]); /* owned or deleted */
    per_card[0] = NULL;

done:
    for (c = 0; per_card && c < n; c++)
        cJSON_Delete(per_card[c]);
    free(per_card);
    free(cards);
    free(worst);
    cJSON_Delete(keyed);
    if (jb_failed(&jb)) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}

/* A card's method as its key holds it (compare_method_of): NEW. */
static cJSON *card_method(const cJSON *card)
{
    return compare_method_of(cJSON_GetObjectItem(card, "method"),
                             cJSON_GetStringValue(cJSON_GetObjectItem(card, "build")));
}

/* The params of a card's key: those that measure (gb_params_key): NEW. */
static cJSON *card_params(const cJSON *card)
{
    const char *bench = cJSON_GetStringValue(cJSON_GetObjectItem(card, "benchmark"));

    return gb_params_key(gb_benchmark_find(bench), cJSON_GetObjectItem(card, "params"));
}

/* A method as the note names it: "method 3", or the unknown one's text. */
static size_t method_words(char *buf, size_t cap, const cJSON *m)
{
    int n = cJSON_IsNumber(m) ? snprintf(buf, cap, "method %.0f", m->valuedouble)
                              : snprintf(buf, cap, "method %s",
                                         cJSON_IsString(m) ? m->valuestring : "?");

    return n < 0 ? 0 : (size_t)n < cap ? (size_t)n
                                       : cap - 1;
}

/* Each group's "method_note": where the card model of a group appears in
 * groups of other methods, says so, naming them, since their cards are
 * not scored against this group's; null otherwise. */
static void method_notes(struct json_build *jb, cJSON *groups)
{
    cJSON *g, *h;

    cJSON_ArrayForEach(g, groups) {
        const cJSON *key = cJSON_GetObjectItem(g, "key");
        const cJSON *model = cJSON_GetObjectItem(key, "card_model");
        const cJSON *method = cJSON_GetObjectItem(key, "method");
        cJSON *seen = jb_new_array(jb), *text;
        char note[768];
        size_t used = 0;

        if (seen == NULL)
            return;
        used = (size_t)snprintf(note, sizeof(note), "%.100s cards also appear under ",
                                cJSON_GetStringValue(model) ? model->valuestring : "These");
        cJSON_ArrayForEach(h, groups) {
            const cJSON *hkey = cJSON_GetObjectItem(h, "key");
            const cJSON *hm = cJSON_GetObjectItem(hkey, "method"), *s;
            int again = 0;
            if (h == g || cJSON_Compare(hm, method, 1) ||
                !cJSON_Compare(cJSON_GetObjectItem(hkey, "benchmark"),
                               cJSON_GetObjectItem(key, "benchmark"), 1) ||
                !cJSON_Compare(cJSON_GetObjectItem(hkey, "card_model"), model, 1))
                continue;
            cJSON_ArrayForEach(s, seen)
                again |= cJSON_Compare(s, hm, 1);
            if (again)
                continue;
            if (hm != NULL && !cJSON_AddItemReferenceToArray(seen, (cJSON *)hm))
                jb_fail(jb);
            if (cJSON_GetArraySize(seen) > 1 && used + 2 < sizeof(note))
                used += (size_t)snprintf(note + used, sizeof(note) - used, ", ");
            if (used < sizeof(note))
                used += method_words(note + used, sizeof(note) - used, hm);
        }
        if (cJSON_GetArraySize(seen) == 0) {
            text = cJSON_CreateNull();
        } else {
            if (used < sizeof(note))
                snprintf(note + used, sizeof(note) - used,
                         ": a group each method, never scored against each other");
            text = cJSON_CreateString(note);
        }
        cJSON_Delete(seen);
        jb_item(jb, g, "method_note", text);
    }
}

/* A group's card as sorted for its list: its worst |z| and its place. */
struct ranked {
    double worst;
    int index;
};

/* The largest worst |z| first, then by place (as stored). */
static int by_worst(const void *a, const void *b)
{
    const struct ranked *x = a, *y = b;

    if (x->worst != y->worst)
        return x->worst < y->worst ? 1 : -1;
    return (x->index > y->index) - (x->index < y->index);
}

/* One group of GET /fleet: the cards of idx[0..n-1] (indexes into
 * cards, the fleet's array of pointers, so that no card is looked up
 * by walking the list).  A NEW object for jb_push, whole unless jb
 * failed. */
static cJSON *build_group(struct json_build *jb, const cJSON *const *cards, const int *idx,
                          int n, double margin)
{
    static const char *const copied[] = {"host", "device_uuid", "run_id", NULL};
    const cJSON **rows = calloc((size_t)n, sizeof(*rows));
    cJSON **per_card = calloc((size_t)n, sizeof(*per_card));
    cJSON **differs = calloc((size_t)n, sizeof(*differs));
    double *worst = calloc((size_t)n, sizeof(double));
    struct ranked *order = calloc((size_t)n, sizeof(*order));
    cJSON *g = jb_new_object(jb), *list, *key;
    const cJSON *first = cards[idx[0]];
    const char *benchmark = cJSON_GetStringValue(cJSON_GetObjectItem(first, "benchmark"));

    if (rows == NULL || per_card == NULL || differs == NULL || worst == NULL || order == NULL) {
        jb_fail(jb);
        goto done;
    }
    for (int i = 0; i < n; i++) {
        rows[i] = cJSON_GetObjectItem(cards[idx[i]], "rows");
        per_card[i] = jb_new_array(jb);
    }
    key = jb_object(jb, g, "key");
    jb_copy(jb, key, first, "benchmark");
    jb_copy(jb, key, first, "card_model");
    jb_item(jb, key, "method", card_method(first));
    jb_item(jb, key, "params", card_params(first));
    jb_number(jb, g, "n_cards", n);
    add_too_few(jb, g, n);
    jb_string(jb, g, "time_per", gb_work_unit(benchmark)->unit);
    if (jb_failed(jb) ||
        judge_cards(jb, benchmark, rows, n, margin, jb_array(jb, g, "rows"), per_card, worst) !=
            0) {
        jb_fail(jb);
        goto done;
    }
    /* known_answer: the cards whose exact answers are not the model's */
    fleet_hash_judge(jb, g, rows, n, differs);
    /* outliers first, the farthest first; then as stored (by card) */
    for (int i = 0; i < n; i++)
        order[i] = (struct ranked){worst[i], i};
    qsort(order, (size_t)n, sizeof(*order), by_worst);
    list = jb_array(jb, g, "cards");
    for (int i = 0; i < n; i++) {
        const cJSON *src = cards[idx[order[i].index]];
        cJSON *card = jb_new_object(jb);
        for (int f = 0; copied[f]; f++)
            jb_copy(jb, card, src, copied[f]);
        jb_bool(jb, card, "outlier", order[i].worst > 0);
        jb_item(jb, card, "rows", per_card[order[i].index]); /* owned or deleted */
        per_card[order[i].index] = NULL;
        if (differs[order[i].index]) {
            jb_item(jb, card, "hash_differs", differs[order[i].index]);
            differs[order[i].index] = NULL;
        }
        jb_push(jb, list, card);
    }

done:
    for (int i = 0; per_card && i < n; i++)
        cJSON_Delete(per_card[i]);
    for (int i = 0; differs && i < n; i++)
        cJSON_Delete(differs[i]);
    free(per_card);
    free(differs);
    free(rows);
    free(worst);
    free(order);
    return g;
}

/* A card's group for sorting: its "group" text (NULL: a group of its
 * own) and its place in the list. */
struct grouped {
    const char *group;
    int index;
};

/* Cards of one group together, each group as its first card, then by place. */
static int by_group(const void *a, const void *b)
{
    const struct grouped *x = a, *y = b;
    int c;

    if (x->group && y->group) {
        if ((c = strcmp(x->group, y->group)) != 0)
            return c;
    } else if (x->group != y->group) {
        return x->group ? -1 : 1;
    }
    return (x->index > y->index) - (x->index < y->index);
}

/* Runs of the sorted cards, by their first card's place. */
struct span {
    int first, start, len;
};

static int by_first(const void *a, const void *b)
{
    const struct span *x = a, *y = b;

    return (x->first > y->first) - (x->first < y->first);
}

cJSON *fleet_build(const cJSON *cards, double margin)
{
    int n = cJSON_GetArraySize(cards), c = 0, nspans = 0;
    size_t alloc = (size_t)(n > 0 ? n : 1);
    const cJSON **items = malloc(sizeof(*items) * alloc);
    struct grouped *sorted = malloc(sizeof(*sorted) * alloc);
    struct span *spans = malloc(sizeof(*spans) * alloc);
    int *idx = malloc(sizeof(int) * alloc);
    struct json_build jb = {0};
    cJSON *out = jb_new_object(&jb), *groups;
    const cJSON *card;

    if (items == NULL || sorted == NULL || spans == NULL || idx == NULL) {
        jb_fail(&jb);
        goto done;
    }
    jb_number_or_null(&jb, out, "margin", margin);
    jb_number(&jb, out, "outlier_z", GB_OUTLIER_Z);
    groups = jb_array(&jb, out, "groups");
    /* The cards as an array of pointers, once: the list is linked, and
     * finding each card's group by walking it made 8,000 cards cubic.
     * Groups come in the order of their first card (cards come grouped
     * by the store, or not), each group's cards in their order. */
    cJSON_ArrayForEach(card, cards) {
        items[c] = card;
        sorted[c] = (struct grouped){
            cJSON_GetStringValue(cJSON_GetObjectItem(card, "group")), c};
        c++;
    }
    qsort(sorted, (size_t)n, sizeof(*sorted), by_group);
    for (int i = 0; i < n; i++) {
        int same = nspans > 0 && sorted[i].group &&
                   sorted[spans[nspans - 1].start].group &&
                   strcmp(sorted[i].group, sorted[spans[nspans - 1].start].group) == 0;
        if (same) {
            spans[nspans - 1].len++;
        } else {
            spans[nspans++] = (struct span){sorted[i].index, i, 1};
        }
    }
    qsort(spans, (size_t)nspans, sizeof(*spans), by_first);
    for (int s = 0; s < nspans && !jb_failed(&jb); s++) {
        for (int k = 0; k < spans[s].len; k++)
            idx[k] = sorted[spans[s].start + k].index;
        jb_push(&jb, groups, build_group(&jb, items, idx, spans[s].len, margin));
    }
    method_notes(&jb, groups);

done:
    free(items);
    free(sorted);
    free(spans);
    free(idx);
    if (jb_failed(&jb)) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}
