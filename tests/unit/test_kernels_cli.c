/*
 * test_kernels_cli.c - the built gpubench-worker's command line, run as a
 * process: --list is one JSON object (with a reason when it lists no GPU),
 * bad parameters exit 2 naming the field before any GPU is touched, a GPU
 * that cannot be opened gives an error event and a non-zero exit, `run`
 * says "no NVIDIA driver" where `--list` does, and `run --json` answers
 * its errors as JSON on stdout (issue 17).  Works
 * with or without a GPU and with either backend.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

#include "bench_spec.h"
#include "test.h"

#ifndef GB_WORKER_BIN
#error "GB_WORKER_BIN must name the worker binary"
#endif

/* Runs command, keeps up to cap-1 bytes of its output; returns its exit
 * status, or -1. */
static int run(const char *command, char *out, size_t cap)
{
    FILE *p = popen(command, "r");
    size_t got;
    int status;

    if (p == NULL)
        return -1;
    got = fread(out, 1, cap - 1, p);
    out[got] = '\0';
    status = pclose(p);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static int test_list(void)
{
    char out[65536];
    cJSON *list, *devices;

    ASSERT_EQ(run("'" GB_WORKER_BIN "' --list 2>/dev/null", out, sizeof(out)), 0);
    list = cJSON_Parse(out);
    ASSERT(cJSON_IsObject(list));
    devices = cJSON_GetObjectItem(list, "devices");
    ASSERT(cJSON_IsArray(devices));
    if (cJSON_GetArraySize(devices) == 0) {
        const cJSON *reason = cJSON_GetObjectItem(list, "reason");
        ASSERT(cJSON_IsString(reason) && strlen(reason->valuestring) > 10);
        printf("  (no GPU here: %s)\n", reason->valuestring);
        /* The reason says which it is: a worker without CUDA, or a machine
         * without the driver (not the runtime's "insufficient driver"). */
        if (access("/proc/driver/nvidia/version", F_OK) != 0)
            ASSERT(strstr(reason->valuestring, "without CUDA") != NULL ||
                   strstr(reason->valuestring, "no NVIDIA driver is loaded") != NULL);
    } else {
        const cJSON *d = cJSON_GetArrayItem(devices, 0);
        ASSERT(cJSON_IsString(cJSON_GetObjectItem(d, "uuid")));
        ASSERT(cJSON_IsString(cJSON_GetObjectItem(d, "compute_capability")));
        ASSERT(cJSON_GetObjectItem(d, "sm_count")->valueint > 0);
    }
    cJSON_Delete(list);
    return 0;
}

static int test_bad_params_exit_2(void)
{
    char out[4096];

    ASSERT_EQ(run("'" GB_WORKER_BIN "' run smem_stride '{\"stides\":[1]}' 2>&1", out,
                  sizeof(out)),
              2);
    ASSERT(strstr(out, "params.stides") != NULL);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' run smem_stride '{\"strides\":[1,2000]}' 2>&1", out,
                  sizeof(out)),
              2);
    ASSERT(strstr(out, "params.strides[1]") != NULL);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' run nosuch 2>&1", out, sizeof(out)), 2);
    ASSERT(strstr(out, "unknown benchmark") != NULL);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' run transpose '{not json' 2>&1", out, sizeof(out)), 2);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' bogus 2>&1", out, sizeof(out)), 2);
    return 0;
}

/* GPU 1000 exists nowhere: an error event without id, then exit 1. */
static int test_serve_without_device(void)
{
    char out[4096];
    cJSON *line;

    ASSERT_EQ(run("'" GB_WORKER_BIN "' --serve --device 1000 </dev/null 2>/dev/null", out,
                  sizeof(out)),
              1);
    line = cJSON_Parse(out);
    ASSERT(cJSON_IsObject(line));
    ASSERT_STR_EQ(cJSON_GetObjectItem(line, "event")->valuestring, "error");
    ASSERT_STR_EQ(cJSON_GetObjectItem(line, "code")->valuestring, "device_unavailable");
    ASSERT(cJSON_GetObjectItem(line, "id") == NULL);
    cJSON_Delete(line);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' --serve 2>/dev/null", out, sizeof(out)), 2);
    return 0;
}

/* Parses out as one JSON error object of code; 0 when it is one. */
static int expect_json_error(const char *out, const char *code, const char *mentions)
{
    cJSON *o = cJSON_Parse(out);

    ASSERT(cJSON_IsObject(o));
    ASSERT_STR_EQ(cJSON_GetStringValue(cJSON_GetObjectItem(o, "error")), code);
    ASSERT(cJSON_IsString(cJSON_GetObjectItem(o, "message")));
    ASSERT(strstr(cJSON_GetObjectItem(o, "message")->valuestring, mentions) != NULL);
    cJSON_Delete(o);
    return 0;
}

/* A script that asked for --json parses stdout: errors come as JSON there
 * too, whatever the place of --json among the arguments. */
static int test_run_json_errors(void)
{
    char out[8192];

    ASSERT_EQ(run("'" GB_WORKER_BIN "' run --json nosuch 2>/dev/null", out, sizeof(out)), 2);
    ASSERT_EQ(expect_json_error(out, "unknown_benchmark", "nosuch"), 0);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' run smem_stride '{\"stides\":[1]}' --json 2>/dev/null",
                  out, sizeof(out)),
              2);
    ASSERT_EQ(expect_json_error(out, "invalid_params", "params.stides"), 0);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' run --json transpose '{not json' 2>/dev/null", out,
                  sizeof(out)),
              2);
    ASSERT_EQ(expect_json_error(out, "bad_params", "not JSON"), 0);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' run --json 2>/dev/null", out, sizeof(out)), 2);
    ASSERT_EQ(expect_json_error(out, "bad_usage", "usage"), 0);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' run --json smem_stride --device 1000 2>/dev/null", out,
                  sizeof(out)),
              1);
    ASSERT_EQ(expect_json_error(out, "device_unavailable", "GPU 1000"), 0);
    return 0;
}

/* `run` gives the reason `--list` gives: on a machine without the driver
 * both say "no NVIDIA driver is loaded", not the runtime's "insufficient
 * driver"; a worker built without CUDA says so in both. */
static int test_run_says_why_no_gpu(void)
{
    char list_out[65536], out[8192];
    cJSON *list;
    const char *reason;

    ASSERT_EQ(run("'" GB_WORKER_BIN "' --list 2>/dev/null", list_out, sizeof(list_out)), 0);
    list = cJSON_Parse(list_out);
    ASSERT(cJSON_IsObject(list));
    reason = cJSON_GetStringValue(cJSON_GetObjectItem(list, "reason"));
    if (cJSON_GetArraySize(cJSON_GetObjectItem(list, "devices")) > 0 || reason == NULL) {
        printf("  (a GPU is here: nothing to check)\n");
        cJSON_Delete(list);
        return 0;
    }
    ASSERT_EQ(run("'" GB_WORKER_BIN "' run smem_stride 2>&1", out, sizeof(out)), 1);
    if (strstr(reason, "no NVIDIA driver is loaded") != NULL)
        ASSERT(strstr(out, "no NVIDIA driver is loaded") != NULL);
    else if (strstr(reason, "without CUDA") != NULL)
        ASSERT(strstr(out, "without CUDA") != NULL);
    printf("  (run says: %.200s)\n", out);
    cJSON_Delete(list);
    return 0;
}

static int test_help_version(void)
{
    char out[4096];

    ASSERT_EQ(run("'" GB_WORKER_BIN "' --version", out, sizeof(out)), 0);
    ASSERT(strncmp(out, "gpubench-worker ", 16) == 0);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' --help", out, sizeof(out)), 0);
    ASSERT(strstr(out, "--serve --device N") != NULL);
    return 0;
}

/* Issue 26: --help named 3 of the 8 benchmarks `run` takes; it lists them
 * from the table, so every benchmark a user may run is there, and the
 * test-only ones are not. */
static int test_help_names_every_benchmark(void)
{
    char out[8192];
    int named = 0;

    ASSERT_EQ(run("'" GB_WORKER_BIN "' --help", out, sizeof(out)), 0);
    for (size_t i = 0; i < gb_benchmark_count(); i++) {
        const struct gb_benchmark *b = gb_benchmark_at(i);
        if (b->test_only) {
            ASSERT(strstr(out, b->name) == NULL);
            continue;
        }
        if (strstr(out, b->name) == NULL) {
            fprintf(stderr, "--help does not name %s:\n%s", b->name, out);
            return 1;
        }
        named++;
    }
    ASSERT(named >= 8);
    return 0;
}

TEST_MAIN({"--list", test_list},
          {"bad params exit 2", test_bad_params_exit_2},
          {"--serve without the device", test_serve_without_device},
          {"run --json errors are JSON", test_run_json_errors},
          {"run says why there is no GPU", test_run_says_why_no_gpu},
          {"--help and --version", test_help_version},
          {"--help names every benchmark", test_help_names_every_benchmark})
