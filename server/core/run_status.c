/*
 * run_status.c - see run_status.h.
 */
#include "run_status.h"

#include <string.h>

const char *const run_status_names[RUN_STATUS_COUNT + 1] = {
    [RUN_QUEUED] = "queued",
    [RUN_RUNNING] = "running",
    [RUN_DONE] = "done",
    [RUN_FAILED] = "failed",
    [RUN_CANCELLED] = "cancelled",
    [RUN_STATUS_COUNT] = NULL,
};

int run_status_parse(const char *name)
{
    if (name == NULL)
        return -1;
    for (int i = 0; i < RUN_STATUS_COUNT; i++)
        if (strcmp(name, run_status_names[i]) == 0)
            return i;
    return -1;
}

int run_status_is_final(const char *name)
{
    int s = run_status_parse(name);

    return s == RUN_DONE || s == RUN_FAILED || s == RUN_CANCELLED;
}
