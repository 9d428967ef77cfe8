/*
 * worker_main.c - gpubench-worker's command line: --list, --serve, run,
 * --help, --version.  Each command lives in its own file; this one only
 * dispatches and owns the exit status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device_json.h"
#include "gb_kernels.h"
#include "run_cli.h"
#include "serve.h"
#include "version.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gpubench-worker --list\n"
            "       gpubench-worker --serve --device N\n"
            "       gpubench-worker run NAME [PARAMS-JSON] [--device N] [--json]\n"
            "       gpubench-worker --help | --version\n"
            "\n"
            "  --list    print this machine's GPUs as one JSON object\n"
            "  --serve   run jobs for GPU N: one JSON job a line on stdin, progress and\n"
            "            one result or error line per job on stdout (the daemon's protocol)\n"
            "  run       run one benchmark (smem_stride, smem_pattern, transpose) and print\n"
            "            a table, or the result and metadata as JSON with --json; e.g.\n"
            "            gpubench-worker run smem_stride '{\"strides\":[1,2,4,32,33]}'\n");
}

/* A build fact, or "none" where the build had no CUDA compiler. */
static const char *or_none(const char *s)
{
    return s[0] != '\0' ? s : "none";
}

static int list(void)
{
    cJSON *out = gb_device_list_json();
    char *text = out ? cJSON_PrintUnformatted(out) : NULL;

    if (text == NULL) {
        fprintf(stderr, "gpubench-worker: out of memory\n");
        cJSON_Delete(out);
        return 1;
    }
    printf("%s\n", text);
    cJSON_free(text);
    cJSON_Delete(out);
    return 0;
}

static int serve(int argc, char **argv)
{
    long device = -1;

    for (int i = 2; i < argc; i++) {
        if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            char *end;
            device = strtol(argv[++i], &end, 10);
            if (*end != '\0')
                device = -1;
        } else {
            device = -1;
            break;
        }
    }
    if (device < 0 || device > 1024) {
        fprintf(stderr, "usage: gpubench-worker --serve --device N\n");
        return 2;
    }
    return gb_serve((int)device, stdin, stdout);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
        usage(stdout);
        return 0;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("gpubench-worker %s (commit %s; CUDA %s, nvcc %s, architectures %s)\n",
               GPUBENCH_VERSION, GPUBENCH_GIT_COMMIT,
               gb_backend_has_cuda() ? "yes" : "no", or_none(GPUBENCH_CUDA_COMPILER_VERSION),
               or_none(GPUBENCH_CUDA_ARCHITECTURES));
        return 0;
    }
    if (strcmp(argv[1], "--list") == 0 && argc == 2)
        return list();
    if (strcmp(argv[1], "--serve") == 0)
        return serve(argc, argv);
    if (strcmp(argv[1], "run") == 0)
        return gb_run_cli(argc - 1, argv + 1);
    fprintf(stderr, "gpubench-worker: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
