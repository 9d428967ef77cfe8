/*
 * core_includes_store.c - a file built as server/core is (gb_core's include
 * path, linked to nothing above it) that includes the store's header.  The
 * test layer_refuses_upward_include builds it and passes only when the
 * build refuses it for want of store.h: an include that goes up does not
 * compile.  Never part of a real target.
 */
#include "store.h"

int layer_probe_upward(void)
{
    return STORE_OK;
}
