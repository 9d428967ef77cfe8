/*
 * nccl_api.cu - libnccl loaded once with dlopen; see nccl_api.cuh.
 */
#include "nccl_api.cuh"
#include "dl_once.cuh"
#include "gb_perf.h"

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* First GPUBENCH_NCCL_LIBRARY, then the versioned name the CUDA
 * repository's libnccl2 installs, then an unversioned one. */
static int nccl_load(struct gb_nccl_api *api, char *reason, size_t cap)
{
    const char *env = getenv("GPUBENCH_NCCL_LIBRARY");
    const char *names[] = {env, "libnccl.so.2", "libnccl.so"};
    const char *why = NULL;

    memset(api, 0, sizeof(*api));
    if (env != NULL && env[0] != '\0') {
        /* named: only that one, so a wrong path is not hidden by another */
        api->lib = dlopen(env, RTLD_NOW | RTLD_LOCAL);
        why = api->lib ? NULL : dlerror();
        snprintf(api->path, sizeof(api->path), "%s", env);
    } else {
        for (size_t i = 1; i < sizeof(names) / sizeof(names[0]) && api->lib == NULL; i++) {
            api->lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL);
            why = api->lib ? NULL : dlerror();
            snprintf(api->path, sizeof(api->path), "%s", names[i]);
        }
    }
    if (api->lib == NULL) {
        snprintf(reason, cap,
                 "NCCL not loaded (%s; install the CUDA repository's libnccl2, or set "
                 "GPUBENCH_NCCL_LIBRARY to a libnccl.so.2): %s",
                 env && env[0] ? "GPUBENCH_NCCL_LIBRARY" : "libnccl.so.2, libnccl.so",
                 why ? why : "not found");
        return -1;
    }
    gb_dl_sym(api->lib, "ncclGetVersion", &api->get_version);
    gb_dl_sym(api->lib, "ncclCommInitAll", &api->comm_init_all);
    gb_dl_sym(api->lib, "ncclCommDestroy", &api->comm_destroy);
    gb_dl_sym(api->lib, "ncclAllReduce", &api->all_reduce);
    gb_dl_sym(api->lib, "ncclGroupStart", &api->group_start);
    gb_dl_sym(api->lib, "ncclGroupEnd", &api->group_end);
    gb_dl_sym(api->lib, "ncclGetErrorString", &api->error_string);
    if (!api->get_version || !api->comm_init_all || !api->comm_destroy || !api->all_reduce ||
        !api->group_start || !api->group_end || !api->error_string ||
        api->get_version(&api->version) != GB_NCCL_SUCCESS)
        snprintf(reason, cap, "%s loaded but lacks ncclCommInitAll/ncclAllReduce/"
                              "ncclGetVersion or its version cannot be read",
                 api->path);
    else if (api->version < 21000) /* bfloat16 (ncclBfloat16 9) came with 2.10 */
        snprintf(reason, cap, "%s is NCCL version code %d; nccl_allreduce needs 2.10 or newer",
                 api->path, api->version);
    else
        return 0;
    dlclose(api->lib);
    api->lib = NULL;
    return -1;
}

const struct gb_nccl_api *gb_nccl(char *reason, size_t cap)
{
    static struct gb_nccl_api api;
    static struct gb_dl_once once;

    return gb_dl_once(&once, &api, nccl_load, reason, cap);
}

void gb_nccl_version_text(int code, char *buf, size_t cap)
{
    /* nccl.h: NCCL_VERSION(X,Y,Z) is X*1000 + Y*100 + Z up to 2.8,
     * X*10000 + Y*100 + Z after */
    if (code >= 20900)
        snprintf(buf, cap, "%d.%d.%d", code / 10000, code / 100 % 100, code % 100);
    else
        snprintf(buf, cap, "%d.%d.%d", code / 1000, code / 100 % 10, code % 100);
}

int gb_nccl_probe(char *version, size_t version_cap, char *reason, size_t reason_cap)
{
    const struct gb_nccl_api *api = gb_nccl(reason, reason_cap);

    if (version_cap > 0)
        version[0] = '\0';
    if (api == NULL)
        return -1;
    gb_nccl_version_text(api->version, version, version_cap);
    return 0;
}
