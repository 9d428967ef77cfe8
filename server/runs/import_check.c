/*
 * import_check.c - see import_check.h.
 */
#include "import_check.h"
#include "bench_spec.h"
#include "hash.h"
#include "result_fields.h"
#include "run_request.h"
#include "run_status.h"
#include "timeutil.h"
#include "uuid7.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int str_field(const cJSON *obj, const char *name, int nullable,
                     size_t max_len, struct gb_error *err)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);

    if ((v == NULL || cJSON_IsNull(v)) && nullable)
        return 0;
    if (!cJSON_IsString(v))
        return gb_error_set(err, "invalid_run", name, "%s must be a string%s", name,
                            nullable ? " or null" : "");
    if (strlen(v->valuestring) > max_len)
        return gb_error_set(err, "invalid_run", name, "%s is longer than %zu bytes", name,
                            max_len);
    return 0;
}

/* "2026-11-30T09:05:04.123Z": the shape the API writes, and a date that
 * is one (time_parse_rfc3339); *ms gets it, or -1 for a null one. */
static int time_field(const cJSON *obj, const char *name, int nullable, int64_t *ms,
                      struct gb_error *err)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);

    *ms = -1;
    if ((v == NULL || cJSON_IsNull(v)) && nullable)
        return 0;
    if (!cJSON_IsString(v) || time_parse_rfc3339(v->valuestring, ms) != 0)
        return gb_error_set(err, "invalid_run", name,
                            "%s must be an RFC 3339 UTC time with milliseconds, of a real "
                            "date (2026-11-30T09:05:04.123Z)",
                            name);
    return 0;
}

/* A run's times in their order (created, started, finished, where each is
 * given) and none ahead of the receiving daemon's clock by more than
 * rules->max_skew_ms: a run dated in the future would keep its card
 * "checked" and its canary not due for ever. */
static int times_check(const int64_t at[3], const struct import_rules *rules,
                       struct gb_error *err)
{
    static const char *const names[3] = {"created_at", "started_at", "finished_at"};
    char when[32];
    int64_t last = -1;

    for (int i = 0; i < 3; i++) {
        if (at[i] < 0)
            continue;
        if (at[i] < last)
            return gb_error_set(err, "invalid_run", names[i],
                                "%s is before the run's earlier times (created, started, "
                                "finished are in that order)",
                                names[i]);
        last = at[i];
        if (at[i] > rules->now_ms + rules->max_skew_ms) {
            time_format_rfc3339(rules->now_ms, when, sizeof(when));
            return gb_error_set(err, "clock_skew", names[i],
                                "%s is ahead of this daemon's clock (%s) by more than "
                                "--max-clock-skew (%lld s): the run is refused",
                                names[i], when, (long long)(rules->max_skew_ms / 1000));
        }
    }
    return 0;
}

/* 1 when s is well-formed UTF-8 (no overlong form, no surrogate, nothing
 * past U+10FFFF): cJSON takes any bytes, and a run's text is shown by
 * browsers, terminals and other daemons, which must all read it alike. */
static int utf8_valid(const unsigned char *s)
{
    while (*s) {
        unsigned c = *s++;
        int more;
        unsigned cp, min;

        if (c < 0x80)
            continue;
        if (c >= 0xC2 && c <= 0xDF)
            more = 1, cp = c & 0x1F, min = 0x80;
        else if (c >= 0xE0 && c <= 0xEF)
            more = 2, cp = c & 0x0F, min = 0x800;
        else if (c >= 0xF0 && c <= 0xF4)
            more = 3, cp = c & 0x07, min = 0x10000;
        else
            return 0;
        for (; more > 0; more--, s++) {
            if ((*s & 0xC0) != 0x80)
                return 0;
            cp = (cp << 6) | (*s & 0x3F);
        }
        if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
            return 0;
    }
    return 1;
}

/* What no stored run may hold, anywhere in it. */
enum flaw {
    FLAW_NONE,
    FLAW_NONFINITE, /* 1e999 parses as infinity: stored as null, read back as none */
    FLAW_UTF8,      /* a string or a name that is not UTF-8 */
    FLAW_TWICE,     /* an object naming a member twice (in any letter case: cJSON
                       reads the first, a browser the last) */
};

#define NAME_SLOTS 128 /* an object's names hashed on the stack; more: a table allocated */

struct name_slot {
    uint32_t hash;
    const char *name; /* NULL: empty */
};

/* 1 when two members of o have names strcasecmp finds equal, pair by
 * pair: only where memory for a table ran out. */
static int names_twice_pairwise(const cJSON *o)
{
    for (const cJSON *a = o->child; a; a = a->next)
        for (const cJSON *b = a->next; b; b = b->next)
            if (a->string && b->string && strcasecmp(a->string, b->string) == 0)
                return 1;
    return 0;
}

/* 1 when object o names a member twice in any letter case.  Each name's
 * case-folded hash (every byte counts: a peer chooses the names) goes into
 * an open-addressed table, on the stack up to NAME_SLOTS / 2 names, else
 * allocated, and only names of one hash are compared (strcasecmp): a row
 * of forty members costs forty hashes rather than 780 comparisons, and a
 * peer's object of 50,000 members 50,000 rather than over a billion. */
static int names_twice(const cJSON *o)
{
    struct name_slot stack[NAME_SLOTS], *slot = stack;
    const cJSON *a;
    size_t n = 0, size = 8;
    int twice = 0;

    for (a = o->child; a; a = a->next)
        n++;
    while (size < 2 * n)
        size *= 2;
    if (size > NAME_SLOTS && (slot = calloc(size, sizeof(*slot))) == NULL)
        return names_twice_pairwise(o);
    if (slot == stack)
        memset(slot, 0, size * sizeof(slot[0]));
    for (a = o->child; a && !twice; a = a->next) {
        if (a->string == NULL)
            continue;
        uint32_t h = hash_fnv1a_casefold(a->string);
        size_t at = h & (size - 1);
        for (; slot[at].name; at = (at + 1) & (size - 1))
            if (slot[at].hash == h && strcasecmp(slot[at].name, a->string) == 0) {
                twice = 1;
                break;
            }
        slot[at].hash = h;
        slot[at].name = a->string;
    }
    if (slot != stack)
        free(slot);
    return twice;
}

/* v's own flaw, its members not looked into.  ascii: the text v was
 * parsed from holds no byte of 0x80 or more, so every string in it is
 * UTF-8 (cJSON writes its \u escapes as UTF-8 and refuses a lone
 * surrogate), and that walk is skipped. */
static enum flaw flaw_of(const cJSON *v, int ascii)
{
    /* the type read here rather than through cJSON_Is* (a call into the
     * library each): this runs on every node of every pulled run */
    int type = v->type & 0xFF;

    if (!ascii && v->string && !utf8_valid((const unsigned char *)v->string))
        return FLAW_UTF8; /* its name, whatever its value */
    if (type == cJSON_Number)
        return isfinite(v->valuedouble) ? FLAW_NONE : FLAW_NONFINITE;
    if (!ascii && type == cJSON_String && !utf8_valid((const unsigned char *)v->valuestring))
        return FLAW_UTF8;
    if (type == cJSON_Object)
        return names_twice(v) ? FLAW_TWICE : FLAW_NONE;
    return FLAW_NONE;
}

/* The first flaw in v, or FLAW_NONE: the walk every run pays, which
 * builds no path (flaw_at names it only once one is known there). */
static enum flaw first_flaw(const cJSON *v, int ascii)
{
    const cJSON *c;
    enum flaw f = flaw_of(v, ascii);

    if (f != FLAW_NONE)
        return f;
    cJSON_ArrayForEach(c, v)
        if ((f = first_flaw(c, ascii)) != FLAW_NONE)
            return f;
    return FLAW_NONE;
}

/* The path (into path, cap bytes, at its offset len) of the first flaw in
 * v.  1 when found, else 0. */
static int flaw_at(const cJSON *v, char *path, size_t cap, size_t len)
{
    const cJSON *c;
    int i = 0;

    if (flaw_of(v, 0) != FLAW_NONE)
        return 1;
    cJSON_ArrayForEach(c, v) {
        /* a name that is not UTF-8 is named "?": the path is shown */
        const char *name =
            c->string && utf8_valid((const unsigned char *)c->string) ? c->string : "?";
        int w = cJSON_IsArray(v)
                    ? snprintf(path + len, cap - len, "[%d]", i)
                    : snprintf(path + len, cap - len, "%s%.40s", len ? "." : "", name);
        if (w > 0 && len + (size_t)w < cap && flaw_at(c, path, cap, len + (size_t)w))
            return 1;
        path[len] = '\0';
        i++;
    }
    return 0;
}

/* The benchmark is one this daemon offers and the params are its own,
 * within bounds (the resolver POST /runs uses).  A parameter left out is
 * not refused: runs stored before defaults were filled in lack them. */
static int check_measurement(const cJSON *run, int test_benchmarks, int ascii,
                             struct gb_error *err)
{
    const char *name = cJSON_GetStringValue(cJSON_GetObjectItem(run, "benchmark"));
    const struct gb_benchmark *b = gb_benchmark_find(name);
    const cJSON *results = cJSON_GetObjectItem(run, "results");
    const cJSON *rows = cJSON_GetObjectItem(results, "rows");
    cJSON *resolved;
    char path[96] = "";

    if (b == NULL || (b->test_only && !test_benchmarks))
        return gb_error_set(err, "unknown_benchmark", "benchmark",
                            "benchmark \"%.64s\" is not one this daemon has%s", name,
                            b ? " (a test-only one: gpubenchd --test-benchmarks)"
                              : " (GET /benchmarks lists them)");
    resolved = gb_params_resolve(b, cJSON_GetObjectItem(run, "params"), err);
    if (resolved == NULL)
        return -1;
    cJSON_Delete(resolved);
    if (rows != NULL && !cJSON_IsNull(rows) && gb_result_rows_check(b->name, rows, err) != 0)
        return -1;
    switch (first_flaw(run, ascii)) {
    case FLAW_NONE:
        return 0;
    case FLAW_NONFINITE:
        flaw_at(run, path, sizeof(path), 0);
        return gb_error_set(err, "out_of_bounds", path, "%s is not a finite number", path);
    case FLAW_UTF8:
        flaw_at(run, path, sizeof(path), 0);
        return gb_error_set(err, "invalid_run", path, "%s is not UTF-8 text",
                            path[0] ? path : "a name");
    case FLAW_TWICE:
        flaw_at(run, path, sizeof(path), 0);
        return gb_error_set(err, "invalid_run", path,
                            "%s names a member twice (a reader may take either)",
                            path[0] ? path : "the run");
    }
    return 0;
}

/* The columns a node may serve a run without, marked damaged
 * (store_row.c), and still be copied: what it measured or how it was
 * judged.  Its params name what was measured: without them it is not
 * copied. */
static const char *const copyable_damage[] = {"results", "meta", "validity", "checks",
                                              "verdicts", "summary", NULL};

/* For a run marked "damaged": 1 when it may be copied as damaged (its
 * "damaged_columns" a short list of copyable names), 0 for a run not
 * marked, -1 with err (damaged_run: a puller skips it) otherwise. */
static int damaged_columns_check(const cJSON *run, struct gb_error *err)
{
    const cJSON *id = cJSON_GetObjectItem(run, "id");
    const cJSON *list = cJSON_GetObjectItem(run, "damaged_columns"), *c;
    const char *why = NULL;

    if (cJSON_GetObjectItem(run, "damaged") == NULL)
        return 0;
    if (!cJSON_IsTrue(cJSON_GetObjectItem(run, "damaged")))
        return gb_error_set(err, "invalid_run", "damaged", "damaged must be true or absent");
    if (!cJSON_IsArray(list) || cJSON_GetArraySize(list) < 1 || cJSON_GetArraySize(list) > 8)
        why = "its damaged_columns are not a list of one to eight names";
    cJSON_ArrayForEach(c, list) {
        int known = 0;
        for (int i = 0; cJSON_IsString(c) && copyable_damage[i]; i++)
            known |= strcmp(c->valuestring, copyable_damage[i]) == 0;
        if (!known && why == NULL)
            why = "what it lacks names the measurement (or is not a column a run has)";
    }
    if (why == NULL)
        return 1;
    return gb_error_set(err, "damaged_run", "damaged_columns",
                        "run %.40s is damaged where it was stored: %s; it cannot be copied",
                        cJSON_GetStringValue(id) ? id->valuestring : "?", why);
}

/* 1 when none of the len bytes of text is 0x80 or more. */
static int text_ascii(const char *text, size_t len)
{
    uint64_t word, high = 0;
    size_t i = 0;

    for (; i + 8 <= len; i += 8) {
        memcpy(&word, text + i, 8);
        high |= word;
    }
    for (; i < len; i++)
        high |= (unsigned char)text[i];
    return (high & 0x8080808080808080ULL) == 0;
}

/* import_check_run, with ascii as flaw_of takes it. */
static int check_run(const cJSON *run, const struct import_rules *rules, int ascii,
                     struct gb_error *err)
{
    const cJSON *id = cJSON_GetObjectItem(run, "id");
    const cJSON *bench = cJSON_GetObjectItem(run, "benchmark");
    const cJSON *status = cJSON_GetObjectItem(run, "status");
    const cJSON *device = cJSON_GetObjectItem(run, "device");
    const cJSON *index = cJSON_GetObjectItem(device, "index");
    const cJSON *results = cJSON_GetObjectItem(run, "results");
    const cJSON *meta = cJSON_GetObjectItem(run, "meta");
    const cJSON *error = cJSON_GetObjectItem(run, "error");
    const cJSON *batch = cJSON_GetObjectItem(run, "batch");
    int64_t at[3];
    int lost;

    if (!cJSON_IsObject(run))
        return gb_error_set(err, "invalid_run", "", "a run must be a JSON object");
    if (gb_json_duplicate_key(run) || gb_json_duplicate_key(device))
        return gb_error_set(err, "invalid_run", "", "a key is given twice");
    /* What its node's database held of it is damaged (store_row.c): it
     * is copied as damaged, with what is left, unless what is lost is
     * what names the measurement (its params). */
    if ((lost = damaged_columns_check(run, err)) < 0)
        return -1;
    if (!cJSON_IsString(id) || !uuid_is_valid(id->valuestring))
        return gb_error_set(err, "invalid_run", "id", "id must be a run id (a UUID)");
    if (!cJSON_IsString(bench))
        return gb_error_set(err, "invalid_run", "benchmark", "benchmark must be a string");
    if (!cJSON_IsString(status) || !run_status_is_final(status->valuestring))
        return gb_error_set(err, "invalid_run", "status",
                            "status must be done, failed or cancelled: only "
                            "finished runs can be imported");
    if (!cJSON_IsObject(cJSON_GetObjectItem(run, "params")))
        return gb_error_set(err, "invalid_run", "params", "params must be an object");
    if (!cJSON_IsObject(device) ||
        !(index == NULL || cJSON_IsNull(index) || cJSON_IsNumber(index)))
        return gb_error_set(err, "invalid_run", "device",
                            "device must be an object with index, uuid and name");
    if (str_field(run, "host", 0, 255, err) || str_field(run, "label", 1, 200, err) ||
        str_field(run, "origin", 1, 512, err) || str_field(device, "uuid", 1, 128, err) ||
        str_field(device, "name", 1, 256, err) || time_field(run, "created_at", 0, &at[0], err) ||
        time_field(run, "started_at", 1, &at[1], err) ||
        time_field(run, "finished_at", 1, &at[2], err) || times_check(at, rules, err))
        return -1;
    /* "" would read as "measured here" wherever origin is tested for
     * truth (the page); a run's origin is not believed anyway (README "A
     * fleet"), but one that names none must say null. */
    if (cJSON_IsString(cJSON_GetObjectItem(run, "origin")) &&
        cJSON_GetObjectItem(run, "origin")->valuestring[0] == '\0')
        return gb_error_set(err, "invalid_run", "origin",
                            "origin must be null or name where the run came from, not \"\"");
    if (batch && !cJSON_IsNull(batch) &&
        !(cJSON_IsString(batch) && uuid_is_valid(batch->valuestring)))
        return gb_error_set(err, "invalid_run", "batch", "batch must be a UUID or null");
    if (run_status_parse(status->valuestring) == RUN_DONE && !lost &&
        (!cJSON_IsObject(results) ||
         !cJSON_IsArray(cJSON_GetObjectItem(results, "rows")) || !cJSON_IsObject(meta)))
        return gb_error_set(err, "invalid_run", "results",
                            "a done run must have results with rows, and meta");
    if (results && !cJSON_IsNull(results) && !cJSON_IsObject(results))
        return gb_error_set(err, "invalid_run", "results", "results must be an object or null");
    if (error && !cJSON_IsNull(error) &&
        (str_field(error, "code", 0, 64, err) || str_field(error, "message", 1, 2048, err)))
        return -1;
    return check_measurement(run, rules->test_benchmarks, ascii, err);
}

int import_check_run(const cJSON *run, const struct import_rules *rules, struct gb_error *err)
{
    return check_run(run, rules, 0, err);
}

int import_check_line(const cJSON *run, const char *text, size_t len,
                      const struct import_rules *rules, struct gb_error *err)
{
    return check_run(run, rules, text_ascii(text, len), err);
}

/* One line (len bytes) of an import as a checked run, or NULL with err. */
static cJSON *import_line(const char *p, size_t len, int line, const struct import_rules *rules,
                          struct gb_error *err)
{
    struct gb_error why;
    size_t at;
    int trailing;
    cJSON *run;

    if (len > IMPORT_LINE_MAX) {
        gb_error_set(err, "out_of_bounds", "",
                     "line %d is %zu bytes; a run is at most %d MiB; nothing was imported",
                     line, len, IMPORT_LINE_MAX / (1024 * 1024));
        return NULL;
    }
    run = json_parse_whole(p, len, &at, &trailing);
    if (run == NULL && trailing && p[at] == '{') {
        gb_error_set(err, "malformed_json", "",
                     "line %d holds more than one run (the next begins at byte %zu): send "
                     "NDJSON, one run a line; curl -d strips newlines, so send the file with "
                     "curl -H 'Content-Type: application/x-ndjson' --data-binary @runs.ndjson; "
                     "nothing was imported",
                     line, at);
        return NULL;
    }
    if (run == NULL) {
        if (trailing)
            gb_error_set(err, "malformed_json", "",
                         "line %d has text after its JSON value (at byte %zu of the line); "
                         "nothing was imported",
                         line, at);
        else
            gb_error_set(err, "malformed_json", "",
                         "line %d is not valid JSON (error at byte %zu of the line); nothing "
                         "was imported",
                         line, at);
        return NULL;
    }
    if (import_check_line(run, p, len, rules, &why) != 0) {
        gb_error_set(err, why.code, why.field, "line %d: %.200s; nothing was imported", line,
                     why.message);
        cJSON_Delete(run);
        return NULL;
    }
    return run;
}

cJSON *import_parse_ndjson(const char *body, size_t len, const struct import_rules *rules,
                           struct gb_error *err)
{
    cJSON *runs = cJSON_CreateArray();
    const char *p = body, *end = body + len;
    int line = 0;

    if (runs == NULL) {
        gb_error_set(err, "internal", "", "out of memory");
        return NULL;
    }
    while (p < end) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        const char *stop = nl ? nl : end, *q = p;
        cJSON *run;

        line++;
        while (q < stop && (*q == ' ' || *q == '\t' || *q == '\r'))
            q++;
        if (q < stop) {
            run = import_line(p, (size_t)(stop - p), line, rules, err);
            if (run == NULL || !cJSON_AddItemToArray(runs, run)) {
                if (run != NULL)
                    gb_error_set(err, "internal", "", "out of memory");
                cJSON_Delete(run);
                cJSON_Delete(runs);
                return NULL;
            }
        }
        p = stop + 1;
    }
    return runs;
}
