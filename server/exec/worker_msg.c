/*
 * worker_msg.c - see worker_msg.h.
 */
#include "worker_msg.h"

#include <math.h>
#include <string.h>

#define WORKER_PROGRESS_MAX 1e15

void worker_msg_parse(const char *line, size_t len, const char *run_id,
                      struct worker_msg *m)
{
    const char *event, *id;

    memset(m, 0, sizeof(*m));
    m->event = WM_IGNORED;
    m->root = cJSON_ParseWithLength(line, len);
    event = cJSON_GetStringValue(cJSON_GetObjectItem(m->root, "event"));
    id = cJSON_GetStringValue(cJSON_GetObjectItem(m->root, "id"));
    if (!cJSON_IsObject(m->root) || event == NULL) {
        m->why = "not a protocol message";
        return;
    }
    if (id == NULL || strcmp(id, run_id) != 0) {
        m->why = "a line for another run";
        return;
    }
    if (strcmp(event, "progress") == 0) {
        const cJSON *d = cJSON_GetObjectItem(m->root, "done");
        const cJSON *t = cJSON_GetObjectItem(m->root, "total");
        /* Counts, so whole numbers a long holds; anything else is not
         * progress a person could read, and is refused, not converted. */
        if (!cJSON_IsNumber(d) || !cJSON_IsNumber(t) || !isfinite(d->valuedouble) ||
            !isfinite(t->valuedouble) || d->valuedouble < 0 || t->valuedouble < 0 ||
            d->valuedouble > WORKER_PROGRESS_MAX || t->valuedouble > WORKER_PROGRESS_MAX) {
            m->why = "a progress line without done and total";
            return;
        }
        m->event = WM_PROGRESS;
        m->done = d->valuedouble;
        m->total = t->valuedouble;
        /* Why it waits (a quiet card); shown as it is, bounded by the
         * store.  An empty string says nothing: no message. */
        m->message = cJSON_GetStringValue(cJSON_GetObjectItem(m->root, "message"));
        if (m->message != NULL && m->message[0] == '\0')
            m->message = NULL;
    } else if (strcmp(event, "result") == 0) {
        m->result = cJSON_GetObjectItem(m->root, "result");
        m->meta = cJSON_GetObjectItem(m->root, "meta");
        if (!cJSON_IsObject(m->meta))
            m->meta = NULL;
        m->event = WM_BAD_RESULT;
        if (cJSON_IsObject(m->result) && cJSON_IsArray(cJSON_GetObjectItem(m->result, "rows")))
            m->event = WM_RESULT;
        if (m->event == WM_BAD_RESULT) {
            m->code = "bad_result";
            m->message = "the worker's result has no rows array";
        }
    } else if (strcmp(event, "error") == 0) {
        m->event = WM_ERROR;
        m->code = cJSON_GetStringValue(cJSON_GetObjectItem(m->root, "code"));
        m->message = cJSON_GetStringValue(cJSON_GetObjectItem(m->root, "message"));
        if (m->code == NULL)
            m->code = "worker_error";
        if (m->message == NULL)
            m->message = "(no message)";
        /* A CUDA error leaves the context unusable: the worker exits after
         * it, and must not be handed the next run. */
        m->fatal = strcmp(m->code, "cuda_error") == 0;
    } else {
        m->why = "an unknown event";
    }
}

void worker_msg_free(struct worker_msg *m)
{
    cJSON_Delete(m->root);
    memset(m, 0, sizeof(*m));
}
