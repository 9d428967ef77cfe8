/*
 * worker_main.c - gpubench-worker's command line: --list, --serve, run,
 * watch, --help, --version.  Each command lives in its own file; this one only
 * dispatches and owns the exit status.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_table.h"
#include "device_json.h"
#include "gb_kernels.h"
#include "run_cli.h"
#include "serve.h"
#include "watch_cli.h"
#include "version.h"

/* The benchmarks `run` takes, from the one table (common/bench_spec.c)
 * through the worker's (bench_table.c): every one this worker measures,
 * except those offered only to the daemon's tests.  Wrapped under an
 * indent of 12 columns so the list reads like the text above it. */
static void usage_benchmarks(FILE *out)
{
    int column = 0;

    fprintf(out, "\nbenchmarks (their parameters: GET /benchmarks on a daemon):\n");
    for (size_t i = 0; i < gb_benchmark_count(); i++) {
        const struct gb_benchmark *b = gb_benchmark_at(i);
        int len;

        if (b->test_only || gb_bench_impl_for(b) == NULL)
            continue;
        len = (int)strlen(b->name);
        if (column > 0 && column + 2 + len > 80) {
            fprintf(out, ",\n");
            column = 0;
        } else if (column > 0) {
            fprintf(out, ", ");
            column += 2;
        }
        if (column == 0)
            column = fprintf(out, "            ");
        fprintf(out, "%s", b->name);
        column += len;
    }
    fprintf(out, "\n");
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: gpubench-worker --list\n"
            "       gpubench-worker --serve --device N\n"
            "       gpubench-worker run NAME [PARAMS-JSON] [--device N] [--json]\n"
            "       gpubench-worker watch (--device N | --pci-bus-id ID) [--seconds S] "
            "[--interval S]\n"
            "       gpubench-worker --help | --version\n"
            "\n"
            "  --list    print this machine's GPUs as one JSON object\n"
            "  --serve   run jobs for GPU N: one JSON job a line on stdin, progress and\n"
            "            one result or error line per job on stdout (the daemon's protocol)\n"
            "  run       run one benchmark (below) and print a table, or the result and\n"
            "            metadata as JSON with --json; e.g.\n"
            "            gpubench-worker run smem_stride '{\"strides\":[1,2,4,32,33]}'\n"
            "  watch     the card's NVML watch readings (XIDs, ECC, row remaps, links), one\n"
            "            JSON object a line, every --interval seconds (1) for --seconds (120)\n");
    usage_benchmarks(out);
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
    if (strcmp(argv[1], "watch") == 0)
        return gb_watch_cli(argc - 1, argv + 1);
    fprintf(stderr, "gpubench-worker: unknown command \"%s\"\n", argv[1]);
    usage(stderr);
    return 2;
}
