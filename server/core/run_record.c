/*
 * run_record.c - see run_record.h.
 */
#include "run_record.h"

#include <stdlib.h>
#include <string.h>

int run_record_set(char **field, const char *s)
{
    free(*field);
    *field = NULL;
    if (s == NULL)
        return 0;
    *field = strdup(s);
    return *field ? 0 : -1;
}

int run_record_take_trees_as(struct run_record *r, cJSON *results, char *results_text,
                             cJSON *meta, char *meta_text)
{
    cJSON_Delete(r->results);
    cJSON_Delete(r->meta);
    free(r->results_text);
    free(r->meta_text);
    r->results = results;
    r->meta = meta;
    if (results_text == NULL && results)
        results_text = cJSON_PrintUnformatted(results);
    if (meta_text == NULL)
        meta_text = meta ? cJSON_PrintUnformatted(meta) : strdup("{}");
    r->results_text = results ? results_text : NULL;
    if (results == NULL)
        free(results_text);
    r->meta_text = meta_text;
    if ((results && r->results_text == NULL) || r->meta_text == NULL)
        return -1;
    return 0;
}

int run_record_take_trees(struct run_record *r, cJSON *results, cJSON *meta)
{
    return run_record_take_trees_as(r, results, NULL, meta, NULL);
}

void run_record_drop_trees(struct run_record *r)
{
    cJSON_Delete(r->results);
    cJSON_Delete(r->meta);
    r->results = NULL;
    r->meta = NULL;
}

void run_record_clear_judged(struct run_record *r)
{
    struct run_judged *j = &r->judged;

    free(j->validity);
    free(j->checks);
    free(j->summary);
    free(j->digest);
    free(j->verdict_key);
    free(j->driver_version);
    free(j->cuda_version);
    free(j->build);
    free(j->verdicts);
    for (int i = 0; i < j->n_points; i++)
        free(j->points[i].row_key);
    free(j->points);
    memset(j, 0, sizeof(*j));
}

void run_record_clear(struct run_record *r)
{
    char **strings[] = {&r->id, &r->benchmark, &r->params, &r->label, &r->batch,
                        &r->host, &r->device_uuid, &r->device_name, &r->status,
                        &r->created_at, &r->started_at, &r->finished_at, &r->error_code,
                        &r->error_message, &r->origin, &r->damaged_at_origin,
                        &r->results_text, &r->meta_text};

    for (size_t i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
        free(*strings[i]);
    cJSON_Delete(r->results);
    cJSON_Delete(r->meta);
    run_record_clear_judged(r);
    memset(r, 0, sizeof(*r));
}
