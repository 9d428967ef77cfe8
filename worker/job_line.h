/*
 * job_line.h - one job line of the worker protocol,
 * {"id": RUN_ID, "benchmark": NAME, "params": {...}}, parsed with an
 * explicit length (cJSON_ParseWithLength) and checked for shape.  The id
 * may be a string or a number and is echoed back as given.  An optional
 * "timeout_s" (the run's time limit, so a precision run can stop adding
 * samples in time) is read when it is a positive number.  Other fields
 * are ignored, so a newer server can add some.
 * Unit-tested in tests/unit/test_kernels_protocol.c.
 */
#ifndef GPUBENCH_WORKER_JOB_LINE_H
#define GPUBENCH_WORKER_JOB_LINE_H

#include <stddef.h>
#include <cjson/cJSON.h>

#include "job_error.h"

#ifdef __cplusplus
extern "C" {
#endif

struct gb_job_request {
    cJSON *root;     /* the parsed line; owns the three below */
    const cJSON *id; /* NULL when the line had none usable */
    const char *benchmark;
    const cJSON *params; /* NULL when absent or null */
    double timeout_s;    /* the run's time limit when the daemon sends
                            one ("timeout_s", seconds > 0); else 0 */
};

/* Parses line[0..len-1] into req.  Returns 0, or -1 with err (code
 * "invalid_job"); req->root and req->id are set whenever the line was
 * JSON, so an error can still carry the id.  Free with
 * gb_job_request_free in every case. */
int gb_job_line_parse(const char *line, size_t len, struct gb_job_request *req,
                      struct gb_job_error *err);
void gb_job_request_free(struct gb_job_request *req);

#ifdef __cplusplus
}
#endif

#endif
