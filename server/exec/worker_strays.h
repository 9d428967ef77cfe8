/*
 * worker_strays.h - the workers a previous daemon of this database left.
 *
 * Workers die with their daemon (worker_proc.c), but one stuck in the
 * driver when its daemon went may outlive it, keeping the card.  A daemon
 * that starts therefore looks for processes whose environment says they
 * are workers of its own database and ends them before it starts its
 * own.  The mark, WORKER_OWNER_ENV, is set at spawn and read in
 * /proc/PID/environ; its value, db_lock_owner_tag(), holds the lock
 * file's device and inode besides the database's path, so a database of
 * the same path in another mount namespace is another database.  Workers
 * of a gpubenchd too old to set the mark are not recognised.
 *
 * Nothing else is ever signalled: another user's
 * processes cannot be read, a process without the marker or with another
 * database's is left alone, and each process is held by a pidfd from
 * before it is looked at until it is signalled, so a pid reused in
 * between cannot be hit.  Where the kernel has no pidfds (before Linux
 * 5.3) nothing is ended, and the log says so.
 */
#ifndef GPUBENCH_EXEC_WORKER_STRAYS_H
#define GPUBENCH_EXEC_WORKER_STRAYS_H

/* Ends (SIGTERM, then SIGKILL after a grace) every process marked as a
 * worker of the database owner (db_lock_owner_tag()), logging their pids
 * and commands, and waits a few seconds for them to go.  Call it with the
 * database's lock held (db_lock.h), so that no live daemon of owner has
 * workers, and before this daemon starts any.  Returns how many it found;
 * a line in the log names any that would not go. */
int worker_strays_end(const char *owner);

#endif
