/*
 * fake_worker.c - a TEST DOUBLE of gpubench-worker, for the API tests on
 * machines without a GPU.  It speaks the worker protocol of DESIGN.md
 * exactly, checks params with the same table as the real worker, and
 * answers with SYNTHETIC numbers (every result says "synthetic": true): the
 * degree the prediction gives, made up as a time.  Nothing it prints was
 * measured.
 *
 * Environment:
 *   GPUBENCH_FAKE_GPUS=N        how many GPUs --list reports (default 1)
 *   GPUBENCH_FAKE_CONTROL=FILE  read before each job: one word telling how
 *                               to behave: normal, crash (dies mid-run),
 *                               hang (never answers), fault (a CUDA-style
 *                               error, then exit), garbage (prints junk,
 *                               then answers)
 *   GPUBENCH_FAKE_DELAY_MS=N    sleep this long per row (a slow worker)
 *   GPUBENCH_FAKE_NO_READY=1    never say ready (a worker that cannot start)
 */
#include "bench_spec.h"
#include "predict.h"

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);

    return v && *v ? atoi(v) : fallback;
}

static cJSON *device_json(int index)
{
    cJSON *d = cJSON_CreateObject();
    char uuid[64];

    snprintf(uuid, sizeof(uuid), "GPU-00000000-fake-4000-8000-%012d", index);
    cJSON_AddNumberToObject(d, "index", index);
    cJSON_AddStringToObject(d, "name", "Fake GPU (test double)");
    cJSON_AddStringToObject(d, "uuid", uuid);
    cJSON_AddStringToObject(d, "compute_capability", "0.0");
    cJSON_AddNumberToObject(d, "sm_count", 4);
    cJSON_AddNumberToObject(d, "memory_bytes", 4.0 * 1024 * 1024 * 1024);
    cJSON_AddBoolToObject(d, "synthetic", 1);
    return d;
}

static void print_line(cJSON *obj)
{
    char *text = cJSON_PrintUnformatted(obj);

    if (text) {
        fputs(text, stdout);
        fputc('\n', stdout);
        fflush(stdout);
    }
    free(text);
    cJSON_Delete(obj);
}

static void read_mode(char *mode, size_t cap)
{
    const char *path = getenv("GPUBENCH_FAKE_CONTROL");
    FILE *f = path ? fopen(path, "r") : NULL;

    snprintf(mode, cap, "normal");
    if (f) {
        if (fscanf(f, "%31s", mode) != 1)
            snprintf(mode, cap, "normal");
        fclose(f);
    }
}

static void sleep_ms(int ms)
{
    struct timespec ts = {.tv_sec = ms / 1000, .tv_nsec = (long)(ms % 1000) * 1000000L};

    nanosleep(&ts, NULL);
}

/* The keys of the rows: strides, one pattern, or the variants. */
static cJSON *make_rows(const char *bench, const cJSON *params)
{
    cJSON *rows = cJSON_CreateArray();
    const cJSON *v;

    if (strcmp(bench, "smem_stride") == 0) {
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(params, "strides")) {
            cJSON *row = cJSON_CreateObject();
            int degree = gb_degree_for_stride((long)v->valuedouble);
            cJSON_AddNumberToObject(row, "stride", v->valuedouble);
            cJSON_AddNumberToObject(row, "predicted_degree", degree);
            cJSON_AddNumberToObject(row, "synthetic_ms", 0.25 * degree);
            cJSON_AddItemToArray(rows, row);
        }
    } else if (strcmp(bench, "smem_pattern") == 0) {
        long words[GB_WARP_LANES];
        int i = 0;
        cJSON *row = cJSON_CreateObject();
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(params, "words"))
            words[i++] = (long)v->valuedouble;
        cJSON_AddStringToObject(row, "pattern", "custom");
        cJSON_AddNumberToObject(row, "predicted_degree", gb_degree_for_words(words));
        cJSON_AddNumberToObject(row, "synthetic_ms", 0.25 * gb_degree_for_words(words));
        cJSON_AddItemToArray(rows, row);
    } else if (strcmp(bench, "transpose") == 0) {
        cJSON_ArrayForEach(v, cJSON_GetObjectItem(params, "variants")) {
            cJSON *row = cJSON_CreateObject();
            cJSON_AddStringToObject(row, "variant", v->valuestring);
            cJSON_AddNumberToObject(row, "synthetic_ms",
                                    strcmp(v->valuestring, "tile32") == 0 ? 2.0 : 1.0);
            cJSON_AddItemToArray(rows, row);
        }
    }
    return rows;
}

/* Fills the fields the real worker reports, from the synthetic time. */
static void finish_rows(cJSON *rows, int samples)
{
    double base = 0;
    cJSON *row;

    cJSON_ArrayForEach(row, rows) {
        double ms = cJSON_GetObjectItem(row, "synthetic_ms")->valuedouble;
        cJSON *list = cJSON_AddArrayToObject(row, "samples");
        if (base == 0)
            base = ms;
        for (int i = 0; i < samples; i++)
            cJSON_AddItemToArray(list, cJSON_CreateNumber(ms));
        cJSON_AddNumberToObject(row, "median_ms", ms);
        cJSON_AddNumberToObject(row, "min_ms", ms);
        cJSON_AddNumberToObject(row, "max_ms", ms);
        cJSON_AddNumberToObject(row, "ratio", ms / base);
        cJSON_DeleteItemFromObject(row, "synthetic_ms");
    }
}

static int run_job(const cJSON *job, int device)
{
    const cJSON *id = cJSON_GetObjectItem(job, "id");
    const cJSON *name = cJSON_GetObjectItem(job, "benchmark");
    const struct gb_benchmark *b = cJSON_IsString(name) ? gb_benchmark_find(name->valuestring) : NULL;
    struct gb_error err;
    cJSON *params, *rows, *out, *result, *meta;
    char mode[32];
    int total, done = 0;

    read_mode(mode, sizeof(mode));
    out = cJSON_CreateObject();
    cJSON_AddStringToObject(out, "id", cJSON_IsString(id) ? id->valuestring : "");
    if (b == NULL) {
        cJSON_AddStringToObject(out, "event", "error");
        cJSON_AddStringToObject(out, "code", "unknown_benchmark");
        cJSON_AddStringToObject(out, "message", "this worker cannot run that benchmark");
        print_line(out);
        return 0;
    }
    params = gb_params_resolve(b, cJSON_GetObjectItem(job, "params"), &err);
    if (params == NULL) {
        cJSON_AddStringToObject(out, "event", "error");
        cJSON_AddStringToObject(out, "code", "invalid_params");
        cJSON_AddStringToObject(out, "message", err.message);
        print_line(out);
        return 0;
    }
    /* The test-only benchmarks behave as their real kernels would. */
    if (strcmp(b->name, "test_fault") == 0)
        snprintf(mode, sizeof(mode), "fault");
    else if (strcmp(b->name, "test_hang") == 0)
        snprintf(mode, sizeof(mode), "hang");
    rows = make_rows(b->name, params);
    total = cJSON_GetArraySize(rows);
    if (strcmp(mode, "garbage") == 0) {
        printf("this is not JSON\n{\"event\": \"progress\", \"id\": \"someone-else\"}\n");
        fflush(stdout);
    }
    if (strcmp(mode, "hang") == 0)
        for (;;)
            pause();
    for (done = 0; done < total; done++) {
        cJSON *p = cJSON_CreateObject();
        if (strcmp(mode, "crash") == 0 && done == total / 2)
            raise(SIGKILL);  /* no sanitizer can catch this one */
        sleep_ms(env_int("GPUBENCH_FAKE_DELAY_MS", 0));
        cJSON_AddStringToObject(p, "id", id->valuestring);
        cJSON_AddStringToObject(p, "event", "progress");
        cJSON_AddNumberToObject(p, "done", done + 1);
        cJSON_AddNumberToObject(p, "total", total);
        print_line(p);
    }
    if (strcmp(mode, "fault") == 0) {
        cJSON_AddStringToObject(out, "event", "error");
        cJSON_AddStringToObject(out, "code", "cuda_error");
        cJSON_AddStringToObject(out, "message",
                                "cudaErrorIllegalAddress: an illegal memory access "
                                "was encountered (simulated by the test double)");
        print_line(out);
        cJSON_Delete(rows);
        cJSON_Delete(params);
        return -1;
    }
    finish_rows(rows, cJSON_GetObjectItem(params, "samples")->valueint);
    cJSON_AddStringToObject(out, "event", "result");
    result = cJSON_AddObjectToObject(out, "result");
    cJSON_AddItemToObject(result, "rows", rows);
    cJSON_AddBoolToObject(cJSON_AddObjectToObject(result, "summary"), "synthetic", 1);
    meta = cJSON_AddObjectToObject(out, "meta");
    cJSON_AddBoolToObject(meta, "synthetic", 1);
    cJSON_AddStringToObject(meta, "worker", "fake_worker (test double)");
    cJSON_AddItemToObject(meta, "device", device_json(device));
    print_line(out);
    cJSON_Delete(params);
    return 0;
}

static int serve(int device)
{
    char *line = NULL;
    size_t cap = 0;
    cJSON *ready;

    if (env_int("GPUBENCH_FAKE_NO_READY", 0)) {
        fprintf(stderr, "fake worker: refusing to start (GPUBENCH_FAKE_NO_READY)\n");
        return 1;
    }
    ready = cJSON_CreateObject();
    cJSON_AddStringToObject(ready, "event", "ready");
    cJSON_AddItemToObject(ready, "device", device_json(device));
    print_line(ready);
    while (getline(&line, &cap, stdin) > 0) {
        cJSON *job = cJSON_Parse(line);
        int rc = cJSON_IsObject(job) ? run_job(job, device) : 0;
        cJSON_Delete(job);
        if (rc != 0) {
            free(line);
            return 3;
        }
    }
    free(line);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc >= 2 && strcmp(argv[1], "--list") == 0) {
        int n = env_int("GPUBENCH_FAKE_GPUS", 1);
        cJSON *root = cJSON_CreateObject();
        cJSON *list = cJSON_AddArrayToObject(root, "devices");
        for (int i = 0; i < n; i++)
            cJSON_AddItemToArray(list, device_json(i));
        if (n == 0)
            cJSON_AddStringToObject(root, "reason", "the test double was told GPUBENCH_FAKE_GPUS=0");
        print_line(root);
        return 0;
    }
    if (argc >= 4 && strcmp(argv[1], "--serve") == 0 && strcmp(argv[2], "--device") == 0)
        return serve(atoi(argv[3]));
    fprintf(stderr, "usage: gpubench-fake-worker --list | --serve --device N\n");
    return 2;
}
