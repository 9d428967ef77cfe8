/*
 * test_kernels_cli.c - the built gpubench-worker's command line, run as a
 * process: --list is one JSON object (with a reason when it lists no GPU),
 * bad parameters exit 2 naming the field before any GPU is touched, a GPU
 * that cannot be opened gives an error event and a non-zero exit.  Works
 * with or without a GPU and with either backend.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include <cjson/cJSON.h>

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
                  sizeof(out)), 2);
    ASSERT(strstr(out, "params.stides") != NULL);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' run smem_stride '{\"strides\":[1,2000]}' 2>&1", out,
                  sizeof(out)), 2);
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
                  sizeof(out)), 1);
    line = cJSON_Parse(out);
    ASSERT(cJSON_IsObject(line));
    ASSERT_STR_EQ(cJSON_GetObjectItem(line, "event")->valuestring, "error");
    ASSERT_STR_EQ(cJSON_GetObjectItem(line, "code")->valuestring, "device_unavailable");
    ASSERT(cJSON_GetObjectItem(line, "id") == NULL);
    cJSON_Delete(line);
    ASSERT_EQ(run("'" GB_WORKER_BIN "' --serve 2>/dev/null", out, sizeof(out)), 2);
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

TEST_MAIN({"--list", test_list},
          {"bad params exit 2", test_bad_params_exit_2},
          {"--serve without the device", test_serve_without_device},
          {"--help and --version", test_help_version})
