/*
 * db_lock.h - one gpubenchd per database.
 *
 * Two daemons on one database would each believe the other's running runs
 * were left behind by a crash, and each run one GPU's queue twice.  So the
 * daemon takes an exclusive lock on `<db>.lock`, a file beside the
 * database, before anything may change the database (migrations and crash
 * recovery included), and holds it until it exits.  The kernel drops the
 * lock when the process ends, however it ends (SIGKILL included), so there
 * is never a stale lock to clear by hand.  The holder's pid is written in
 * the file, for the message that refuses a second daemon.
 *
 * Offline tools that read or repair the database take the same lock, so
 * they never run under a live daemon.
 */
#ifndef GPUBENCH_STORE_DB_LOCK_H
#define GPUBENCH_STORE_DB_LOCK_H

#include <stddef.h>
#include <sys/types.h>

struct db_lock;

enum db_lock_result {
    DB_LOCK_OK = 0,
    DB_LOCK_HELD = 1,  /* another process holds it: err names it */
    DB_LOCK_ERROR = -1 /* the lock file could not be made or locked */
};

/* The absolute, symlink-free path of the database at path, which need not
 * exist yet (its folder must).  0, or -1 with a sentence in err. */
int db_path_absolute(const char *path, char *out, size_t cap, char *err,
                     size_t err_cap);

/* Locks the database at db_path for this process, without waiting.  On
 * DB_LOCK_OK *out is the held lock (the caller releases it); otherwise
 * *out is NULL and err says why, naming the database by its absolute
 * path and, when held, the holder's pid. */
enum db_lock_result db_lock_acquire(const char *db_path, struct db_lock **out,
                                    char *err, size_t cap);

/* The database's absolute path, as locked.  Owned by the lock. */
const char *db_lock_db_path(const struct db_lock *l);

/* A text that names this database and no other on this machine, even
 * where another mount namespace has a file of the same path:
 * "DEV:INODE:PATH", the device and inode of its lock file (which is never
 * removed, so they stay the same from one daemon to the next) and its
 * absolute path.  Workers carry it (worker_proc.h).  Owned by the lock. */
const char *db_lock_owner_tag(const struct db_lock *l);

/* Drops the lock and frees l (NULL is fine). */
void db_lock_release(struct db_lock *l);

#endif
