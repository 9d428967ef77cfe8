/*
 * job_line.c - parsing a job line; see job_line.h.
 */
#include "job_line.h"

#include <stdio.h>
#include <string.h>

int gb_job_line_parse(const char *line, size_t len, struct gb_job_request *req,
                      struct gb_job_error *err)
{
    const cJSON *id, *benchmark, *params, *timeout;

    memset(req, 0, sizeof(*req));
    req->root = cJSON_ParseWithLength(line, len);
    if (req->root == NULL)
        return gb_job_fail(err, "invalid_job", "the job line is not JSON");
    if (!cJSON_IsObject(req->root))
        return gb_job_fail(err, "invalid_job", "the job line must be a JSON object");
    id = cJSON_GetObjectItemCaseSensitive(req->root, "id");
    if (cJSON_IsString(id) || cJSON_IsNumber(id))
        req->id = id;
    else
        return gb_job_fail(err, "invalid_job", "the job has no \"id\" (a string or a number)");
    benchmark = cJSON_GetObjectItemCaseSensitive(req->root, "benchmark");
    if (!cJSON_IsString(benchmark))
        return gb_job_fail(err, "invalid_job", "the job has no \"benchmark\" string");
    req->benchmark = benchmark->valuestring;
    params = cJSON_GetObjectItemCaseSensitive(req->root, "params");
    if (params != NULL && !cJSON_IsNull(params) && !cJSON_IsObject(params)) {
        gb_job_fail(err, "invalid_params", "params must be an object");
        snprintf(err->field, sizeof(err->field), "params");
        return -1;
    }
    req->params = cJSON_IsObject(params) ? params : NULL;
    timeout = cJSON_GetObjectItemCaseSensitive(req->root, "timeout_s");
    if (cJSON_IsNumber(timeout) && timeout->valuedouble > 0 && timeout->valuedouble <= 1e6)
        req->timeout_s = timeout->valuedouble;
    return 0;
}

void gb_job_request_free(struct gb_job_request *req)
{
    cJSON_Delete(req->root);
    memset(req, 0, sizeof(*req));
}
