/*
 * json_items.h - a cJSON array's items as an array of pointers, built in
 * one walk.  cJSON keeps an array as a linked list, so cJSON_GetArrayItem
 * (i) walks i items: a loop indexing it is quadratic, and two nested ones
 * cubic (issue 33: /metrics over 8,000 cards).  A loop over one array
 * uses cJSON_ArrayForEach; one that needs an index, another item or a
 * walk backwards takes json_items once.
 */
#ifndef GPUBENCH_COMMON_JSON_ITEMS_H
#define GPUBENCH_COMMON_JSON_ITEMS_H

#include <cjson/cJSON.h>

/* The items of array (borrowed: valid while array is unchanged) in a
 * NEW array the caller frees, their count in *n.  NULL with *n 0 for an
 * array without items or a value that is not an array; NULL with *n -1
 * when memory ran out. */
const cJSON **json_items(const cJSON *array, int *n);

#endif
