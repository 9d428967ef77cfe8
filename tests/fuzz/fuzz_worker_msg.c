/*
 * fuzz_worker_msg.c - libFuzzer harness for worker_msg_parse, one line a
 * worker printed (any bytes: a worker can crash mid-line or print junk).
 * The run it is checked against is RUN_ID, which the seeds use.
 *
 * After parsing, the harness does with the message what gpu_pool.c's
 * handle_line does with it (prints result and meta, reads code and
 * message, converts progress to long for store_set_progress), so a value
 * the parser lets through that the consumer cannot take is found here too.
 * Properties (worker_msg.h): a result has a rows array; an error has a
 * code and a message; fatal only for cuda_error; progress is finite and
 * not negative.
 */
#include "fuzz_common.h"
#include "worker_msg.h"

#include <math.h>
#include <stdint.h>

#define RUN_ID "01a22bc6-6952-7000-8a28-ba6ca31cf8b8"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct worker_msg m;
    char *text;

    worker_msg_parse((const char *)data, size, RUN_ID, &m);
    switch (m.event) {
    case WM_IGNORED:
        CHECK(m.why != NULL && m.why[0] != '\0');
        break;
    case WM_PROGRESS: {
        volatile long done, total;
        CHECK(isfinite(m.done) && isfinite(m.total) && m.done >= 0 && m.total >= 0);
        /* a message, when kept, is a non-empty string */
        CHECK(m.message == NULL || m.message[0] != '\0');
        /* gpu_pool.c: store_set_progress(store, id, (long)m.done, (long)m.total, m.message) */
        done = (long)m.done;
        total = (long)m.total;
        (void)done;
        (void)total;
        break;
    }
    case WM_RESULT:
        CHECK(cJSON_IsObject(m.result));
        CHECK(cJSON_IsArray(cJSON_GetObjectItem(m.result, "rows")));
        CHECK(m.meta == NULL || cJSON_IsObject(m.meta));
        text = cJSON_PrintUnformatted(m.result);
        CHECK(text != NULL);
        free(text);
        if (m.meta) {
            text = cJSON_PrintUnformatted(m.meta);
            CHECK(text != NULL);
            free(text);
        }
        break;
    case WM_BAD_RESULT:
    case WM_ERROR:
        CHECK(m.code != NULL && m.message != NULL);
        CHECK(strlen(m.code) + strlen(m.message) < SIZE_MAX);
        CHECK(!m.fatal || strcmp(m.code, "cuda_error") == 0);
        break;
    default:
        CHECK(!"an event worker_msg.h does not list");
    }
    worker_msg_free(&m);
    return 0;
}
