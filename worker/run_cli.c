/*
 * run_cli.c - the `run` command; see run_cli.h.  Parameters are checked
 * (common/bench_spec.c) before the GPU is opened, so a typo is answered at
 * once, also on a machine with no GPU.
 */
#include "run_cli.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "job.h"
#include "table.h"

#define EXIT_FAILED 1
#define EXIT_USAGE 2
#define EXIT_FATAL_CUDA 3

struct run_args {
    const char *benchmark;
    const char *params_text;  /* NULL: {} */
    int device;
    int json;
    double timeout_s;  /* --timeout: a precision run's time limit; 0 default */
};

static int parse_args(int argc, char **argv, struct run_args *a)
{
    memset(a, 0, sizeof(*a));
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            a->json = 1;
        } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 0 || v > 1024) {
                fprintf(stderr, "gpubench-worker run: --device takes a GPU index\n");
                return -1;
            }
            a->device = (int)v;
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            char *end;
            double v = strtod(argv[++i], &end);
            if (*end != '\0' || !(v > 0 && v <= 86400)) {
                fprintf(stderr, "gpubench-worker run: --timeout takes seconds (1..86400)\n");
                return -1;
            }
            a->timeout_s = v;
        } else if (a->benchmark == NULL) {
            a->benchmark = argv[i];
        } else if (a->params_text == NULL) {
            a->params_text = argv[i];
        } else {
            fprintf(stderr, "gpubench-worker run: unexpected argument \"%s\"\n", argv[i]);
            return -1;
        }
    }
    if (a->benchmark == NULL) {
        fprintf(stderr, "usage: gpubench-worker run NAME [PARAMS-JSON] [--device N] "
                        "[--timeout S] [--json]\n");
        return -1;
    }
    return 0;
}

struct progress_ctx {
    int tty;
    int last_tenth;
};

/* Progress to stderr: a line updated in place on a terminal, one line per
 * tenth otherwise (logs stay short). */
static void progress(void *arg, int done, int total, const char *message)
{
    struct progress_ctx *p = arg;
    int tenth = total > 0 ? done * 10 / total : 0;

    if (message != NULL) {
        fprintf(stderr, "%s%s\n", p->tty ? "\r" : "", message);
        return;
    }
    if (p->tty) {
        fprintf(stderr, "\rmeasuring: %d of %d samples", done, total);
        if (done == total)
            fputc('\n', stderr);
    } else if (tenth != p->last_tenth || done == total) {
        fprintf(stderr, "measuring: %d of %d samples\n", done, total);
    }
    p->last_tenth = tenth;
}

static void print_json(const cJSON *result, const cJSON *meta)
{
    cJSON *both = cJSON_CreateObject();
    char *text;

    if (both == NULL)
        return;
    cJSON_AddItemReferenceToObject(both, "result", (cJSON *)result);
    cJSON_AddItemReferenceToObject(both, "meta", (cJSON *)meta);
    text = cJSON_Print(both);
    if (text != NULL)
        printf("%s\n", text);
    cJSON_free(text);
    cJSON_Delete(both);
}

int gb_run_cli(int argc, char **argv)
{
    struct run_args a;
    struct gb_job_error err;
    struct gb_worker w;
    struct progress_ctx p = {isatty(STDERR_FILENO), -1};
    cJSON *params = NULL, *resolved = NULL, *result = NULL, *meta = NULL;
    int status = EXIT_USAGE, opened = 0;

    memset(&err, 0, sizeof(err));
    if (parse_args(argc, argv, &a) != 0)
        goto out;
    if (a.params_text != NULL) {
        params = cJSON_ParseWithLength(a.params_text, strlen(a.params_text));
        if (params == NULL) {
            fprintf(stderr, "gpubench-worker run: PARAMS-JSON is not JSON: %s\n",
                    a.params_text);
            goto out;
        }
    }
    resolved = gb_job_resolve(a.benchmark, params, &err);
    if (resolved == NULL) {
        fprintf(stderr, "gpubench-worker run: %s\n", err.message);
        goto out;
    }
    status = EXIT_FAILED;
    opened = 1;
    if (gb_worker_open(&w, a.device, &err) != 0) {
        fprintf(stderr, "gpubench-worker run: %s\n", err.message);
        goto out;
    }
    if (gb_job_run(&w, a.benchmark, resolved, a.timeout_s, progress, &p, &result, &meta,
                   &err) != 0) {
        fprintf(stderr, "gpubench-worker run: %s: %s\n", err.code, err.message);
        status = err.fatal ? EXIT_FATAL_CUDA : EXIT_FAILED;
        goto out;
    }
    if (a.json)
        print_json(result, meta);
    else
        gb_print_table(stdout, a.benchmark, result, meta);
    status = 0;

out:
    if (opened)
        gb_worker_close(&w);
    cJSON_Delete(result);
    cJSON_Delete(meta);
    cJSON_Delete(resolved);
    cJSON_Delete(params);
    return status;
}
