/*
 * migrate.c - see migrate.h.
 */
#include "migrate.h"
#include "store_functions.h"
#include "log.h"
#include "timeutil.h"

#include <stdio.h>

int migrate_version(sqlite3 *db)
{
    sqlite3_stmt *st = NULL;
    int version = -1;

    if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &st, NULL) != SQLITE_OK)
        return -1;
    if (sqlite3_step(st) == SQLITE_ROW)
        version = sqlite3_column_int(st, 0);
    sqlite3_finalize(st);
    return version;
}

/* One migration and its version bump, all or nothing. */
static int apply_one(sqlite3 *db, int index, char *errbuf, size_t cap)
{
    char bump[64];
    char *msg = NULL;
    int64_t t0 = time_mono_ms();
    int rc;

    snprintf(bump, sizeof(bump), "PRAGMA user_version = %d", index + 1);
    /* said before, not only after: an index over a large store's runs
     * takes a while (0016 on a million runs, 14.6 GB: 41 s), during which
     * the daemon does not answer yet */
    log_info("database: applying migration %s", migrations[index].name);
    rc = sqlite3_exec(db, "BEGIN IMMEDIATE", NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        goto fail;
    rc = sqlite3_exec(db, migrations[index].sql, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        goto rollback;
    rc = sqlite3_exec(db, bump, NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        goto rollback;
    rc = sqlite3_exec(db, "COMMIT", NULL, NULL, &msg);
    if (rc != SQLITE_OK)
        goto rollback;
    log_info("database: applied migration %s in %.1f s", migrations[index].name,
             (double)(time_mono_ms() - t0) / 1000.0);
    return 0;

rollback:
    sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
fail:
    snprintf(errbuf, cap, "migration %s failed: %s", migrations[index].name,
             msg ? msg : sqlite3_errmsg(db));
    sqlite3_free(msg);
    return -1;
}

int migrate_apply(sqlite3 *db, char *errbuf, size_t cap)
{
    return migrate_apply_upto(db, migration_count, errbuf, cap);
}

int migrate_apply_upto(sqlite3 *db, int target, char *errbuf, size_t cap)
{
    int version = migrate_version(db);

    if (version < 0) {
        snprintf(errbuf, cap, "cannot read the schema version: %s",
                 sqlite3_errmsg(db));
        return -1;
    }
    if (version > migration_count) {
        snprintf(errbuf, cap,
                 "the database is at schema version %d, written by a newer "
                 "gpubench; this build knows versions up to %d. Upgrade "
                 "gpubench, or point --db at another file.",
                 version, migration_count);
        return -1;
    }
    /* Migrations may call the key's functions (0009_method.sql). */
    if (version < target && version < migration_count && store_functions_register(db) != 0) {
        snprintf(errbuf, cap, "cannot register the key's SQL functions: %s", sqlite3_errmsg(db));
        return -1;
    }
    for (int i = version; i < target && i < migration_count; i++)
        if (apply_one(db, i, errbuf, cap) != 0)
            return -1;
    return 0;
}
