/*
 * migrate.h - the schema, built by the numbered files of migrations/,
 * which the build embeds (migrations.c is generated).  Each migration runs
 * in its own transaction together with the PRAGMA user_version that records
 * it, so a crash leaves the database at one version or the next, never
 * between.  A database whose version is newer than this build knows is
 * refused: an older daemon must not write into a schema it does not know.
 */
#ifndef GPUBENCH_STORE_MIGRATE_H
#define GPUBENCH_STORE_MIGRATE_H

#include <sqlite3.h>
#include <stddef.h>

struct migration {
    const char *name; /* "0001_runs.sql" */
    const char *sql;
};

extern const struct migration migrations[];
extern const int migration_count;

/* Brings db up to the newest schema.  Returns 0, or -1 with a sentence in
 * errbuf (a newer database, or a migration that failed, named). */
int migrate_apply(sqlite3 *db, char *errbuf, size_t cap);

/* Brings db up to schema version target (at most the newest), as
 * migrate_apply does: a recovery builds the schema its damaged file was at,
 * copies the rows in, then migrates the rest of the way. */
int migrate_apply_upto(sqlite3 *db, int target, char *errbuf, size_t cap);

/* The schema version db is at (PRAGMA user_version), or -1 on error. */
int migrate_version(sqlite3 *db);

#endif
