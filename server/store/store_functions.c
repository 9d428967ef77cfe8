/*
 * store_functions.c - see store_functions.h.  The hook is one pointer,
 * set by the composition before any store is opened and read by every
 * thread that opens a connection: an atomic, so that no lock is needed.
 */
#include "store_functions.h"

#include <stdatomic.h>

static _Atomic(store_functions_fn) hook;

void store_functions_set(store_functions_fn fn)
{
    atomic_store(&hook, fn);
}

int store_functions_register(sqlite3 *db)
{
    store_functions_fn fn = atomic_load(&hook);

    return fn ? fn(db) : 0;
}
