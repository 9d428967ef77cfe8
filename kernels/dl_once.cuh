/*
 * dl_once.cuh - a library loaded with dlopen once a process, shared by
 * cublas_api.cu and nccl_api.cu: the first call runs the loader, every
 * later one answers as it did (the loaded API, or the same reason); and
 * its symbols read into function pointers.
 * Internal to the CUDA backend; the worker runs one job at a time, so the
 * state is not locked.
 */
#ifndef GPUBENCH_KERNELS_DL_ONCE_CUH
#define GPUBENCH_KERNELS_DL_ONCE_CUH

#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

/* dlsym(lib, name) into the function pointer at slot (NULL when absent);
 * through memcpy, as ISO C++ has no cast from an object pointer to a
 * function pointer. */
static inline void gb_dl_sym(void *lib, const char *name, void *slot)
{
    void *sym = dlsym(lib, name);
    memcpy(slot, &sym, sizeof(sym));
}

struct gb_dl_once {
    int loaded;    /* 0 not tried, 1 loaded, -1 failed */
    char why[400]; /* the failure's reason */
};

/* Runs load(api, why, cap) the first time; returns api once it loaded,
 * else NULL with the reason in reason[0..cap-1]. */
template <typename Api>
static inline const Api *gb_dl_once(struct gb_dl_once *once, Api *api,
                                    int (*load)(Api *, char *, size_t), char *reason,
                                    size_t cap)
{
    if (once->loaded == 0)
        once->loaded = load(api, once->why, sizeof(once->why)) == 0 ? 1 : -1;
    if (once->loaded < 0) {
        snprintf(reason, cap, "%s", once->why);
        return NULL;
    }
    return api;
}

#endif
