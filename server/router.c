/*
 * router.c - the route table and its dispatcher; see router.h.  Adding an
 * endpoint is adding a line here.
 */
#include "router.h"
#include "handlers.h"

#include <stdio.h>
#include <string.h>

struct route {
    const char *method;
    const char *pattern;
    http_handler handler;
    enum route_access access;
};

static const struct route routes[] = {
    {.method = "POST",   .pattern = "/runs",        .handler = runs_post, .access = ROUTE_WRITE},
    {.method = "GET",    .pattern = "/runs",        .handler = runs_list},
    {.method = "GET",    .pattern = "/runs.ndjson", .handler = runs_ndjson},
    {.method = "GET",    .pattern = "/runs.csv",    .handler = runs_csv},
    {.method = "POST",   .pattern = "/runs/import", .handler = runs_import, .access = ROUTE_WRITE},
    {.method = "GET",    .pattern = "/runs/*",      .handler = runs_get},
    {.method = "DELETE", .pattern = "/runs/*",      .handler = runs_delete, .access = ROUTE_WRITE},
    {.method = "GET",    .pattern = "/benchmarks",  .handler = benchmarks_get},
    {.method = "POST",   .pattern = "/predict",     .handler = predict_post},
    {.method = "GET",    .pattern = "/compare",     .handler = compare_get},
    {.method = "POST",   .pattern = "/baselines",   .handler = baselines_post, .access = ROUTE_WRITE},
    {.method = "GET",    .pattern = "/baselines",   .handler = baselines_list},
    {.method = "GET",    .pattern = "/baselines/*", .handler = baselines_get},
    {.method = "DELETE", .pattern = "/baselines/*", .handler = baselines_delete, .access = ROUTE_WRITE},
    {.method = "GET",    .pattern = "/alerts",      .handler = alerts_get},
    {.method = "POST",   .pattern = "/alerts/*/ack", .handler = alerts_ack, .access = ROUTE_WRITE},
    {.method = "GET",    .pattern = "/fleet",       .handler = fleet_get},
    {.method = "GET",    .pattern = "/devices",     .handler = devices_get},
    {.method = "GET",    .pattern = "/peers",       .handler = peers_get},
    {.method = "GET",    .pattern = "/metrics",     .handler = metrics_get},
    {.method = "GET",    .pattern = "/openapi.json", .handler = openapi_get, .access = ROUTE_PUBLIC},
    {.method = "GET",    .pattern = "/healthz",     .handler = healthz_get, .access = ROUTE_PUBLIC},
    {.method = "GET",    .pattern = "/",            .handler = static_index, .access = ROUTE_PUBLIC},
    {.method = "GET",    .pattern = "/static/*",    .handler = static_file, .access = ROUTE_PUBLIC},
    {.method = "GET",    .pattern = "/vendor/chart.js", .handler = static_chartjs, .access = ROUTE_PUBLIC},
};

/* Matches path against pattern; "*" takes one non-empty segment, and what
 * follows it in the pattern ("/ack") must end the path. */
static int match(const char *pattern, const char *path, char *arg, size_t cap)
{
    const char *star = strchr(pattern, '*');
    size_t prefix, seg;

    if (star == NULL)
        return strcmp(pattern, path) == 0;
    prefix = (size_t)(star - pattern);
    if (strncmp(pattern, path, prefix) != 0)
        return 0;
    path += prefix;
    seg = strcspn(path, "/");
    if (seg == 0 || strcmp(path + seg, star + 1) != 0 || seg >= cap)
        return 0;
    memcpy(arg, path, seg);
    arg[seg] = '\0';
    return 1;
}

http_handler router_find(const char *method, const char *path, char *arg,
                         size_t arg_cap, char *allow, size_t allow_cap,
                         int *status, enum route_access *access)
{
    size_t used = 0;
    char scratch[128];

    allow[0] = '\0';
    for (size_t i = 0; i < sizeof(routes) / sizeof(routes[0]); i++) {
        const struct route *r = &routes[i];
        if (!match(r->pattern, path, scratch, sizeof(scratch) < arg_cap ? sizeof(scratch) : arg_cap))
            continue;
        if (strcmp(r->method, method) == 0) {
            snprintf(arg, arg_cap, "%s", strchr(r->pattern, '*') ? scratch : "");
            *access = r->access;
            return r->handler;
        }
        if (used < allow_cap)
            used += (size_t)snprintf(allow + used, allow_cap - used, "%s%s",
                                     used ? ", " : "", r->method);
    }
    if (used && strstr(allow, "GET") && used < allow_cap)
        snprintf(allow + used, allow_cap - used, ", HEAD");
    *status = used ? 405 : 404;
    return NULL;
}
