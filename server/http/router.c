/*
 * router.c - the route table and its dispatcher; see router.h.  Adding an
 * endpoint is adding a line here, with its limits: a newcomer finds the
 * route for a path, its access, body (cap and type), rate limit, weight
 * (where its handler runs: heavy_pool.h) and handler on one line.
 */
#include "router.h"
#include "handlers.h"

#include <stdio.h>
#include <string.h>

/* The table's body column: how large a body may be and the media types
 * it is read as (a write naming another type is answered 415). */
static const struct route_body JSON = {HTTP_BODY_CAP, "application/json"};
/* NDJSON of many runs; a run alone is a line of it, so JSON is taken too. */
static const struct route_body NDJSON = {64 * 1024 * 1024,
                                         "application/x-ndjson, application/json"};

/* The table's rate column. */
#define LIMITED 1 /* counted by --rate-limit */
#define FREE 0    /* not counted */

/* The table's weight column (enum route_weight). */
#define LIGHT ROUTE_LIGHT
#define HEAVY ROUTE_HEAVY

// clang-format off
static const struct route routes[] = {
    /* method  pattern            handler               access        body     rate     weight */
    {"POST",   "/runs",           api_runs_post,        ROUTE_WRITE,  &JSON,   LIMITED, LIGHT},
    {"GET",    "/runs",           api_runs_list,        ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/runs.ndjson",    api_runs_ndjson,      ROUTE_READ,   &JSON,   FREE,    HEAVY},
    {"GET",    "/runs.csv",       api_runs_csv,         ROUTE_READ,   &JSON,   FREE,    HEAVY},
    {"POST",   "/runs/import",    api_runs_import,      ROUTE_WRITE,  &NDJSON, LIMITED, LIGHT},
    {"GET",    "/runs/*.csv",     api_run_csv,          ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/runs/*.md",      api_run_md,           ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/runs/*",         api_runs_get,         ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"DELETE", "/runs/*",         api_runs_delete,      ROUTE_WRITE,  &JSON,   FREE,    LIGHT},
    {"GET",    "/benchmarks",     api_benchmarks_get,   ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"POST",   "/predict",        api_predict_post,     ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/compare",        api_compare_get,      ROUTE_READ,   &JSON,   FREE,    HEAVY},
    {"GET",    "/compare.md",     api_compare_md_get,   ROUTE_READ,   &JSON,   FREE,    HEAVY},
    {"POST",   "/baselines",      api_baselines_post,   ROUTE_WRITE,  &JSON,   FREE,    LIGHT},
    {"GET",    "/baselines",      api_baselines_list,   ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/baselines/*",    api_baselines_get,    ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"DELETE", "/baselines/*",    api_baselines_delete, ROUTE_WRITE,  &JSON,   FREE,    LIGHT},
    {"GET",    "/alerts",         api_alerts_get,       ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"POST",   "/alerts/*/ack",   api_alerts_ack,       ROUTE_WRITE,  &JSON,   FREE,    LIGHT},
    {"GET",    "/fleet",          api_fleet_get,        ROUTE_READ,   &JSON,   FREE,    HEAVY},
    {"GET",    "/coverage",       api_coverage_get,     ROUTE_READ,   &JSON,   FREE,    HEAVY},
    {"GET",    "/devices",        api_devices_get,      ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/canaries",       api_canaries_get,     ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/cards",          api_cards_get_all,    ROUTE_READ,   &JSON,   FREE,    HEAVY},
    {"GET",    "/cards/*/events", api_card_events_get,  ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/cards/*/changes", api_card_changes_get, ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"DELETE", "/cards/*/owner",  api_card_owner_delete, ROUTE_WRITE, &JSON,   FREE,    LIGHT},
    {"GET",    "/changes",        api_changes_get,      ROUTE_READ,   &JSON,   FREE,    HEAVY},
    {"GET",    "/changes.md",     api_changes_md_get,   ROUTE_READ,   &JSON,   FREE,    HEAVY},
    {"GET",    "/cards/*",        api_cards_get_one,    ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/card_faults",    api_card_faults_get,  ROUTE_READ,   &JSON,   FREE,    HEAVY},
    {"GET",    "/peers",          api_peers_get,        ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/metrics",        api_metrics_get,      ROUTE_READ,   &JSON,   FREE,    LIGHT},
    {"GET",    "/openapi.json",   api_openapi_get,      ROUTE_PUBLIC, &JSON,   FREE,    LIGHT},
    {"GET",    "/healthz",        api_healthz_get,      ROUTE_PUBLIC, &JSON,   FREE,    LIGHT},
    {"GET",    "/",               api_static_index,     ROUTE_PUBLIC, &JSON,   FREE,    LIGHT},
    {"GET",    "/static/*",       api_static_file,      ROUTE_PUBLIC, &JSON,   FREE,    LIGHT},
    {"GET",    "/static/lib/*",   api_static_lib_file,  ROUTE_PUBLIC, &JSON,   FREE,    LIGHT},
    {"GET",    "/static/views/*", api_static_view_file, ROUTE_PUBLIC, &JSON,   FREE,    LIGHT},
    {"GET",    "/vendor/chart.js", api_static_chartjs,   ROUTE_PUBLIC, &JSON,   FREE,    LIGHT},
};
// clang-format on

#define N_ROUTES (sizeof(routes) / sizeof(routes[0]))

/* Matches path against pattern; "*" takes one non-empty segment.  What
 * follows the "*" in the pattern is either the rest of the path, when it
 * starts with "/" ("/alerts/ * /ack"), or a suffix the segment must end
 * with (".csv"); arg gets the segment without that suffix. */
static int match(const char *pattern, const char *path, char *arg, size_t cap)
{
    const char *star, *suffix;
    size_t prefix, seg, suf;

    /* Most patterns differ from the path in their first two characters
     * ("/r" against "/c"): refused there without a scan. */
    if (pattern[0] != '*' && (pattern[0] != path[0] ||
                              (pattern[0] && pattern[1] != '*' && pattern[1] != path[1])))
        return 0;
    star = strchr(pattern, '*');
    if (star == NULL)
        return strcmp(pattern, path) == 0;
    prefix = (size_t)(star - pattern);
    if (strncmp(pattern, path, prefix) != 0)
        return 0;
    suffix = star + 1;
    suf = strlen(suffix);
    path += prefix;
    seg = strcspn(path, "/");
    if (suffix[0] == '/') {
        if (seg == 0 || strcmp(path + seg, suffix) != 0 || seg >= cap)
            return 0;
        memcpy(arg, path, seg);
        arg[seg] = '\0';
        return 1;
    }
    if (path[seg] != '\0' || seg <= suf || strcmp(path + seg - suf, suffix) != 0)
        return 0;
    seg -= suf;
    if (seg >= cap)
        return 0;
    memcpy(arg, path, seg);
    arg[seg] = '\0';
    return 1;
}

const struct route *router_find(const char *method, const char *path, char *arg,
                                size_t arg_cap, char *allow, size_t allow_cap, int *status)
{
    size_t used = 0;
    char scratch[128];
    size_t scratch_cap = sizeof(scratch) < arg_cap ? sizeof(scratch) : arg_cap;

    allow[0] = '\0';
    /* The method's routes first: a request that has one costs no Allow
     * list (and its answer carries none). */
    for (size_t i = 0; i < N_ROUTES; i++) {
        const struct route *r = &routes[i];
        if (r->method[0] != method[0] || strcmp(r->method, method) != 0 ||
            !match(r->pattern, path, scratch, scratch_cap))
            continue;
        if (strchr(r->pattern, '*'))
            memcpy(arg, scratch, strlen(scratch) + 1); /* fits: scratch_cap <= arg_cap */
        else if (arg_cap > 0)
            arg[0] = '\0';
        return r;
    }
    for (size_t i = 0; i < N_ROUTES; i++) {
        const struct route *r = &routes[i];
        /* A path may match two patterns of one method ("/runs/ *.csv"
         * and "/runs/ *"): name the method once. */
        if (match(r->pattern, path, scratch, scratch_cap) && used < allow_cap &&
            !strstr(allow, r->method))
            used += (size_t)snprintf(allow + used, allow_cap - used, "%s%s",
                                     used ? ", " : "", r->method);
    }
    if (used && strstr(allow, "GET") && used < allow_cap)
        snprintf(allow + used, allow_cap - used, ", HEAD");
    *status = used ? 405 : 404;
    return NULL;
}
