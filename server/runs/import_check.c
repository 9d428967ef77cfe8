/*
 * import_check.c - see import_check.h.
 */
#include "import_check.h"
#include "bench_spec.h"
#include "run_request.h"
#include "run_status.h"
#include "uuid7.h"

#include <stdio.h>
#include <string.h>

#define NAME_MAX_LEN 64

static int str_field(const cJSON *obj, const char *name, int nullable,
                     size_t max_len, char *err, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);

    if ((v == NULL || cJSON_IsNull(v)) && nullable)
        return 0;
    if (!cJSON_IsString(v)) {
        snprintf(err, cap, "%s must be a string%s", name, nullable ? " or null" : "");
        return -1;
    }
    if (strlen(v->valuestring) > max_len) {
        snprintf(err, cap, "%s is longer than %zu bytes", name, max_len);
        return -1;
    }
    return 0;
}

/* "2026-11-30T09:05:04.123Z": the shape the API writes. */
static int time_field(const cJSON *obj, const char *name, int nullable,
                      char *err, size_t cap)
{
    const cJSON *v = cJSON_GetObjectItem(obj, name);
    const char *t;

    if ((v == NULL || cJSON_IsNull(v)) && nullable)
        return 0;
    t = cJSON_IsString(v) ? v->valuestring : "";
    if (strlen(t) != 24 || t[4] != '-' || t[7] != '-' || t[10] != 'T' ||
        t[13] != ':' || t[16] != ':' || t[19] != '.' || t[23] != 'Z') {
        snprintf(err, cap, "%s must be an RFC 3339 UTC time with milliseconds", name);
        return -1;
    }
    return 0;
}

static int safe_name(const char *s)
{
    size_t n = strlen(s);

    if (n == 0 || n > NAME_MAX_LEN)
        return 0;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9') || *s == '_'))
            return 0;
    return 1;
}

int import_check_run(const cJSON *run, char *err, size_t cap)
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

    if (!cJSON_IsObject(run)) {
        snprintf(err, cap, "a run must be a JSON object");
        return -1;
    }
    if (gb_json_duplicate_key(run) || gb_json_duplicate_key(device) ||
        gb_json_duplicate_key(cJSON_GetObjectItem(run, "params"))) {
        snprintf(err, cap, "a key is given twice");
        return -1;
    }
    if (!cJSON_IsString(id) || !uuid_is_valid(id->valuestring)) {
        snprintf(err, cap, "id must be a run id (a UUID)");
        return -1;
    }
    if (!cJSON_IsString(bench) || !safe_name(bench->valuestring)) {
        snprintf(err, cap, "benchmark must be a name of a-z, 0-9 and _");
        return -1;
    }
    if (!cJSON_IsString(status) || !run_status_is_final(status->valuestring)) {
        snprintf(err, cap, "status must be done, failed or cancelled: only "
                           "finished runs can be imported");
        return -1;
    }
    if (!cJSON_IsObject(cJSON_GetObjectItem(run, "params"))) {
        snprintf(err, cap, "params must be an object");
        return -1;
    }
    if (!cJSON_IsObject(device) ||
        !(index == NULL || cJSON_IsNull(index) || cJSON_IsNumber(index))) {
        snprintf(err, cap, "device must be an object with index, uuid and name");
        return -1;
    }
    if (str_field(run, "host", 0, 255, err, cap) ||
        str_field(run, "label", 1, 200, err, cap) ||
        str_field(run, "origin", 1, 512, err, cap) ||
        str_field(device, "uuid", 1, 128, err, cap) ||
        str_field(device, "name", 1, 256, err, cap) ||
        time_field(run, "created_at", 0, err, cap) ||
        time_field(run, "started_at", 1, err, cap) ||
        time_field(run, "finished_at", 1, err, cap))
        return -1;
    if (batch && !cJSON_IsNull(batch) &&
        !(cJSON_IsString(batch) && uuid_is_valid(batch->valuestring))) {
        snprintf(err, cap, "batch must be a UUID or null");
        return -1;
    }
    if (run_status_parse(status->valuestring) == RUN_DONE &&
        (!cJSON_IsObject(results) ||
         !cJSON_IsArray(cJSON_GetObjectItem(results, "rows")) || !cJSON_IsObject(meta))) {
        snprintf(err, cap, "a done run must have results with rows, and meta");
        return -1;
    }
    if (results && !cJSON_IsNull(results) && !cJSON_IsObject(results)) {
        snprintf(err, cap, "results must be an object or null");
        return -1;
    }
    if (error && !cJSON_IsNull(error) &&
        (str_field(error, "code", 0, 64, err, cap) ||
         str_field(error, "message", 1, 2048, err, cap)))
        return -1;
    return 0;
}

/* One line (len bytes) of an import as a checked run, or NULL with err. */
static cJSON *import_line(const char *p, size_t len, int line, struct gb_error *err)
{
    char why[256];
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
                     "curl --data-binary @runs.ndjson; nothing was imported",
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
    if (import_check_run(run, why, sizeof(why)) != 0) {
        gb_error_set(err, "invalid_run", "", "line %d: %.180s; nothing was imported",
                     line, why);
        cJSON_Delete(run);
        return NULL;
    }
    return run;
}

cJSON *import_parse_ndjson(const char *body, size_t len, struct gb_error *err)
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
            run = import_line(p, (size_t)(stop - p), line, err);
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
