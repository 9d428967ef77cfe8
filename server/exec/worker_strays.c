/*
 * worker_strays.c - see worker_strays.h.  Linux only (/proc, pidfds).
 */
#define _GNU_SOURCE
#include "worker_strays.h"
#include "dynbuf.h"
#include "log.h"
#include "timeutil.h"
#include "worker_proc.h"

#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define STRAYS_MAX 256
#define ENVIRON_CAP (8 * 1024 * 1024) /* larger: not looked at, not ended */
#define TERM_GRACE_MS 2000
#define KILL_WAIT_MS 5000

struct stray {
    int pidfd;
    long pid;
    char command[160];
};

static int pidfd_open_pid(long pid)
{
#ifdef SYS_pidfd_open
    return (int)syscall(SYS_pidfd_open, (pid_t)pid, 0);
#else
    (void)pid;
    errno = ENOSYS;
    return -1;
#endif
}

static int pidfd_signal(int pidfd, int sig)
{
#ifdef SYS_pidfd_send_signal
    return (int)syscall(SYS_pidfd_send_signal, pidfd, sig, NULL, 0);
#else
    (void)pidfd;
    (void)sig;
    errno = ENOSYS;
    return -1;
#endif
}

/* Reads /proc/PID/NAME whole into b.  0, or -1 (unreadable, over the
 * cap). */
static int read_proc_file(long pid, const char *name, struct dynbuf *b)
{
    char path[64], chunk[8192];
    ssize_t got;
    int fd, rc = 0;

    snprintf(path, sizeof(path), "/proc/%ld/%s", pid, name);
    fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    while ((got = read(fd, chunk, sizeof(chunk))) != 0) {
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0 || dynbuf_add(b, chunk, (size_t)got) != 0) {
            rc = -1;
            break;
        }
    }
    close(fd);
    return rc;
}

/* 1 when the process's environment holds exactly the entry wanted. */
static int has_marker(long pid, const char *wanted)
{
    struct dynbuf env;
    size_t len = strlen(wanted);
    int found = 0;

    dynbuf_init(&env, ENVIRON_CAP);
    if (read_proc_file(pid, "environ", &env) == 0) {
        for (size_t at = 0; at < env.len && !found;) {
            const char *entry = env.data + at;
            size_t n = strnlen(entry, env.len - at);
            found = n == len && memcmp(entry, wanted, len) == 0;
            at += n + 1;
        }
    }
    dynbuf_free(&env);
    return found;
}

/* Its command line, arguments separated by spaces, for the log. */
static void read_command(long pid, char *out, size_t cap)
{
    struct dynbuf cmd;

    dynbuf_init(&cmd, 4096);
    snprintf(out, cap, "?");
    if (read_proc_file(pid, "cmdline", &cmd) == 0 && cmd.len > 0) {
        for (size_t i = 0; i + 1 < cmd.len; i++)
            if (cmd.data[i] == '\0')
                cmd.data[i] = ' ';
        snprintf(out, cap, "%s", cmd.data);
    }
    dynbuf_free(&cmd);
}

/* Waits until every stray still open has ended or until_ms.  Closes and
 * forgets (pidfd -1) those that ended; returns how many are left. */
static int wait_strays(struct stray *s, int n, int64_t until_ms)
{
    int left;

    for (;;) {
        struct pollfd pfd[STRAYS_MAX];
        int idx[STRAYS_MAX];
        int64_t wait_ms = until_ms - time_mono_ms();

        left = 0;
        for (int i = 0; i < n; i++) {
            if (s[i].pidfd < 0)
                continue;
            pfd[left].fd = s[i].pidfd;
            pfd[left].events = POLLIN; /* readable once it has exited */
            idx[left++] = i;
        }
        if (left == 0 || wait_ms <= 0)
            return left;
        if (poll(pfd, (nfds_t)left, (int)wait_ms) < 0 && errno != EINTR)
            return left;
        for (int j = 0; j < left; j++) {
            if (pfd[j].revents == 0)
                continue;
            close(s[idx[j]].pidfd);
            s[idx[j]].pidfd = -1;
        }
    }
}

/* Signals every stray still open; a stray already gone is forgotten. */
static void signal_strays(struct stray *s, int n, int sig)
{
    for (int i = 0; i < n; i++) {
        if (s[i].pidfd < 0 || pidfd_signal(s[i].pidfd, sig) == 0)
            continue;
        if (errno != ESRCH)
            log_warn("cannot signal worker pid %ld: %s", s[i].pid, strerror(errno));
        close(s[i].pidfd);
        s[i].pidfd = -1;
    }
}

/* Fills s with the marked processes; returns how many, or -1 when they
 * cannot be looked for safely. */
static int find_strays(const char *marker, struct stray *s, int cap)
{
    DIR *proc = opendir("/proc");
    struct dirent *e;
    long self = (long)getpid();
    int n = 0, failed = 0;

    if (proc == NULL) {
        log_warn("cannot look for workers left by a previous daemon: /proc: %s",
                 strerror(errno));
        return -1;
    }
    while ((e = readdir(proc)) != NULL && n < cap) {
        char *end;
        long pid = strtol(e->d_name, &end, 10);
        int fd;

        if (!isdigit((unsigned char)e->d_name[0]) || *end != '\0' || pid == self)
            continue;
        /* Held from before the look until the signal: the pid cannot be
         * reused under us. */
        fd = pidfd_open_pid(pid);
        if (fd < 0) {
            if (errno == ESRCH)
                continue; /* gone meanwhile */
            log_warn("cannot look for workers left by a previous daemon: "
                     "pidfd_open: %s; none will be ended",
                     strerror(errno));
            failed = 1;
            break;
        }
        if (!has_marker(pid, marker)) {
            close(fd);
            continue;
        }
        s[n].pidfd = fd;
        s[n].pid = pid;
        read_command(pid, s[n].command, sizeof(s[n].command));
        n++;
    }
    closedir(proc);
    if (!failed)
        return n;
    for (int i = 0; i < n; i++) {
        close(s[i].pidfd);
        s[i].pidfd = -1;
    }
    return -1;
}

int worker_strays_end(const char *owner)
{
    struct stray *s = calloc(STRAYS_MAX, sizeof(*s));
    char *marker = NULL;
    int n = 0, left;

    if (s == NULL || asprintf(&marker, "%s=%s", WORKER_OWNER_ENV, owner) < 0) {
        marker = NULL;
        log_warn("out of memory looking for workers left by a previous daemon");
        goto done;
    }
    for (int i = 0; i < STRAYS_MAX; i++)
        s[i].pidfd = -1;
    n = find_strays(marker, s, STRAYS_MAX);
    if (n <= 0) {
        n = 0;
        goto done;
    }
    for (int i = 0; i < n; i++)
        log_warn("ending worker pid %ld (%s), left running by a previous "
                 "gpubenchd of this database",
                 s[i].pid, s[i].command);
    signal_strays(s, n, SIGTERM);
    if (wait_strays(s, n, time_mono_ms() + TERM_GRACE_MS) > 0) {
        signal_strays(s, n, SIGKILL);
        wait_strays(s, n, time_mono_ms() + KILL_WAIT_MS);
    }
    left = 0;
    for (int i = 0; i < n; i++) {
        if (s[i].pidfd < 0)
            continue;
        log_error("worker pid %ld (%s) did not end on SIGKILL within %d s "
                  "(stuck in the GPU driver?); starting anyway",
                  s[i].pid,
                  s[i].command, KILL_WAIT_MS / 1000);
        close(s[i].pidfd);
        left++;
    }
    log_info("%d worker(s) of a previous daemon ended, %d still there", n - left, left);

done:
    free(marker);
    free(s);
    return n;
}
