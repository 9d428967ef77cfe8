/*
 * worker_msg.h - one line from a worker, parsed and checked against the
 * run it is for (the worker protocol, worker/serve.h): progress, the result, or an
 * error.  Anything else (not JSON, another run's id, an unknown event, a
 * result without rows) is classified, never trusted.  Pure, so that the
 * fuzzer (tests/fuzz/) can drive it directly.
 */
#ifndef GPUBENCH_EXEC_WORKER_MSG_H
#define GPUBENCH_EXEC_WORKER_MSG_H

#include <stddef.h>
#include <cjson/cJSON.h>

enum worker_event {
    WM_IGNORED,    /* not for us, or not a protocol message: skip it */
    WM_PROGRESS,   /* done of total */
    WM_RESULT,     /* result (with a rows array) and meta */
    WM_BAD_RESULT, /* a result event whose result has no rows array */
    WM_ERROR       /* code and message; fatal when the GPU is unusable */
};

struct worker_msg {
    enum worker_event event;
    const char *why; /* for WM_IGNORED: a few words, static */
    double done, total;
    const cJSON *result; /* borrowed from root */
    const cJSON *meta;   /* borrowed from root; may be NULL */
    const char *code;    /* borrowed from root, or static */
    const char *message; /* WM_ERROR: the error's; WM_PROGRESS: why the
                            worker is not measuring yet, or NULL */
    int fatal;           /* a CUDA error: the worker exits after it */
    cJSON *root;         /* owned */
};

/* Parses line (len bytes) as a message for run_id.  Always fills m; free
 * it with worker_msg_free. */
void worker_msg_parse(const char *line, size_t len, const char *run_id,
                      struct worker_msg *m);
void worker_msg_free(struct worker_msg *m);

#endif
