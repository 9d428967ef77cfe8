/*
 * store_reply.c - the one mapping from the store's failures (store.h) to
 * HTTP answers, so that every route says a full disk and a damaged
 * database the same way: 507 storage_full with Retry-After (nothing was
 * changed; the same request will work once there is space), 500
 * database_corrupt (never a 200 with parts missing), else 500 internal.
 * The store knows no HTTP; the handlers know no SQLite.
 */
#include "handlers.h"
#include "store.h"

#include <stdio.h>

/* A full disk is usually a matter of minutes (logs rotated, a file
 * removed); a client retrying sooner only adds load. */
#define STORAGE_FULL_RETRY_S 30

void reply_store_error(struct http_reply *rep, int rc, const char *what)
{
    switch (rc) {
    case STORE_NO_SPACE:
        rep->retry_after = STORAGE_FULL_RETRY_S;
        reply_error(rep, 507, "storage_full", "",
                    "%s: the disk holding the database is full; nothing was "
                    "changed. Free space on it and try again",
                    what);
        break;
    case STORE_CORRUPT:
        reply_error(rep, 500, "database_corrupt", "",
                    "%s: the database file is damaged. Stop the daemon, run "
                    "gpubenchd --check-db --db FILE, and restore a backup or "
                    "recover the file (see the README)",
                    what);
        break;
    case STORE_NOT_FOUND:
        reply_error(rep, 404, "not_found", "", "%s: not found", what);
        break;
    default:
        reply_error(rep, 500, "internal", "", "%s (see the daemon's log)", what);
        break;
    }
}

void reply_card_error(struct http_reply *rep, int rc, const char *uuid, const char *what)
{
    if (rc == STORE_NOT_FOUND)
        reply_error(rep, 404, "not_found", "",
                    "no card %.80s: neither this node's nor in its store", uuid);
    else
        reply_store_error(rep, rc, what);
}
