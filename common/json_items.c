/*
 * json_items.c - see json_items.h.
 */
#include "json_items.h"

#include <stdlib.h>

const cJSON **json_items(const cJSON *array, int *n)
{
    int count = cJSON_IsArray(array) ? cJSON_GetArraySize(array) : 0, i = 0;
    const cJSON **items, *item;

    *n = 0;
    if (count == 0)
        return NULL;
    if ((items = malloc(sizeof(*items) * (size_t)count)) == NULL) {
        *n = -1;
        return NULL;
    }
    cJSON_ArrayForEach(item, array)
        items[i++] = item;
    *n = i;
    return items;
}
