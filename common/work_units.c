/*
 * work_units.c - the table of work units; see work_units.h.
 *
 * Read from the worker's code (kernels/): the shared-memory benchmarks
 * store a sample as the event time of iterations_per_sample trips of the
 * kernel's loop (smem_read.cu takes samples with per_launch 0), so their
 * times grow with the calibrated count; every other benchmark takes its
 * samples through gb_measure_op or with per_launch 1 (measure.cu), which
 * divides each sample by its work, so its times are already per unit and
 * the count it reports (work_per_sample, launches_per_sample) says only
 * how many units were timed together.
 */
#include "work_units.h"

#include "result_fields.h"

#include <string.h>

static const struct gb_work_unit units[] = {
    {"smem_stride", "iteration", "iterations_per_sample", "launch", "iterations_per_sample", 0,
     "one trip of the kernel's loop: every thread does loads_per_iteration shared loads"},
    {"smem_pattern", "iteration", "iterations_per_sample", "launch", "iterations_per_sample", 0,
     "one trip of the kernel's loop: every thread does loads_per_iteration shared loads"},
    {"transpose", "launch", "launches_per_sample", NULL, NULL, 1,
     "one launch of the variant's kernel (one cudaMemcpy for the copy ceiling)"},
    {"gmem_stride", "pass", "work_per_sample", NULL, NULL, 1,
     "one trip of the kernel's loop over the strided words"},
    {"hbm_bandwidth", "launch", "work_per_sample", NULL, NULL, 1,
     "one launch of the STREAM kernel, or one cudaMemcpyAsync"},
    {"compute_peak", "work unit", "work_per_sample", NULL, NULL, 1,
     "one trip of the FMA kernel's loop, or one GEMM launch"},
    {"pcie_bandwidth", "copy", "work_per_sample", NULL, NULL, 1,
     "one cudaMemcpyAsync of the row's size"},
    {"p2p_bandwidth", "copy", "work_per_sample", NULL, NULL, 1,
     "one copy of the row's size (both directions at once where bidirectional)"},
    {"nccl_allreduce", "all-reduce", "work_per_sample", NULL, NULL, 1,
     "one ncclAllReduce of the row's bytes on every GPU (one group)"},
};

static const struct gb_work_unit per_sample = {
    NULL,
    "sample",
    NULL,
    NULL,
    NULL,
    1,
    "one sample, as measured",
};

const struct gb_work_unit *gb_work_unit(const char *benchmark)
{
    for (size_t i = 0; benchmark && i < sizeof(units) / sizeof(units[0]); i++)
        if (strcmp(units[i].benchmark, benchmark) == 0)
            return &units[i];
    return &per_sample;
}

/* A count read from obj's field name, or 0 when it is not one. */
static double count_at(const cJSON *obj, const char *name)
{
    const cJSON *v = name ? cJSON_GetObjectItem(obj, name) : NULL;

    return cJSON_IsNumber(v) && v->valuedouble >= 1 ? v->valuedouble : 0;
}

double gb_work_units(const char *benchmark, const cJSON *summary, const cJSON *row)
{
    const struct gb_work_unit *u = gb_work_unit(benchmark);
    double n;

    if (u->per_unit)
        return 1;
    if ((n = count_at(row, u->row_field)) > 0)
        return n;
    if (u->summary_object &&
        (n = count_at(cJSON_GetObjectItem(summary, u->summary_object), u->summary_field)) > 0)
        return n;
    return 1;
}

int gb_field_is_time(const char *field)
{
    const struct gb_result_field *f = gb_result_field_find(field);

    return f != NULL && strcmp(f->unit, "ms") == 0;
}

cJSON *gb_work_unit_describe(const char *benchmark)
{
    const struct gb_work_unit *u = gb_work_unit(benchmark);
    cJSON *o = cJSON_CreateObject();

    /* where the page finds a run's count, to chart runs per unit too */
    if (o == NULL || !cJSON_AddStringToObject(o, "unit", u->unit) ||
        !cJSON_AddStringToObject(o, "help", u->help) ||
        !cJSON_AddBoolToObject(o, "per_unit", u->per_unit) ||
        !(u->row_field ? cJSON_AddStringToObject(o, "row_field", u->row_field)
                       : cJSON_AddNullToObject(o, "row_field")) ||
        !(u->summary_object ? cJSON_AddStringToObject(o, "summary_object", u->summary_object)
                            : cJSON_AddNullToObject(o, "summary_object")) ||
        !(u->summary_field ? cJSON_AddStringToObject(o, "summary_field", u->summary_field)
                           : cJSON_AddNullToObject(o, "summary_field"))) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}
