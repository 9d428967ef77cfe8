/*
 * api_devices.c - GET /devices: the GPUs this daemon runs on, as the pool
 * (gpu_pool.c) describes them.
 */
#include "handlers.h"
#include "gpu_pool.h"

static const char *const no_query[] = {NULL};

void api_devices_get(struct http_request *req, struct http_reply *rep)
{
    if (query_check(req, rep, no_query) != 0)
        return;
    reply_json(rep, 200, gpu_pool_describe(req->app->gpus));
}
