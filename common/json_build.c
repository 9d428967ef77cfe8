/*
 * json_build.c - see json_build.h.  Each call checks the builder, its
 * parent and what cJSON answered, so that a caller need not.
 */
#include "json_build.h"

#include <math.h>

static int usable(struct json_build *b, const cJSON *obj)
{
    if (b->failed)
        return 0;
    if (obj == NULL) {
        b->failed = 1;
        return 0;
    }
    return 1;
}

static cJSON *created(struct json_build *b, cJSON *item)
{
    if (b->failed) {
        cJSON_Delete(item);
        return NULL;
    }
    if (item == NULL)
        b->failed = 1;
    return item;
}

cJSON *jb_new_object(struct json_build *b)
{
    return created(b, b->failed ? NULL : cJSON_CreateObject());
}

cJSON *jb_new_array(struct json_build *b)
{
    return created(b, b->failed ? NULL : cJSON_CreateArray());
}

/* The one place an item joins an object: owned by obj, or deleted. */
static cJSON *attach(struct json_build *b, cJSON *obj, const char *name, cJSON *item)
{
    if (!usable(b, obj) || item == NULL) {
        b->failed = 1;
        cJSON_Delete(item);
        return NULL;
    }
    if (!cJSON_AddItemToObject(obj, name, item)) {
        b->failed = 1;
        cJSON_Delete(item);
        return NULL;
    }
    return item;
}

cJSON *jb_object(struct json_build *b, cJSON *obj, const char *name)
{
    return usable(b, obj) ? attach(b, obj, name, cJSON_CreateObject()) : NULL;
}

cJSON *jb_array(struct json_build *b, cJSON *obj, const char *name)
{
    return usable(b, obj) ? attach(b, obj, name, cJSON_CreateArray()) : NULL;
}

void jb_string(struct json_build *b, cJSON *obj, const char *name, const char *v)
{
    if (usable(b, obj))
        attach(b, obj, name, v ? cJSON_CreateString(v) : cJSON_CreateNull());
}

void jb_number(struct json_build *b, cJSON *obj, const char *name, double v)
{
    if (!isfinite(v)) {
        b->failed = 1;
        return;
    }
    if (usable(b, obj))
        attach(b, obj, name, cJSON_CreateNumber(v));
}

void jb_number_or_null(struct json_build *b, cJSON *obj, const char *name, double v)
{
    if (isfinite(v))
        jb_number(b, obj, name, v);
    else
        jb_null(b, obj, name);
}

void jb_bool(struct json_build *b, cJSON *obj, const char *name, int v)
{
    if (usable(b, obj))
        attach(b, obj, name, cJSON_CreateBool(v != 0));
}

void jb_null(struct json_build *b, cJSON *obj, const char *name)
{
    if (usable(b, obj))
        attach(b, obj, name, cJSON_CreateNull());
}

void jb_item(struct json_build *b, cJSON *obj, const char *name, cJSON *item)
{
    attach(b, obj, name, item);
}

void jb_push(struct json_build *b, cJSON *arr, cJSON *item)
{
    if (!usable(b, arr) || item == NULL || !cJSON_AddItemToArray(arr, item)) {
        b->failed = 1;
        cJSON_Delete(item);
    }
}

void jb_copy(struct json_build *b, cJSON *obj, const cJSON *from, const char *name)
{
    const cJSON *v = cJSON_GetObjectItem(from, name);

    if (v != NULL)
        attach(b, obj, name, b->failed ? NULL : cJSON_Duplicate(v, 1));
}

void jb_fail(struct json_build *b)
{
    b->failed = 1;
}

int jb_failed(const struct json_build *b)
{
    return b->failed;
}
