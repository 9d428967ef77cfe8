/*
 * test_nccl_loader.c - NCCL loaded with dlopen as nccl_allreduce loads it
 * (kernels/nccl_api.cu, gb_nccl_probe), no GPU needed.
 *
 *   test_nccl_loader          the default names: NCCL loads and its
 *                             version is 2.10 or newer (77, skipped,
 *                             where no libnccl.so.2 is installed)
 *   test_nccl_loader missing  GPUBENCH_NCCL_LIBRARY names a file that is
 *                             not there: refused, the reason names it
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gb_perf.h"

int main(int argc, char **argv)
{
    char version[32], reason[512];
    int rc = gb_nccl_probe(version, sizeof(version), reason, sizeof(reason));
    int major = 0, minor = 0, patch = 0;

    if (argc > 1 && strcmp(argv[1], "missing") == 0) {
        const char *named = getenv("GPUBENCH_NCCL_LIBRARY");
        if (rc == 0 || named == NULL || strstr(reason, "GPUBENCH_NCCL_LIBRARY") == NULL ||
            strstr(reason, named) == NULL || version[0] != '\0') {
            fprintf(stderr, "FAIL missing library: rc %d, reason \"%s\"\n", rc, reason);
            return 1;
        }
        printf("ok   missing library: %s\n", reason);
        return 0;
    }
    if (rc != 0) {
        printf("SKIPPED: no NCCL here: %s\n", reason);
        return 77;
    }
    if (sscanf(version, "%d.%d.%d", &major, &minor, &patch) != 3 || major != 2 || minor < 10) {
        fprintf(stderr, "FAIL version \"%s\"\n", version);
        return 1;
    }
    printf("ok   NCCL %s loaded\n", version);
    return 0;
}
