/*
 * job_error.c - filling struct gb_job_error; see job_error.h.
 */
#include "job_error.h"

#include <stdarg.h>
#include <stdio.h>

int gb_job_fail(struct gb_job_error *err, const char *code, const char *fmt, ...)
{
    va_list ap;

    snprintf(err->code, sizeof(err->code), "%s", code);
    err->field[0] = '\0';
    err->fatal = 0;
    va_start(ap, fmt);
    vsnprintf(err->message, sizeof(err->message), fmt, ap);
    va_end(ap);
    return -1;
}

int gb_job_fail_cuda(struct gb_job_error *err, const struct gb_cuda_error *cuda)
{
    gb_job_fail(err, "cuda_error", "%s failed: %s: %s%s", cuda->call, cuda->name,
                cuda->text,
                cuda->fatal ? " (the GPU context is unusable; the worker exits)" : "");
    err->fatal = cuda->fatal;
    return -1;
}

int gb_job_fail_params(struct gb_job_error *err, const struct gb_error *spec)
{
    gb_job_fail(err, "invalid_params", "%s", spec->message);
    snprintf(err->field, sizeof(err->field), "%s", spec->field);
    return -1;
}
