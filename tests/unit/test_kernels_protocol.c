/*
 * test_kernels_protocol.c - the worker's side of the protocol without a
 * GPU: bounded line reading (worker/line_reader.c), job line parsing
 * (worker/job_line.c) and the benchmark and parameter check every job
 * goes through (worker/job.c, with common/bench_spec.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "job.h"
#include "job_line.h"
#include "line_reader.h"
#include "test.h"

static FILE *input(const char *text)
{
    return fmemopen((void *)text, strlen(text), "r");
}

static int test_lines(void)
{
    FILE *f = input("first\r\n\nsecond\nlast");
    char *buf = NULL;
    size_t cap = 0, len = 0;

    ASSERT(f != NULL);
    ASSERT_EQ(gb_read_line(f, &buf, &cap, 100, &len), GB_LINE_OK);
    ASSERT_STR_EQ(buf, "first"); /* CR dropped */
    ASSERT_EQ(len, 5);
    ASSERT_EQ(gb_read_line(f, &buf, &cap, 100, &len), GB_LINE_OK);
    ASSERT_EQ(len, 0);
    ASSERT_EQ(gb_read_line(f, &buf, &cap, 100, &len), GB_LINE_OK);
    ASSERT_STR_EQ(buf, "second");
    ASSERT_EQ(gb_read_line(f, &buf, &cap, 100, &len), GB_LINE_OK);
    ASSERT_STR_EQ(buf, "last"); /* no final newline: still a line */
    ASSERT_EQ(gb_read_line(f, &buf, &cap, 100, &len), GB_LINE_EOF);
    fclose(f);
    free(buf);
    return 0;
}

static int test_line_too_long(void)
{
    static char text[5000];
    FILE *f;
    char *buf = NULL;
    size_t cap = 0, len = 0;

    memset(text, 'x', 4000);
    strcpy(text + 4000, "\nok\n");
    f = input(text);
    ASSERT(f != NULL);
    ASSERT_EQ(gb_read_line(f, &buf, &cap, 300, &len), GB_LINE_TOO_LONG);
    ASSERT(cap <= 512); /* it stopped growing at the bound */
    ASSERT_EQ(gb_read_line(f, &buf, &cap, 300, &len), GB_LINE_OK);
    ASSERT_STR_EQ(buf, "ok");
    ASSERT_EQ(gb_read_line(f, &buf, &cap, 300, &len), GB_LINE_EOF);
    fclose(f);
    free(buf);
    return 0;
}

static int parse(const char *line, struct gb_job_request *req, struct gb_job_error *err)
{
    memset(err, 0, sizeof(*err));
    return gb_job_line_parse(line, strlen(line), req, err);
}

static int test_job_line(void)
{
    struct gb_job_request req;
    struct gb_job_error err;

    ASSERT_EQ(parse("{\"id\":\"0192-abc\",\"benchmark\":\"smem_stride\","
                    "\"params\":{\"strides\":[1,2]}}",
                    &req, &err),
              0);
    ASSERT_STR_EQ(req.id->valuestring, "0192-abc");
    ASSERT_STR_EQ(req.benchmark, "smem_stride");
    ASSERT(cJSON_IsObject(req.params));
    gb_job_request_free(&req);

    ASSERT_EQ(parse("{\"id\":7,\"benchmark\":\"transpose\"}", &req, &err), 0);
    ASSERT(cJSON_IsNumber(req.id));
    ASSERT(req.params == NULL);
    ASSERT_NEAR(req.timeout_s, 0, 0);
    gb_job_request_free(&req);

    /* the run's time limit, when the daemon sends one */
    ASSERT_EQ(parse("{\"id\":7,\"benchmark\":\"transpose\",\"timeout_s\":240}", &req, &err), 0);
    ASSERT_NEAR(req.timeout_s, 240, 0);
    gb_job_request_free(&req);
    ASSERT_EQ(parse("{\"id\":7,\"benchmark\":\"transpose\",\"timeout_s\":\"x\"}", &req, &err),
              0);
    ASSERT_NEAR(req.timeout_s, 0, 0);
    gb_job_request_free(&req);

    /* cJSON_ParseWithLength: the length bounds the parse */
    memset(&err, 0, sizeof(err));
    ASSERT_EQ(gb_job_line_parse("{\"id\":1,\"benchmark\":\"x\"}garbage", 25, &req, &err), 0);
    gb_job_request_free(&req);
    return 0;
}

static int test_job_line_errors(void)
{
    struct gb_job_request req;
    struct gb_job_error err;

    ASSERT_EQ(parse("not json", &req, &err), -1);
    ASSERT_STR_EQ(err.code, "invalid_job");
    gb_job_request_free(&req);
    ASSERT_EQ(parse("[1,2]", &req, &err), -1);
    ASSERT_STR_EQ(err.code, "invalid_job");
    gb_job_request_free(&req);
    ASSERT_EQ(parse("{\"benchmark\":\"smem_stride\"}", &req, &err), -1);
    ASSERT(strstr(err.message, "id") != NULL);
    ASSERT(req.id == NULL);
    gb_job_request_free(&req);
    /* the id is kept, so the error can be sent for that job */
    ASSERT_EQ(parse("{\"id\":\"r1\"}", &req, &err), -1);
    ASSERT_STR_EQ(req.id->valuestring, "r1");
    ASSERT(strstr(err.message, "benchmark") != NULL);
    gb_job_request_free(&req);
    ASSERT_EQ(parse("{\"id\":\"r2\",\"benchmark\":\"smem_stride\",\"params\":[1]}", &req, &err),
              -1);
    ASSERT_STR_EQ(err.code, "invalid_params");
    ASSERT_STR_EQ(err.field, "params");
    gb_job_request_free(&req);
    return 0;
}

static int test_resolve(void)
{
    struct gb_job_error err;
    cJSON *params, *resolved;

    memset(&err, 0, sizeof(err));
    ASSERT(gb_job_resolve("smem_strid", NULL, &err) == NULL);
    ASSERT_STR_EQ(err.code, "unknown_benchmark");
    ASSERT(strstr(err.message, "smem_strid") != NULL);

    params = cJSON_Parse("{\"stides\":[1,2]}");
    ASSERT(gb_job_resolve("smem_stride", params, &err) == NULL);
    ASSERT_STR_EQ(err.code, "invalid_params");
    ASSERT_STR_EQ(err.field, "params.stides");
    ASSERT(strstr(err.message, "stides") != NULL);
    cJSON_Delete(params);

    params = cJSON_Parse("{\"strides\":[1,0]}");
    ASSERT(gb_job_resolve("smem_stride", params, &err) == NULL);
    ASSERT_STR_EQ(err.field, "params.strides[1]");
    cJSON_Delete(params);

    resolved = gb_job_resolve("smem_stride", NULL, &err);
    ASSERT(resolved != NULL);
    ASSERT_EQ(cJSON_GetArraySize(cJSON_GetObjectItem(resolved, "strides")), 7);
    ASSERT_EQ(cJSON_GetObjectItem(resolved, "samples")->valueint, 20);
    cJSON_Delete(resolved);

    params = cJSON_Parse("{\"n\":1000}");
    ASSERT(gb_job_resolve("transpose", params, &err) == NULL);
    ASSERT_STR_EQ(err.field, "params.n");
    cJSON_Delete(params);
    return 0;
}

/* The test-only benchmarks of the shared table are implemented and take
 * no parameters. */
static int test_test_benchmarks(void)
{
    struct gb_job_error err;
    cJSON *resolved, *params;

    memset(&err, 0, sizeof(err));
    resolved = gb_job_resolve("test_fault", NULL, &err);
    ASSERT(resolved != NULL);
    ASSERT_EQ(cJSON_GetArraySize(resolved), 0);
    cJSON_Delete(resolved);
    params = cJSON_Parse("{\"x\":1}");
    ASSERT(gb_job_resolve("test_hang", params, &err) == NULL);
    ASSERT_STR_EQ(err.field, "params.x");
    cJSON_Delete(params);
    return 0;
}

TEST_MAIN({"lines", test_lines},
          {"line too long", test_line_too_long},
          {"job line", test_job_line},
          {"job line errors", test_job_line_errors},
          {"resolve", test_resolve},
          {"test benchmarks", test_test_benchmarks})
