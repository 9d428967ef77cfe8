/*
 * run_cli.c - the `run` command; see run_cli.h.  Parameters are checked
 * (common/bench_spec.c) before the GPU is opened, so a typo is answered at
 * once, also on a machine with no GPU.
 */
#include "run_cli.h"

#include <stdarg.h>
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
    const char *params_text; /* NULL: {} */
    int device;
    int json;
    double timeout_s; /* --timeout: a precision run's time limit; 0 default */
};

/* An error as the caller asked for output: with --json one JSON object
 * {"error": CODE, "message": TEXT} on stdout (a script parses stdout and
 * would choke on prose), otherwise a line on stderr. */
static void say_error(int json, const char *code, const char *fmt, ...)
{
    char message[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(message, sizeof(message), fmt, ap);
    va_end(ap);
    if (json) {
        cJSON *o = cJSON_CreateObject();
        char *text = NULL;

        if (o != NULL && cJSON_AddStringToObject(o, "error", code) != NULL &&
            cJSON_AddStringToObject(o, "message", message) != NULL)
            text = cJSON_PrintUnformatted(o);
        cJSON_Delete(o);
        if (text != NULL) {
            printf("%s\n", text);
            cJSON_free(text);
            return;
        }
    }
    fprintf(stderr, "gpubench-worker run: %s\n", message);
}

static int parse_args(int argc, char **argv, struct run_args *a)
{
    memset(a, 0, sizeof(*a));
    /* --json first, wherever it is, so that every error below honours it. */
    for (int i = 1; i < argc; i++)
        if (strcmp(argv[i], "--json") == 0)
            a->json = 1;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0) {
            continue;
        } else if (strcmp(argv[i], "--device") == 0 && i + 1 < argc) {
            char *end;
            long v = strtol(argv[++i], &end, 10);
            if (*end != '\0' || v < 0 || v > 1024) {
                say_error(a->json, "bad_usage", "--device takes a GPU index");
                return -1;
            }
            a->device = (int)v;
        } else if (strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) {
            char *end;
            double v = strtod(argv[++i], &end);
            if (*end != '\0' || !(v > 0 && v <= 86400)) {
                say_error(a->json, "bad_usage", "--timeout takes seconds (1..86400)");
                return -1;
            }
            a->timeout_s = v;
        } else if (a->benchmark == NULL) {
            a->benchmark = argv[i];
        } else if (a->params_text == NULL) {
            a->params_text = argv[i];
        } else {
            say_error(a->json, "bad_usage", "unexpected argument \"%s\"", argv[i]);
            return -1;
        }
    }
    if (a->benchmark == NULL) {
        say_error(a->json, "bad_usage", "usage: gpubench-worker run NAME [PARAMS-JSON] "
                                        "[--device N] [--timeout S] [--json]");
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
            say_error(a.json, "bad_params", "PARAMS-JSON is not JSON: %s", a.params_text);
            goto out;
        }
    }
    resolved = gb_job_resolve(a.benchmark, params, &err);
    if (resolved == NULL) {
        say_error(a.json, err.code[0] ? err.code : "bad_params", "%s", err.message);
        goto out;
    }
    status = EXIT_FAILED;
    opened = 1;
    if (gb_worker_open(&w, a.device, &err) != 0) {
        say_error(a.json, err.code, "%s", err.message);
        goto out;
    }
    if (gb_job_run(&w, a.benchmark, resolved, a.timeout_s, progress, &p, &result, &meta,
                   &err) != 0) {
        say_error(a.json, err.code, "%s: %s", err.code, err.message);
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
