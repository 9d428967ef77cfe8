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
#include "shift.h"
#include "work_units.h"

#include <stdio.h>

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAX_ROW_KEYS 256 /* row keys judged in one group */

static void add_num_or_null(cJSON *obj, const char *name, double v)
{
    if (isfinite(v))
        cJSON_AddNumberToObject(obj, name, v);
    else
        cJSON_AddNullToObject(obj, name);
}

/* Whether a fleet of n cards is judged, said on obj (a group, or a run's
 * fleet part); the rows themselves are judged by judge_cards, which
 * holds every row of fewer cards back on its own. */
static void add_too_few(cJSON *obj, int n)
{
    cJSON_AddBoolToObject(obj, "too_few_cards", n < FLEET_MIN_CARDS);
    cJSON_AddNumberToObject(obj, "cards_needed", FLEET_MIN_CARDS);
}

/* The median_ms of the row of rows whose key is kv, per unit of work (a
 * digest row says its units: work_units.h), NAN when none: cards whose
 * calibration landed on other work are judged on the same speed. */
static double row_value(const char *benchmark, const cJSON *rows, const cJSON *kv)
{
    const cJSON *row;

    cJSON_ArrayForEach(row, rows) {
        const char *field = compare_row_key(row);
        const cJSON *m = cJSON_GetObjectItem(row, "median_ms");
        if (field && cJSON_Compare(cJSON_GetObjectItem(row, field), kv, 1) && cJSON_IsNumber(m))
            return m->valuedouble / gb_work_units(benchmark, NULL, row);
    }
    return NAN;
}

/* The row keys of every card, first seen first, into keys (borrowed). */
static int row_keys(const cJSON *const *cards, int n, const cJSON **keys)
{
    int nkeys = 0;

    for (int c = 0; c < n; c++) {
        const cJSON *row;
        cJSON_ArrayForEach(row, cards[c]) {
            const char *field = compare_row_key(row);
            const cJSON *kv = field ? cJSON_GetObjectItem(row, field) : NULL;
            int seen = 0;
            for (int k = 0; kv && k < nkeys && !seen; k++)
                seen = cJSON_Compare(keys[k], kv, 1);
            if (kv && !seen && nkeys < MAX_ROW_KEYS)
                keys[nkeys++] = kv;
        }
    }
    return nkeys;
}

/* Judges n cards (their rows) on every row key.  rows_out gets one object
 * per key {"key", "median_ms", "mad_ms", "cards"}; per_card[c] one array
 * per card of {"key", "value_ms", "z", "outlier"}, and worst_z[c] the
 * largest |z| of an outlier row of card c (0 when none).  0, or -1 out of
 * memory (what was made is the caller's to free). */
static int judge_cards(const char *benchmark, const cJSON *const *cards, int n, double margin,
                       cJSON *rows_out, cJSON **per_card, double *worst_z)
{
    const cJSON *keys[MAX_ROW_KEYS];
    int nkeys = row_keys(cards, n, keys);
    double *x = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    double *z = malloc(sizeof(double) * (size_t)(n > 0 ? n : 1));
    int *who = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    int rc = -1;

    if (x == NULL || z == NULL || who == NULL)
        goto done;
    for (int c = 0; c < n; c++)
        worst_z[c] = 0;
    for (int k = 0; k < nkeys; k++) {
        double med = NAN, mad = NAN;
        int m = 0;
        cJSON *row = cJSON_CreateObject();
        if (row == NULL)
            goto done;
        cJSON_AddItemToArray(rows_out, row);
        for (int c = 0; c < n; c++) {
            double v = row_value(benchmark, cards[c], keys[k]);
            if (isfinite(v) && v > 0) {
                x[m] = v;
                who[m++] = c;
            }
        }
        if (m >= FLEET_MIN_CARDS && gb_robust_z(x, m, z, &med, &mad) != 0)
            goto done;
        cJSON_AddItemToObject(row, "key", cJSON_Duplicate(keys[k], 0));
        add_num_or_null(row, "median_ms", med);
        add_num_or_null(row, "mad_ms", mad);
        cJSON_AddNumberToObject(row, "cards", m);
        for (int i = 0; i < m; i++) {
            int judged = m >= FLEET_MIN_CARDS;
            int out = judged && gb_is_outlier(z[i], x[i], med, margin);
            cJSON *cell = cJSON_CreateObject();
            if (cell == NULL)
                goto done;
            cJSON_AddItemToArray(per_card[who[i]], cell);
            cJSON_AddItemToObject(cell, "key", cJSON_Duplicate(keys[k], 0));
            cJSON_AddNumberToObject(cell, "value_ms", x[i]);
            add_num_or_null(cell, "z", judged ? z[i] : NAN);
            cJSON_AddBoolToObject(cell, "outlier", out);
            if (out && fabs(z[i]) > worst_z[who[i]])
                worst_z[who[i]] = fabs(z[i]);
        }
    }
    rc = 0;

done:
    free(x);
    free(z);
    free(who);
    return rc;
}

cJSON *fleet_judge_run(const char *benchmark, const cJSON *rows, const cJSON *peers,
                       double margin)
{
    int n = 1 + cJSON_GetArraySize(peers), c = 1, ok = 0;
    const cJSON **cards = calloc((size_t)n, sizeof(*cards));
    cJSON **per_card = calloc((size_t)n, sizeof(*per_card));
    double *worst = calloc((size_t)n, sizeof(double));
    cJSON *out = cJSON_CreateObject(), *ids, *keyed = cJSON_CreateArray(), *outl;
    const cJSON *p, *info;
    cJSON *cell;

    if (cards == NULL || per_card == NULL || worst == NULL || out == NULL || keyed == NULL)
        goto done;
    cards[0] = rows;
    ids = cJSON_AddArrayToObject(out, "peers");
    cJSON_ArrayForEach(p, peers) {
        cards[c++] = cJSON_GetObjectItem(p, "rows");
        cJSON_AddItemToArray(ids, cJSON_Duplicate(cJSON_GetObjectItem(p, "run_id"), 0));
    }
    for (c = 0; c < n; c++)
        if ((per_card[c] = cJSON_CreateArray()) == NULL)
            goto done;
    if (judge_cards(benchmark, cards, n, margin, keyed, per_card, worst) != 0)
        goto done;
    cJSON_AddNumberToObject(out, "cards", n);
    add_too_few(out, n);
    cJSON_AddStringToObject(out, "time_per", gb_work_unit(benchmark)->unit);
    outl = cJSON_AddArrayToObject(out, "outlier_rows");
    /* card 0's cells, with each row's median and MAD beside them */
    cJSON_ArrayForEach(cell, per_card[0]) {
        cJSON_ArrayForEach(info, keyed)
            if (cJSON_Compare(cJSON_GetObjectItem(info, "key"), cJSON_GetObjectItem(cell, "key"),
                              1)) {
                cJSON_AddItemToObject(cell, "median_ms",
                                      cJSON_Duplicate(cJSON_GetObjectItem(info, "median_ms"), 0));
                cJSON_AddItemToObject(cell, "mad_ms",
                                      cJSON_Duplicate(cJSON_GetObjectItem(info, "mad_ms"), 0));
                break;
            }
        if (cJSON_IsTrue(cJSON_GetObjectItem(cell, "outlier")))
            cJSON_AddItemToArray(outl, cJSON_Duplicate(cJSON_GetObjectItem(cell, "key"), 0));
    }
    cJSON_AddItemToObject(out, "rows", per_card[0]);
    per_card[0] = NULL;
    ok = 1;

done:
    for (c = 0; per_card && c < n; c++)
        cJSON_Delete(per_card[c]);
    free(per_card);
    free(cards);
    free(worst);
    cJSON_Delete(keyed);
    if (!ok) {
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
 * not scored against this group's; null otherwise.  0, or -1 out of
 * memory. */
static int method_notes(cJSON *groups)
{
    cJSON *g, *h;

    cJSON_ArrayForEach(g, groups) {
        const cJSON *key = cJSON_GetObjectItem(g, "key");
        const cJSON *model = cJSON_GetObjectItem(key, "card_model");
        const cJSON *method = cJSON_GetObjectItem(key, "method");
        cJSON *seen = cJSON_CreateArray(), *text;
        char note[768];
        size_t used = 0;

        if (seen == NULL)
            return -1;
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
            cJSON_AddItemReferenceToArray(seen, (cJSON *)hm);
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
        if (text == NULL || !cJSON_AddItemToObject(g, "method_note", text)) {
            cJSON_Delete(text);
            return -1;
        }
    }
    return 0;
}

/* One group of GET /fleet: the cards of idx[0..n-1]. */
static cJSON *build_group(const cJSON *cards, const int *idx, int n, double margin)
{
    const cJSON **rows = calloc((size_t)n, sizeof(*rows));
    cJSON **per_card = calloc((size_t)n, sizeof(*per_card));
    double *worst = calloc((size_t)n, sizeof(double));
    int *order = calloc((size_t)n, sizeof(int));
    cJSON *g = cJSON_CreateObject(), *list, *key, *first;
    const char *benchmark;
    int ok = 0;

    if (rows == NULL || per_card == NULL || worst == NULL || order == NULL || g == NULL)
        goto done;
    for (int i = 0; i < n; i++) {
        rows[i] = cJSON_GetObjectItem(cJSON_GetArrayItem(cards, idx[i]), "rows");
        order[i] = i;
        if ((per_card[i] = cJSON_CreateArray()) == NULL)
            goto done;
    }
    first = cJSON_GetArrayItem(cards, idx[0]);
    key = cJSON_AddObjectToObject(g, "key");
    cJSON_AddItemToObject(key, "benchmark",
                          cJSON_Duplicate(cJSON_GetObjectItem(first, "benchmark"), 1));
    cJSON_AddItemToObject(key, "card_model",
                          cJSON_Duplicate(cJSON_GetObjectItem(first, "card_model"), 1));
    cJSON_AddItemToObject(key, "method", card_method(first));
    cJSON_AddItemToObject(key, "params", card_params(first));
    cJSON_AddNumberToObject(g, "n_cards", n);
    add_too_few(g, n);
    benchmark = cJSON_GetStringValue(cJSON_GetObjectItem(first, "benchmark"));
    cJSON_AddStringToObject(g, "time_per", gb_work_unit(benchmark)->unit);
    if (judge_cards(benchmark, rows, n, margin, cJSON_AddArrayToObject(g, "rows"), per_card,
                    worst) != 0)
        goto done;
    /* outliers first, the farthest first; then as stored (by card) */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && worst[order[j - 1]] < worst[order[j]]; j--) {
            int t = order[j];
            order[j] = order[j - 1];
            order[j - 1] = t;
        }
    list = cJSON_AddArrayToObject(g, "cards");
    for (int i = 0; i < n; i++) {
        const cJSON *src = cJSON_GetArrayItem(cards, idx[order[i]]);
        cJSON *card = cJSON_CreateObject();
        static const char *const copied[] = {"host", "device_uuid", "run_id", NULL};
        if (card == NULL)
            goto done;
        cJSON_AddItemToArray(list, card);
        for (int f = 0; copied[f]; f++)
            cJSON_AddItemToObject(card, copied[f],
                                  cJSON_Duplicate(cJSON_GetObjectItem(src, copied[f]), 1));
        cJSON_AddBoolToObject(card, "outlier", worst[order[i]] > 0);
        cJSON_AddItemToObject(card, "rows", per_card[order[i]]);
        per_card[order[i]] = NULL;
    }
    ok = 1;

done:
    for (int i = 0; per_card && i < n; i++)
        cJSON_Delete(per_card[i]);
    free(per_card);
    free(rows);
    free(worst);
    free(order);
    if (!ok) {
        cJSON_Delete(g);
        return NULL;
    }
    return g;
}

cJSON *fleet_build(const cJSON *cards, double margin)
{
    int n = cJSON_GetArraySize(cards), ok = 1;
    int *group_of = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    int *idx = malloc(sizeof(int) * (size_t)(n > 0 ? n : 1));
    cJSON *out = cJSON_CreateObject(), *groups;

    if (group_of == NULL || idx == NULL || out == NULL) {
        ok = 0;
        goto done;
    }
    cJSON_AddNumberToObject(out, "margin", margin);
    cJSON_AddNumberToObject(out, "outlier_z", GB_OUTLIER_Z);
    groups = cJSON_AddArrayToObject(out, "groups");
    /* group_of[i]: the first card of i's group (cards come grouped or not) */
    for (int i = 0; i < n; i++) {
        const char *gi = cJSON_GetStringValue(
            cJSON_GetObjectItem(cJSON_GetArrayItem(cards, i), "group"));
        group_of[i] = i;
        for (int j = 0; j < i && gi; j++) {
            const char *gj = cJSON_GetStringValue(
                cJSON_GetObjectItem(cJSON_GetArrayItem(cards, j), "group"));
            if (gj && strcmp(gi, gj) == 0) {
                group_of[i] = group_of[j];
                break;
            }
        }
    }
    for (int i = 0; i < n && ok; i++) {
        int m = 0;
        cJSON *g;
        if (group_of[i] != i)
            continue;
        for (int j = i; j < n; j++)
            if (group_of[j] == i)
                idx[m++] = j;
        if ((g = build_group(cards, idx, m, margin)) == NULL)
            ok = 0;
        else
            cJSON_AddItemToArray(groups, g);
    }
    if (ok && method_notes(groups) != 0)
        ok = 0;

done:
    free(group_of);
    free(idx);
    if (!ok) {
        cJSON_Delete(out);
        return NULL;
    }
    return out;
}
