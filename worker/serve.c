/*
 * serve.c - the worker side of the daemon's protocol; see serve.h.
 *
 * stdout carries protocol lines only, each one JSON object, flushed as
 * soon as it is written so the daemon sees progress live; logs go to
 * stderr.  Every job is checked again here with common/bench_spec.c even
 * though the server checked it: the worker trusts no one with its GPU.
 */
#include "serve.h"

#include <stdlib.h>
#include <string.h>

#include "device_json.h"
#include "job.h"
#include "job_line.h"
#include "line_reader.h"
#include "nvml_watch.h"
#include "version.h"

#define EXIT_DEVICE_UNAVAILABLE 1
#define EXIT_FATAL_CUDA 3

/* Writes obj as one line and flushes; frees obj. */
static void emit(FILE *out, cJSON *obj)
{
    char *text = obj ? cJSON_PrintUnformatted(obj) : NULL;

    if (text == NULL) {
        fputs("{\"event\":\"error\",\"code\":\"internal\",\"message\":\"out of memory\"}\n", out);
    } else {
        fputs(text, out);
        fputc('\n', out);
    }
    fflush(out);
    cJSON_free(text);
    cJSON_Delete(obj);
}

/* A NEW event object with the job's id (when known) and event name. */
static cJSON *event(const cJSON *id, const char *name)
{
    cJSON *o = cJSON_CreateObject();

    if (o == NULL)
        return NULL;
    if (id != NULL)
        cJSON_AddItemToObject(o, "id", cJSON_Duplicate(id, 1));
    cJSON_AddStringToObject(o, "event", name);
    return o;
}

static void emit_error(FILE *out, const cJSON *id, const struct gb_job_error *err)
{
    cJSON *o = event(id, "error");

    if (o != NULL) {
        cJSON_AddStringToObject(o, "code", err->code);
        cJSON_AddStringToObject(o, "message", err->message);
        if (err->field[0] != '\0')
            cJSON_AddStringToObject(o, "field", err->field);
    }
    emit(out, o);
}

struct progress_ctx {
    FILE *out;
    const cJSON *id;
};

/* {"event": "progress", "done", "total"} and, while the job waits for
 * something other than a sample, "message" saying what. */
static void emit_progress(void *arg, int done, int total, const char *message)
{
    struct progress_ctx *p = arg;
    cJSON *o = event(p->id, "progress");

    if (o != NULL) {
        cJSON_AddNumberToObject(o, "done", done);
        cJSON_AddNumberToObject(o, "total", total);
        if (message != NULL)
            cJSON_AddStringToObject(o, "message", message);
    }
    emit(p->out, o);
}

static void emit_ready(FILE *out, const struct gb_worker *w)
{
    cJSON *o = event(NULL, "ready");
    cJSON *worker = cJSON_CreateObject();

    if (o != NULL) {
        cJSON_AddItemToObject(o, "device", gb_device_json(&w->info));
        if (worker != NULL) {
            cJSON_AddStringToObject(worker, "version", GPUBENCH_VERSION);
            cJSON_AddStringToObject(worker, "git_commit", GPUBENCH_GIT_COMMIT);
            cJSON_AddStringToObject(worker, "architectures", GPUBENCH_CUDA_ARCHITECTURES);
            cJSON_AddItemToObject(o, "worker", worker);
            worker = NULL;
        }
    }
    cJSON_Delete(worker);
    emit(out, o);
}

/* The daemon's watch probe, {"watch":true}, sent while no job runs: 1
 * when line is one (then answered with a reading of the card), else 0. */
static int answer_watch_probe(struct gb_worker *w, const char *line, size_t len, FILE *out)
{
    cJSON *probe = cJSON_ParseWithLength(line, len);
    cJSON *answer;
    int is_probe = cJSON_IsTrue(cJSON_GetObjectItem(probe, "watch"));

    cJSON_Delete(probe);
    if (!is_probe)
        return 0;
    answer = event(NULL, "watch");
    if (answer != NULL)
        cJSON_AddItemToObject(answer, "reading",
                              gb_nvml_watch_reading(w->nvml, w->info.pci_bus_id, w->nvml_reason));
    emit(out, answer);
    return 1;
}

/* One job line; returns 1 when the worker must exit (fatal error). */
static int handle_line(struct gb_worker *w, const char *line, size_t len, FILE *out)
{
    struct gb_job_request req;
    struct gb_job_error err;
    struct progress_ctx progress;
    cJSON *resolved = NULL, *result = NULL, *meta = NULL, *done;
    int fatal = 0;

    memset(&err, 0, sizeof(err));
    if (answer_watch_probe(w, line, len, out))
        return 0;
    if (gb_job_line_parse(line, len, &req, &err) != 0) {
        emit_error(out, req.id, &err);
        goto out;
    }
    resolved = gb_job_resolve(req.benchmark, req.params, &err);
    if (resolved == NULL) {
        emit_error(out, req.id, &err);
        goto out;
    }
    progress.out = out;
    progress.id = req.id;
    fprintf(stderr, "gpubench-worker: job %s: %s\n",
            cJSON_IsString(req.id) ? req.id->valuestring : "(number)", req.benchmark);
    if (gb_job_run(w, req.benchmark, resolved, req.timeout_s, emit_progress, &progress,
                   &result, &meta, &err) != 0) {
        fprintf(stderr, "gpubench-worker: job failed: %s: %s\n", err.code, err.message);
        emit_error(out, req.id, &err);
        fatal = err.fatal;
        goto out;
    }
    done = event(req.id, "result");
    if (done != NULL) {
        cJSON_AddItemToObject(done, "result", result);
        cJSON_AddItemToObject(done, "meta", meta);
        result = meta = NULL;
    }
    emit(out, done);

out:
    cJSON_Delete(result);
    cJSON_Delete(meta);
    cJSON_Delete(resolved);
    gb_job_request_free(&req);
    return fatal;
}

int gb_serve(int device, FILE *in, FILE *out)
{
    struct gb_worker w;
    struct gb_job_error err;
    char *line = NULL;
    size_t cap = 0, len = 0;
    int status = 0;

    memset(&err, 0, sizeof(err));
    if (gb_worker_open(&w, device, &err) != 0) {
        fprintf(stderr, "gpubench-worker: %s\n", err.message);
        emit_error(out, NULL, &err);
        status = EXIT_DEVICE_UNAVAILABLE;
        goto out;
    }
    if (w.nvml == NULL)
        fprintf(stderr, "gpubench-worker: no card state: %s\n", w.nvml_reason);
    emit_ready(out, &w);
    for (;;) {
        enum gb_line_status got = gb_read_line(in, &line, &cap, GB_MAX_JOB_LINE, &len);
        if (got == GB_LINE_EOF)
            break;
        if (got == GB_LINE_NOMEM) {
            gb_job_fail(&err, "internal", "out of memory reading a job line");
            emit_error(out, NULL, &err);
            continue;
        }
        if (got == GB_LINE_TOO_LONG) {
            gb_job_fail(&err, "invalid_job", "job line longer than %d bytes; skipped",
                        GB_MAX_JOB_LINE);
            emit_error(out, NULL, &err);
            continue;
        }
        if (len == 0)
            continue;
        if (handle_line(&w, line, len, out)) {
            status = EXIT_FATAL_CUDA;
            break;
        }
    }

out:
    gb_worker_close(&w);
    free(line);
    return status;
}
