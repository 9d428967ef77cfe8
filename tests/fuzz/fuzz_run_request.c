/*
 * fuzz_run_request.c - libFuzzer harness for run_request_parse, the body
 * of POST /runs.  The first byte picks the daemon's settings (whether the
 * test-only benchmarks are offered, and --run-timeout); the rest is the
 * body, handed over without a NUL after it, exactly as the HTTP layer has
 * it, so a read past its end is an ASan report.
 *
 * Besides "no crash, no leak, no UB", it checks what run_request.h
 * promises: on success a known, offered benchmark, resolved params that
 * resolve again to themselves, a timeout within 1..--run-timeout and a
 * label of at most RUN_LABEL_MAX bytes; on failure -1 and an error filled.
 */
#include "fuzz_common.h"
#include "run_request.h"

#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct run_request r;
    struct gb_error err;
    int test_benchmarks, max_timeout, rc;

    if (size < 1)
        return 0;
    test_benchmarks = data[0] & 1;
    max_timeout = (data[0] & 2) ? 300 : 1 + (data[0] >> 2);
    data++;
    size--;

    fuzz_error_poison(&err);
    rc = run_request_parse((const char *)data, size, max_timeout, test_benchmarks, &r, &err);
    if (rc == 0) {
        struct gb_error again_err;
        cJSON *again;

        CHECK(r.body != NULL && cJSON_IsObject(r.body));
        CHECK(r.bench != NULL && gb_benchmark_find(r.bench->name) == r.bench);
        CHECK(test_benchmarks || !r.bench->test_only);
        CHECK(cJSON_IsObject(r.params));
        CHECK(r.timeout_s >= 1 && r.timeout_s <= max_timeout);
        CHECK(r.label == NULL || strlen(r.label) <= RUN_LABEL_MAX);
        CHECK(r.device == NULL || cJSON_IsString(r.device) || cJSON_IsNumber(r.device));
        /* What the daemon stores is a fixed point of the validation. */
        again = gb_params_resolve(r.bench, r.params, &again_err);
        CHECK(again != NULL && cJSON_Compare(again, r.params, 1));
        cJSON_Delete(again);
        {
            double bytes = gb_params_device_bytes(r.bench, r.params);
            CHECK(bytes >= 0 && bytes == bytes);
        }
    } else {
        CHECK(rc == -1);
        fuzz_error_check(&err);
    }
    run_request_free(&r);
    return 0;
}
