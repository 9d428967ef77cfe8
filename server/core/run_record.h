/*
 * run_record.h - a finished run as one typed record: what every end of a
 * run (measured here, imported, pulled from a peer) hands the store.
 *
 * The path of a run's end (README "How it is built"):
 *   worker line --parse once--> struct run_record (envelope typed; results
 *   and meta kept as parsed trees beside their text) --runs/run_finish.c
 *   judges once (validity, checks, summary, digest, key, method; verdicts
 *   for a run measured here)--> store_finish_run / store_import_runs,
 *   which only write it.
 * So the results are parsed once and printed once, nothing is judged under
 * the store's writer lock, and a measured run and a foreign one are judged
 * by the same code.
 *
 * Ownership: the record owns every pointer in it (strings malloc'ed, trees
 * cJSON's); run_record_clear frees them all and leaves it zeroed.  NULL
 * means "none" for every field.  The judged fields are filled by
 * run_finish (runs/) and are NULL until then.
 */
#ifndef GPUBENCH_CORE_RUN_RECORD_H
#define GPUBENCH_CORE_RUN_RECORD_H

#include <cjson/cJSON.h>

/* One row of a valid done run as its change-point series takes it
 * (judge/change_series.h): the row's key value as JSON text and the log
 * of its median per unit of work. */
struct run_point {
    char *row_key;
    double x;
};

/* What judging found, as the store keeps it: texts to write, numbers to
 * bind.  Nothing here is read back from SQL. */
struct run_judged {
    char *validity;       /* gb_validity_judge's object, as JSON text */
    int valid;            /* 1 valid, 0 not, -1 unknown */
    char *checks;         /* gb_checks_judge's array, or NULL: no floors */
    int checks_failed;    /* how many failed; -1 where there are no checks */
    char *summary;        /* the results' summary without its samples */
    char *digest;         /* compare_row_digest, what comparisons read */
    char *verdict_key;    /* the comparability key (compare.h), or NULL */
    long long method;     /* the method it was measured by; 0: unknown */
    char *driver_version; /* from meta, the columns reads use unparsed */
    char *cuda_version;
    char *build;
    char *verdicts; /* history and fleet verdicts (measured here only) */
    /* A valid done run's rows for its change-point series:
     * none for a run that is not valid, not done, or has no card UUID. */
    struct run_point *points;
    int n_points;
};

struct run_record {
    /* The envelope.  A measured run's end carries only id, status,
     * finished_at and error: the rest of its row is the store's already. */
    char *id;
    char *benchmark;
    char *params; /* JSON text */
    char *label;
    char *batch;
    char *host;
    int has_device_index;
    int device_index;
    char *device_uuid;
    char *device_name;
    char *status; /* done, failed or cancelled */
    int timeout_s;
    char *created_at;
    char *started_at;
    char *finished_at;
    char *error_code;
    char *error_message;
    char *origin;
    long long method; /* as the run carried it; 0: not given */
    /* A foreign run its node's database held damaged: the node's
     * "damaged_columns" as JSON text; NULL for a whole run. */
    char *damaged_at_origin;
    /* What it measured: the trees (owned) and their text, printed once. */
    cJSON *results;
    cJSON *meta;
    char *results_text;
    char *meta_text;
    struct run_judged judged;
};

/* Copies s into *field (freeing what was there); NULL s sets NULL.
 * 0, or -1 when memory ran out (the field is then NULL). */
int run_record_set(char **field, const char *s);

/* Takes results and meta (owned from now on, whatever the outcome) and
 * prints each once into results_text and meta_text (meta NULL: "{}").  0,
 * or -1 when memory ran out. */
int run_record_take_trees(struct run_record *r, cJSON *results, cJSON *meta);

/* As run_record_take_trees, with each tree's text given (malloc'ed, owned
 * from now on whatever the outcome) where it is at hand: the bytes the
 * tree was parsed from (json_span.h), kept instead of printed again.  A
 * NULL text is printed from its tree. */
int run_record_take_trees_as(struct run_record *r, cJSON *results, char *results_text,
                             cJSON *meta, char *meta_text);

/* Deletes the results and meta trees, keeping their texts: a record
 * judged and only waiting to be written (run_batch_add) needs no more. */
void run_record_drop_trees(struct run_record *r);

/* Frees what judging filled in and zeroes r->judged. */
void run_record_clear_judged(struct run_record *r);

/* Frees everything the record holds and zeroes it. */
void run_record_clear(struct run_record *r);

#endif
