/*
 * verdict_rows.c - see verdict_rows.h.
 *
 * The text is a JSON array with one object a row: its key fields as they
 * are (common/result_fields.c, GB_USE_KEY), "sm_clock_mhz_measured" and
 * "median_ms" printed with %.17g (not cJSON's printing, whose 15 digits
 * are kept when they read back only nearly equal), and "n", how many of
 * the blob's doubles are its samples, the rows' samples following one
 * another in the blob in row order.  The blob is little-endian whatever
 * the host, so that a database moves between machines.
 */
#include "verdict_rows.h"

#include "result_fields.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const measured[] = {"sm_clock_mhz_measured", "median_ms"};

static void put_double(unsigned char *p, double v)
{
    uint64_t bits;

    memcpy(&bits, &v, sizeof(bits));
    for (int i = 0; i < 8; i++)
        p[i] = (unsigned char)(bits >> (8 * i));
}

static double get_double(const unsigned char *p)
{
    uint64_t bits = 0;
    double v;

    for (int i = 0; i < 8; i++)
        bits |= (uint64_t)p[i] << (8 * i);
    memcpy(&v, &bits, sizeof(v));
    return v;
}

/* The samples of row, or NULL when it has none (not an array, or empty:
 * verdicts.c then reads its median). */
static const cJSON *samples_of(const cJSON *row)
{
    const cJSON *s = cJSON_GetObjectItem(row, "samples");

    return cJSON_IsArray(s) && s->child ? s : NULL;
}

/* The packed object of row (NEW); 1 when row cannot be packed exactly. */
static int pack_row(const cJSON *row, cJSON **out)
{
    cJSON *o = cJSON_CreateObject();
    const cJSON *s;
    char text[40];
    int n = 0;

    *out = NULL;
    if (o == NULL)
        return -1;
    for (size_t i = 0; i < gb_result_field_count(); i++) {
        const struct gb_result_field *f = gb_result_field_at(i);
        const cJSON *v = cJSON_GetObjectItem(row, f->name);
        if ((f->uses & GB_USE_KEY) && v)
            cJSON_AddItemToObject(o, f->name, cJSON_Duplicate(v, 1));
    }
    for (size_t i = 0; i < sizeof(measured) / sizeof(measured[0]); i++) {
        const cJSON *v = cJSON_GetObjectItem(row, measured[i]);
        if (!cJSON_IsNumber(v))
            continue;
        if (!isfinite(v->valuedouble))
            goto inexact;
        snprintf(text, sizeof(text), "%.17g", v->valuedouble);
        cJSON_AddRawToObject(o, measured[i], text);
    }
    cJSON_ArrayForEach(s, samples_of(row)) {
        if (!cJSON_IsNumber(s) || !isfinite(s->valuedouble))
            goto inexact;
        n++;
    }
    cJSON_AddNumberToObject(o, "n", n);
    *out = o;
    return 0;

inexact:
    cJSON_Delete(o);
    return 1;
}

int verdict_rows_pack(const cJSON *rows, char **text, unsigned char **blob, size_t *blob_len)
{
    cJSON *packed = cJSON_CreateArray(), *o;
    const cJSON *row, *s;
    size_t count = 0, k = 0;
    int rc = -1;

    *text = NULL;
    *blob = NULL;
    *blob_len = 0;
    if (packed == NULL || !cJSON_IsArray(rows))
        goto done;
    cJSON_ArrayForEach(row, rows) {
        int got = pack_row(row, &o);
        if (got != 0) {
            rc = got;
            goto done;
        }
        cJSON_AddItemToArray(packed, o);
        count += (size_t)cJSON_GetNumberValue(cJSON_GetObjectItem(o, "n"));
    }
    /* one byte at least: a blob of none is still a blob, not NULL */
    if ((*blob = malloc(count ? 8 * count : 1)) == NULL ||
        (*text = cJSON_PrintUnformatted(packed)) == NULL)
        goto done;
    cJSON_ArrayForEach(row, rows)
        cJSON_ArrayForEach(s, samples_of(row))
            put_double(*blob + 8 * k++, s->valuedouble);
    *blob_len = 8 * count;
    rc = 0;

done:
    if (rc != 0) {
        free(*text);
        free(*blob);
        *text = NULL;
        *blob = NULL;
    }
    cJSON_Delete(packed);
    return rc;
}

cJSON *verdict_rows_unpack(const char *text, const unsigned char *blob, size_t blob_len)
{
    cJSON *rows = cJSON_Parse(text), *row;
    size_t k = 0;

    if (!cJSON_IsArray(rows))
        goto bad;
    cJSON_ArrayForEach(row, rows) {
        cJSON *nitem = cJSON_DetachItemFromObject(row, "n"), *samples;
        double n = cJSON_GetNumberValue(nitem);
        cJSON_Delete(nitem);
        if (!(n >= 0) || n > (double)(blob_len / 8 - k))
            goto bad;
        if (n == 0)
            continue;
        if ((samples = cJSON_AddArrayToObject(row, "samples")) == NULL)
            goto bad;
        for (int i = 0; i < (int)n; i++)
            if (!cJSON_AddItemToArray(samples, cJSON_CreateNumber(get_double(blob + 8 * k++))))
                goto bad;
    }
    if (k * 8 != blob_len)
        goto bad;
    return rows;

bad:
    cJSON_Delete(rows);
    return NULL;
}
