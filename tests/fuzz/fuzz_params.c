/*
 * fuzz_params.c - libFuzzer harness for gb_params_resolve, the one
 * validation of every benchmark's params (common/bench_spec.c), used by
 * POST /runs and by the worker's second check of each job.  The first byte
 * picks the benchmark (every one in the table, test-only ones included);
 * the rest is the params object as JSON.
 *
 * Properties (bench_spec.h): on success a NEW object with every parameter
 * of the benchmark and nothing else, which resolves again to itself (what
 * is stored is what is run), and a finite, non-negative device-memory
 * estimate; on failure NULL and an error whose field is under "params".
 */
#include "fuzz_common.h"

#include <math.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    const struct gb_benchmark *b;
    struct gb_error err;
    cJSON *params, *out;

    if (size < 1 || gb_benchmark_count() == 0)
        return 0;
    b = gb_benchmark_at(data[0] % gb_benchmark_count());
    CHECK(b != NULL);
    params = cJSON_ParseWithLength((const char *)data + 1, size - 1);
    if (params == NULL && size > 1)
        return 0; /* not JSON: the HTTP layer refuses it before this */

    fuzz_error_poison(&err);
    out = gb_params_resolve(b, params, &err);
    if (out != NULL) {
        struct gb_error err2;
        cJSON *again, *item;
        int n = 0;

        CHECK(cJSON_IsObject(out));
        for (const struct gb_param *p = b->params; p->name; p++)
            CHECK(p->default_json == NULL || cJSON_GetObjectItemCaseSensitive(out, p->name));
        cJSON_ArrayForEach(item, out) {
            const struct gb_param *p = b->params;
            while (p->name && strcmp(p->name, item->string) != 0)
                p++;
            CHECK(p->name != NULL); /* nothing the table does not know */
            n++;
        }
        again = gb_params_resolve(b, out, &err2);
        CHECK(again != NULL && cJSON_Compare(again, out, 1));
        cJSON_Delete(again);
        {
            double bytes = gb_params_device_bytes(b, out);
            CHECK(isfinite(bytes) && bytes >= 0);
        }
        (void)n;
        cJSON_Delete(out);
    } else {
        fuzz_error_check(&err);
        CHECK(strncmp(err.field, "params", 6) == 0);
    }
    cJSON_Delete(params);
    return 0;
}
