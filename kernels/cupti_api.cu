/*
 * cupti_api.cu - finds and loads libcupti; see cupti_api.cuh.
 */
#include <dlfcn.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cupti_api.cuh"

/* Tried in order, unless GPUBENCH_CUPTI_LIBRARY names the one to use: the
 * loader's search path (the toolkit's major versions that have the range
 * profiler), then the toolkit's usual folders, which a daemon's
 * environment rarely names. */
static const char *const kCandidates[] = {
    "libcupti.so.13",
    "libcupti.so.12",
    "libcupti.so",
    "/usr/local/cuda/lib64/libcupti.so",
    "/usr/local/cuda/extras/CUPTI/lib64/libcupti.so",
};

static struct gb_cupti_api api;
static int loaded;

/* libcupti opens libnvperf_host.so by name when the profiler starts; where
 * libcupti itself was found by a full path, that name may not resolve, so
 * the copy beside it is loaded first and the later open finds it. */
static void preload_nvperf(void *cupti)
{
    struct link_map *map = NULL;
    char dir[PATH_MAX], path[PATH_MAX + 32];
    char *slash;

    if (dlinfo(cupti, RTLD_DI_LINKMAP, &map) != 0 || map == NULL || map->l_name == NULL)
        return;
    snprintf(dir, sizeof(dir), "%s", map->l_name);
    slash = strrchr(dir, '/');
    if (slash == NULL)
        return;
    *slash = '\0';
    snprintf(path, sizeof(path), "%s/libnvperf_host.so", dir);
    (void)dlopen(path, RTLD_NOW | RTLD_GLOBAL); /* absent: CUPTI will say so */
}

static void *open_library(char *path, size_t cap, char *tried, size_t tried_cap)
{
    const char *env = getenv("GPUBENCH_CUPTI_LIBRARY");
    size_t used = 0;

    tried[0] = '\0';
    /* A library named by the user is the only one tried: a wrong path must
     * say so, not be papered over by another CUPTI. */
    int last = env != NULL && env[0] != '\0'
                   ? -1
                   : (int)(sizeof(kCandidates) / sizeof(kCandidates[0])) - 1;

    for (int i = -1; i <= last; i++) {
        const char *name = i < 0 ? env : kCandidates[i];
        void *h;
        if (name == NULL || name[0] == '\0')
            continue;
        h = dlopen(name, RTLD_NOW | RTLD_LOCAL);
        if (h != NULL) {
            struct link_map *map = NULL;
            snprintf(path, cap, "%s",
                     dlinfo(h, RTLD_DI_LINKMAP, &map) == 0 && map && map->l_name && map->l_name[0]
                         ? map->l_name
                         : name);
            return h;
        }
        if (used < tried_cap)
            used += (size_t)snprintf(tried + used, tried_cap - used, "%s%s",
                                     used ? ", " : "tried ", name);
    }
    return NULL;
}

const struct gb_cupti_api *gb_cupti_load(struct gb_counters_state *st)
{
    char tried[200];
    void *h;

    /* A failure is not remembered: a later run finds a CUPTI installed
     * meanwhile without a restart of the worker. */
    if (!loaded) {
        h = open_library(api.path, sizeof(api.path), tried, sizeof(tried));
        if (h == NULL) {
            gb_counters_fail(st, GB_COUNTERS_NO_LIBRARY, "%s", tried);
            return NULL;
        }
        /* The handle stays open, also after a failure (cupti_api.cuh). */
#define GB_CUPTI_RESOLVE(f)                                                      \
    api.f = (decltype(api.f))dlsym(h, #f);                                       \
    if (api.f == NULL) {                                                         \
        gb_counters_fail(st, GB_COUNTERS_TOO_OLD, "%s has no %s", api.path, #f); \
        return NULL;                                                             \
    }
        GB_CUPTI_FUNCTIONS(GB_CUPTI_RESOLVE)
#undef GB_CUPTI_RESOLVE
        preload_nvperf(h);
        loaded = 1;
    }
    snprintf(st->library, sizeof(st->library), "%s", api.path);
    return &api;
}

int gb_cupti_fail(const struct gb_cupti_api *a, struct gb_counters_state *st,
                  const char *call, CUptiResult r)
{
    const char *text = NULL;
    enum gb_counters_status status = GB_COUNTERS_FAILED;

    if (a == NULL || a->cuptiGetResultString(r, &text) != CUPTI_SUCCESS || text == NULL)
        text = "unknown CUPTI error";
    switch (r) {
    case CUPTI_ERROR_INSUFFICIENT_PRIVILEGES:
        status = GB_COUNTERS_ADMIN_ONLY;
        break;
    case CUPTI_ERROR_NOT_SUPPORTED:
    case CUPTI_ERROR_NOT_COMPATIBLE:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_VIRTUALIZED_DEVICE_INSUFFICIENT_PRIVILEGES:
    case CUPTI_ERROR_CONFIDENTIAL_COMPUTING_NOT_SUPPORTED:
    case CUPTI_ERROR_CMP_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_MIG_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_SLI_DEVICE_NOT_SUPPORTED:
    case CUPTI_ERROR_WSL_DEVICE_NOT_SUPPORTED:
        status = GB_COUNTERS_UNSUPPORTED;
        break;
    default:
        break;
    }
    return gb_counters_fail(st, status, "%s: %s (CUPTI error %d)", call, text, (int)r);
}
