/*
 * fleet_hash.c - see fleet_hash.h.  A group holds few keys (a kind each)
 * and cards; the counts are plain loops.
 */
#include "fleet_hash.h"

#include "compare.h"

#include <string.h>

#define MAX_HASH_KEYS 16 /* known_answer has five kinds */

/* The hash of the row of rows whose key is kv, or NULL. */
static const char *hash_of(const cJSON *rows, const cJSON *kv)
{
    const cJSON *row;

    cJSON_ArrayForEach(row, rows) {
        const char *field = compare_row_key(row);
        if (field && cJSON_Compare(cJSON_GetObjectItem(row, field), kv, 1))
            return cJSON_GetStringValue(cJSON_GetObjectItem(row, "result_hash"));
    }
    return NULL;
}

/* The keys of the rows with a hash, first seen first, into keys. */
static int hash_keys(const cJSON *const *rows, int n, const cJSON **keys)
{
    int nkeys = 0;

    for (int c = 0; c < n; c++) {
        const cJSON *row;
        cJSON_ArrayForEach(row, rows[c]) {
            const char *field = compare_row_key(row);
            const cJSON *kv = field ? cJSON_GetObjectItem(row, field) : NULL;
            int seen = 0;
            if (kv == NULL || !cJSON_GetStringValue(cJSON_GetObjectItem(row, "result_hash")))
                continue;
            for (int k = 0; k < nkeys && !seen; k++)
                seen = cJSON_Compare(keys[k], kv, 1);
            if (!seen && nkeys < MAX_HASH_KEYS)
                keys[nkeys++] = kv;
        }
    }
    return nkeys;
}

/* The hash more than half of the n cards' with kv share, or NULL;
 * *having: how many have one. */
static const char *majority(const cJSON *const *rows, int n, const cJSON *kv, int *having)
{
    *having = 0;
    for (int c = 0; c < n; c++)
        *having += hash_of(rows[c], kv) != NULL;
    for (int c = 0; c < n; c++) {
        const char *h = hash_of(rows[c], kv);
        int same = 0;
        for (int d = 0; h && d < n; d++) {
            const char *o = hash_of(rows[d], kv);
            same += o && strcmp(o, h) == 0;
        }
        if (h && 2 * same > *having)
            return h;
    }
    return NULL;
}

void fleet_hash_judge(struct json_build *jb, cJSON *g, const cJSON *const *rows, int n,
                      cJSON **differs)
{
    const cJSON *keys[MAX_HASH_KEYS];
    int nkeys = hash_keys(rows, n, keys);
    cJSON *list;

    for (int c = 0; c < n; c++)
        differs[c] = nkeys > 0 ? jb_new_array(jb) : NULL;
    if (nkeys == 0)
        return;
    list = jb_array(jb, g, "result_hashes");
    for (int k = 0; k < nkeys; k++) {
        int having, off = 0;
        const char *most = majority(rows, n, keys[k], &having);
        cJSON *o = jb_new_object(jb);
        for (int c = 0; c < n; c++) {
            const char *h = hash_of(rows[c], keys[k]);
            if (h == NULL || (most && strcmp(h, most) == 0))
                continue;
            off++;
            jb_push(jb, differs[c], cJSON_Duplicate(keys[k], 0));
        }
        jb_item(jb, o, "key", cJSON_Duplicate(keys[k], 0));
        if (most)
            jb_string(jb, o, "majority", most);
        else
            jb_null(jb, o, "majority");
        jb_number(jb, o, "cards", having);
        jb_number(jb, o, "differ", off);
        jb_push(jb, list, o);
    }
}
