/*
 * db_lock.c - see db_lock.h.
 *
 * flock() rather than fcntl() record locks: a flock belongs to the open
 * file, so nothing else in the process can drop it by closing another
 * descriptor of the same file (as any close() drops a POSIX record lock),
 * and on Linux it also works on NFS (emulated with a whole-file record
 * lock).  The descriptor is close-on-exec, so workers never carry the lock
 * past their exec.  The lock file is never removed: removing it would let
 * a second daemon lock a new file while the first still holds the old one.
 */
#define _GNU_SOURCE
#include "db_lock.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define LOCK_SUFFIX ".lock"
/* A holder writes its pid right after locking; a second daemon that
 * arrives in between waits this long for it before saying "unknown". */
#define PID_READ_TRIES 25
#define PID_READ_PAUSE_NS (20 * 1000 * 1000L)

struct db_lock {
    int fd;
    char db_path[PATH_MAX];
    char owner_tag[PATH_MAX + 64];
};

int db_path_absolute(const char *path, char *out, size_t cap, char *err,
                     size_t err_cap)
{
    char dir[PATH_MAX], real_dir[PATH_MAX];
    const char *slash, *base;
    int n;

    if (realpath(path, real_dir) != NULL) {
        n = snprintf(out, cap, "%s", real_dir);
        goto check_length;
    }
    if (errno != ENOENT) {
        snprintf(err, err_cap, "database %s: %s", path, strerror(errno));
        return -1;
    }
    /* Not there yet (a first start): its folder must be. */
    slash = strrchr(path, '/');
    base = slash ? slash + 1 : path;
    if (*base == '\0') {
        snprintf(err, err_cap, "database %s: a folder, not a file", path);
        return -1;
    }
    if (slash == NULL)
        n = snprintf(dir, sizeof(dir), ".");
    else if (slash == path)
        n = snprintf(dir, sizeof(dir), "/");
    else
        n = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
    if (n < 0 || (size_t)n >= sizeof(dir) || realpath(dir, real_dir) == NULL) {
        snprintf(err, err_cap, "database %s: its folder %s: %s", path, dir,
                 n < 0 || (size_t)n >= sizeof(dir) ? "path too long" : strerror(errno));
        return -1;
    }
    n = snprintf(out, cap, "%s%s%s", real_dir,
                 strcmp(real_dir, "/") == 0 ? "" : "/", base);

check_length:
    if (n < 0 || (size_t)n >= cap) {
        snprintf(err, err_cap, "database %s: path too long", path);
        return -1;
    }
    return 0;
}

/* The pid written in the lock file, or 0 when there is none (yet). */
static long read_holder_pid(int fd)
{
    for (int i = 0; i < PID_READ_TRIES; i++) {
        struct timespec pause = {0, PID_READ_PAUSE_NS};
        char text[32];
        ssize_t got = pread(fd, text, sizeof(text) - 1, 0);
        char *end;
        long pid;

        if (got > 0) {
            text[got] = '\0';
            pid = strtol(text, &end, 10);
            if (end != text && *end == '\n' && pid > 0)
                return pid;
        }
        nanosleep(&pause, NULL);
    }
    return 0;
}

/* Writes this process's pid over whatever a previous holder left. */
static int write_own_pid(int fd)
{
    char text[32];
    int n = snprintf(text, sizeof(text), "%ld\n", (long)getpid());

    /* Write, then cut: a reader never finds the file empty between. */
    if (pwrite(fd, text, (size_t)n, 0) != n || ftruncate(fd, n) != 0)
        return -1;
    return 0;
}

enum db_lock_result db_lock_acquire(const char *db_path, struct db_lock **out,
                                    char *err, size_t cap)
{
    char lock_path[PATH_MAX + sizeof(LOCK_SUFFIX)];
    struct db_lock *l = calloc(1, sizeof(*l));
    enum db_lock_result rc = DB_LOCK_ERROR;
    struct stat st;
    long holder;

    *out = NULL;
    if (l == NULL) {
        snprintf(err, cap, "out of memory locking the database");
        return DB_LOCK_ERROR;
    }
    l->fd = -1;
    if (db_path_absolute(db_path, l->db_path, sizeof(l->db_path), err, cap) != 0)
        goto done;
    snprintf(lock_path, sizeof(lock_path), "%s" LOCK_SUFFIX, l->db_path);
    l->fd = open(lock_path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (l->fd < 0) {
        snprintf(err, cap, "cannot lock the database %s: %s: %s", l->db_path,
                 lock_path, strerror(errno));
        goto done;
    }
    if (flock(l->fd, LOCK_EX | LOCK_NB) != 0) {
        if (errno != EWOULDBLOCK) {
            snprintf(err, cap, "cannot lock the database %s: %s: %s",
                     l->db_path, lock_path, strerror(errno));
            goto done;
        }
        holder = read_holder_pid(l->fd);
        if (holder > 0)
            snprintf(err, cap, "the database %s is in use by another gpubenchd "
                               "(pid %ld, from %s): one daemon per database; stop that "
                               "one first, or give this one another --db",
                     l->db_path, holder, lock_path);
        else
            snprintf(err, cap, "the database %s is in use by another process "
                               "that holds %s (its pid is not written there): one "
                               "daemon per database",
                     l->db_path, lock_path);
        rc = DB_LOCK_HELD;
        goto done;
    }
    if (write_own_pid(l->fd) != 0 || fstat(l->fd, &st) != 0) {
        snprintf(err, cap, "cannot write the lock file %s: %s", lock_path,
                 strerror(errno));
        goto done;
    }
    snprintf(l->owner_tag, sizeof(l->owner_tag), "%llu:%llu:%s",
             (unsigned long long)st.st_dev, (unsigned long long)st.st_ino,
             l->db_path);
    *out = l;
    l = NULL;
    rc = DB_LOCK_OK;

done:
    if (l) {
        if (l->fd >= 0)
            close(l->fd);
        free(l);
    }
    return rc;
}

const char *db_lock_db_path(const struct db_lock *l)
{
    return l->db_path;
}

const char *db_lock_owner_tag(const struct db_lock *l)
{
    return l->owner_tag;
}

void db_lock_release(struct db_lock *l)
{
    if (l == NULL)
        return;
    /* Closing drops the lock.  The pid stays in the file, but is only
     * ever read while some process holds the lock, which wrote its own. */
    close(l->fd);
    free(l);
}
