/*
 * run_filter.c - see run_filter.h.
 */
#include "run_filter.h"
#include "run_status.h"

#include <stdlib.h>
#include <string.h>

/* The largest GPU index a filter names, as POST /runs bounds "device". */
#define DEVICE_INDEX_MAX 1000000

static int all_digits(const char *s)
{
    if (*s == '\0')
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

int run_filter_from_query(struct http_request *req, struct http_reply *rep,
                          struct run_filter *f)
{
    static const char *const names[] = {RUN_FILTER_ARGS, NULL};
    const char *device = query_get(req, "device");
    int ok = 0, valid;

    for (const char *const *n = names; *n; n++) {
        const char *v = query_get(req, *n);
        if (v && strlen(v) > RUN_FILTER_VALUE_MAX) {
            reply_error(rep, 400, "out_of_bounds", *n, "%s is %zu bytes; at most %d",
                        *n, strlen(v), RUN_FILTER_VALUE_MAX);
            return -1;
        }
    }
    f->benchmark = query_get(req, "benchmark");
    f->host = query_get(req, "host");
    f->status = query_get(req, "status");
    f->label = query_get(req, "label");
    f->batch = query_get(req, "batch");
    f->device = device;
    f->by_device_index = 0;
    if (query_bool(req, rep, "valid", &valid) != 0)
        return -1;
    if (valid < 0)
        f->valid = RUN_VALID_ANY;
    else
        f->valid = valid ? RUN_VALID_TRUE : RUN_VALID_FALSE;
    if (device && all_digits(device)) {
        long v = strlen(device) <= 7 ? strtol(device, NULL, 10) : DEVICE_INDEX_MAX + 1L;
        if (v > DEVICE_INDEX_MAX) {
            reply_error(rep, 400, "out_of_bounds", "device",
                        "device=%.20s: a GPU index is at most %d", device, DEVICE_INDEX_MAX);
            return -1;
        }
        f->device = NULL;
        f->by_device_index = 1;
        f->device_index = (int)v;
    }
    if (f->status && f->status[0]) {
        for (const char *const *s = run_status_names; *s && !ok; s++)
            ok = strcmp(*s, f->status) == 0;
        if (!ok) {
            reply_error(rep, 400, "out_of_bounds", "status",
                        "status=%.20s: expected queued, running, done, failed "
                        "or cancelled",
                        f->status);
            return -1;
        }
    }
    return 0;
}
