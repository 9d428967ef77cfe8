/*
 * json_build.h - building a cJSON tree whose failures stick, as dynbuf's
 * do: a producer of a stored or served run (a run's end, a row read back,
 * an export line, a pull page) adds field after field and asks once, at
 * the end, whether every one of them made it.  cJSON's own Add* calls
 * return NULL on an allocation failure and are easy to leave unchecked;
 * a run with a field missing must never be stored or served as whole.
 *
 * Every call takes the builder first and does nothing more once it has
 * failed (so a NULL parent from a failed jb_object is harmless).  Items
 * handed in (jb_item, jb_push) are owned by the tree from then on, or
 * deleted when they cannot be added: the caller never frees them.
 *
 *   struct json_build b = {0};
 *   cJSON *run = jb_new_object(&b);
 *   jb_string(&b, run, "id", id);
 *   jb_number(&b, jb_object(&b, run, "device"), "index", 0);
 *   if (jb_failed(&b)) { cJSON_Delete(run); return NULL; }
 */
#ifndef GPUBENCH_COMMON_JSON_BUILD_H
#define GPUBENCH_COMMON_JSON_BUILD_H

#include <cjson/cJSON.h>

struct json_build {
    int failed; /* an addition failed since the builder was set up */
};

/* A NEW empty object or array, or NULL (and the builder failed). */
cJSON *jb_new_object(struct json_build *b);
cJSON *jb_new_array(struct json_build *b);

/* Adds an empty object or array under name to obj: the new child, or NULL
 * (and the builder failed) when obj is NULL or memory ran out. */
cJSON *jb_object(struct json_build *b, cJSON *obj, const char *name);
cJSON *jb_array(struct json_build *b, cJSON *obj, const char *name);

/* Adds one value under name to obj.  jb_string adds null for a NULL v;
 * jb_number refuses a value that is not finite (JSON has no NaN). */
void jb_string(struct json_build *b, cJSON *obj, const char *name, const char *v);
void jb_number(struct json_build *b, cJSON *obj, const char *name, double v);
void jb_bool(struct json_build *b, cJSON *obj, const char *name, int v);
void jb_null(struct json_build *b, cJSON *obj, const char *name);

/* jb_number, but null for a value that is not finite (as cJSON prints
 * one): for a number read from outside, where NaN or inf is not a
 * failure of the builder but what the input held. */
void jb_number_or_null(struct json_build *b, cJSON *obj, const char *name, double v);

/* Adds item (owned from now on; deleted if it cannot be added) under name
 * to obj, or at the end of array arr.  A NULL item fails the builder: it
 * is what a failed cJSON_Create* or cJSON_Duplicate gave. */
void jb_item(struct json_build *b, cJSON *obj, const char *name, cJSON *item);
void jb_push(struct json_build *b, cJSON *arr, cJSON *item);

/* Adds a deep copy of from's member name to obj under the same name,
 * when from has one; nothing (and no failure) when it has none. */
void jb_copy(struct json_build *b, cJSON *obj, const cJSON *from, const char *name);

/* Marks the builder failed (a step of the caller's own that failed). */
void jb_fail(struct json_build *b);

/* 1 when any addition failed: the tree is not the whole one meant. */
int jb_failed(const struct json_build *b);

#endif
