/*
 * timing.c - frees the timings that the measuring backends fill
 * (gb_kernels.h).  They are plain heap memory whichever backend made them,
 * so one definition serves the CUDA backend, the C-only one and the tests
 * that build timings by hand.
 */
#include "gb_kernels.h"

#include <stdlib.h>
#include <string.h>

void gb_smem_timing_free(struct gb_smem_timing *t)
{
    for (int i = 0; t->rows && i < t->row_count; i++)
        free(t->rows[i].ms);
    free(t->rows);
    free(t->busy_cycles);
    free(t->clock_mhz);
    free(t->counters);
    t->rows = NULL;
    t->counters = NULL;
    t->busy_cycles = t->clock_mhz = NULL;
    t->row_count = 0;
}

void gb_transpose_timing_free(struct gb_transpose_timing *t)
{
    free(t->memcpy_d2d.ms);
    for (int i = 0; t->kernels && i < t->count; i++)
        free(t->kernels[i].ms);
    free(t->kernels);
    free(t->verify);
    free(t->counters);
    memset(t, 0, sizeof(*t));
    t->failed_kernel = -1;
}
