/*
 * store_copy.h - the database file as a whole, read beside a running
 * daemon or without one: gpubenchd --check-db, --backup and --recover.
 *
 * The copies (--backup, --recover) write DEST under a temporary name in
 * DEST's folder, check the copy (PRAGMA integrity_check, a gpubench
 * schema, its runs counted) and only then link it into place, so DEST
 * is either absent or a whole, checked database, never a partial file;
 * an existing DEST is never overwritten.
 * Neither takes the daemon's lock (db_lock.h): the source is only read.
 * Neither uses a function a daemon registers on its own connections.
 */
#ifndef GPUBENCH_STORE_STORE_COPY_H
#define GPUBENCH_STORE_STORE_COPY_H

#include <stddef.h>
#include <stdio.h>

enum store_file_state {
    STORE_FILE_INTACT,
    STORE_FILE_DAMAGED,
    STORE_FILE_NOT_GPUBENCH, /* empty, not SQLite, or another program's */
};

struct store_file_check {
    enum store_file_state state;
    long runs;          /* intact: the runs it holds */
    int schema_version; /* intact: its PRAGMA user_version */
    char why[320];      /* not gpubench: what it is instead */
};

/* Runs SQLite's integrity check on the database at path, opened read-only
 * (it neither takes a running daemon's lock nor writes), after making sure
 * it is a SQLite file at all, and tells a gpubench database from any other
 * one.  Each finding of damage is printed to out.  Returns STORE_OK when
 * the check ran (its answer in res), else STORE_ERROR with a sentence in
 * errbuf. */
int store_check_file(const char *path, FILE *out, struct store_file_check *res, char *errbuf,
                     size_t cap);

/* What a finished copy holds, as printed. */
struct store_copy_report {
    long runs;          /* runs in the copy */
    int schema_version; /* its PRAGMA user_version after migration */
    long unread_rows;   /* recovery: rows the damaged file listed but that
                         * could not be read or stored; -1: unknown */
    int damaged_ranges; /* recovery: stretches of rows skipped */
};

/* gpubenchd --backup: an online copy of the database at src (which a
 * daemon may be writing) into dest, by SQLite's backup API in one read
 * transaction (in WAL mode a reader never blocks the writer).  Says what
 * it did on out.  Returns STORE_OK, or STORE_ERROR with a sentence in err
 * (dest then does not exist, or is what was there before). */
int store_backup_file(const char *src, const char *dest, FILE *out,
                      struct store_copy_report *report, char *err, size_t cap);

/* gpubenchd --recover: reads what can still be read of the damaged file
 * at src, table by table in rowid order, skipping the stretches whose
 * pages fail, into a new database at dest built at src's schema version,
 * drops rows whose run was lost, migrates it to the newest schema and
 * checks it.  Says on out what it recovered and what it could not read.
 * Returns STORE_OK when dest was written, else STORE_ERROR with a sentence
 * in err. */
int store_recover_file(const char *src, const char *dest, FILE *out,
                       struct store_copy_report *report, char *err, size_t cap);

#endif
