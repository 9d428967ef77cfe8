/*
 * worker_proc.c - see worker_proc.h.
 *
 * How a worker is made to die with the daemon.  A worker may be stuck in a
 * kernel and never read its stdin again, so the end-of-file it would see
 * when the daemon goes is not enough; and it must not depend on the worker
 * cooperating (the real worker, the test double, a worker built by
 * someone else).  So the kernel does it: the child sets PR_SET_PDEATHSIG
 * to SIGKILL between fork() and exec() (the setting survives exec), and
 * it is SIGKILLed the moment its parent goes, SIGKILL of the daemon
 * included.  That is why this is fork() and not posix_spawn(), which has
 * no hook to run prctl() in the child.  Two things that come with it:
 *  - The death signal fires when the THREAD that forked exits, not the
 *    process.  Workers are forked by the GPU runner threads (gpu_pool.c),
 *    each of which stops its worker before it returns, and by the main
 *    thread (--list), which lives as long as the daemon.
 *  - The parent may die before prctl() runs: the child then has a new
 *    parent and checks getppid() against the daemon's pid after prctl().
 *
 * The child also gets an empty signal mask and default dispositions (the
 * daemon blocks SIGINT and SIGTERM in all its threads and ignores
 * SIGPIPE, and a child would inherit both, deaf to `kill`), and a process
 * group of its own, so that a Ctrl-C at the daemon's terminal reaches the
 * daemon, which lets the running run finish or requeues it, rather than
 * killing the worker under it.
 *
 * Between fork() and exec() the child of this multi-threaded process only
 * makes async-signal-safe calls; everything it needs (argv, environment)
 * is built before the fork.  An exec that fails is reported to the parent
 * through a close-on-exec pipe, as posix_spawn would.
 */
#define _GNU_SOURCE /* pipe2 */
#include "worker_proc.h"
#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

#define WORKER_ARGS_MAX 16

void worker_init(struct worker_proc *w)
{
    w->pid = 0;
    w->to_fd = -1;
    w->from_fd = -1;
    dynbuf_init(&w->in, WORKER_LINE_CAP);
}

/* The daemon's environment with the owner marker in place of any it had
 * (a daemon started by a worker must not pass its parent's on).  The
 * array and *marker are malloc'ed (caller frees both); the strings are
 * environ's. */
static char **worker_environment(const char *owner, char **marker)
{
    size_t n = 0, k = 0, name_len = strlen(WORKER_OWNER_ENV);
    char **env;

    while (environ[n])
        n++;
    env = malloc((n + 2) * sizeof(*env));
    *marker = malloc(name_len + 1 + strlen(owner) + 1);
    if (env == NULL || *marker == NULL) {
        free(env);
        free(*marker);
        *marker = NULL;
        return NULL;
    }
    sprintf(*marker, "%s=%s", WORKER_OWNER_ENV, owner);
    for (size_t i = 0; i < n; i++)
        if (!(strncmp(environ[i], WORKER_OWNER_ENV, name_len) == 0 &&
              environ[i][name_len] == '='))
            env[k++] = environ[i];
    env[k++] = *marker;
    env[k] = NULL;
    return env;
}

/* Puts fd on target (0 or 1) in the child, keeping it across exec. */
static int child_move_fd(int fd, int target)
{
    if (fd == target)
        return fcntl(fd, F_SETFD, 0); /* dup2 onto itself keeps CLOEXEC */
    return dup2(fd, target) == target ? 0 : -1;
}

/* The child, from fork() to exec(): async-signal-safe calls only.  Never
 * returns; on failure it writes errno to err_fd and exits 127. */
static void child_exec(const char *path, char *const argv[], char *const envp[],
                       int in_fd, int out_fd, int err_fd, pid_t daemon_pid)
{
    struct sigaction dfl;
    sigset_t none;
    int e;

    memset(&dfl, 0, sizeof(dfl));
    dfl.sa_handler = SIG_DFL;
    for (int sig = 1; sig < NSIG; sig++)
        (void)sigaction(sig, &dfl, NULL); /* SIGKILL, SIGSTOP: EINVAL, fine */
    if (prctl(PR_SET_PDEATHSIG, SIGKILL) != 0 || getppid() != daemon_pid)
        goto fail; /* no death signal, or the daemon is already gone */
    if (setpgid(0, 0) != 0)
        goto fail;
    /* out_fd must not sit on 0, where in_fd goes first. */
    if (out_fd == 0 && (out_fd = fcntl(out_fd, F_DUPFD_CLOEXEC, 3)) < 0)
        goto fail;
    if (child_move_fd(in_fd, 0) != 0 || child_move_fd(out_fd, 1) != 0)
        goto fail;
    sigemptyset(&none);
    if (sigprocmask(SIG_SETMASK, &none, NULL) != 0)
        goto fail;
    execve(path, argv, envp);
fail:
    e = errno;
    if (write(err_fd, &e, sizeof(e)) != (ssize_t)sizeof(e))
        _exit(126); /* the parent sees a worker that exits at once */
    _exit(127);
}

/* Waits for the child's exec: 0 once it happened, else the errno it
 * failed with. */
static int exec_outcome(int err_fd)
{
    int e = 0;
    ssize_t got;

    do
        got = read(err_fd, &e, sizeof(e));
    while (got < 0 && errno == EINTR);
    if (got == 0)
        return 0; /* closed by exec */
    return got == (ssize_t)sizeof(e) ? e : EIO;
}

int worker_spawn(struct worker_proc *w, const char *path,
                 const char *const *args, const char *owner,
                 char *err, size_t cap)
{
    char *argv[WORKER_ARGS_MAX];
    char **envp = NULL, *marker = NULL;
    int to[2] = {-1, -1}, from[2] = {-1, -1}, status[2] = {-1, -1};
    sigset_t all, old;
    pid_t pid, daemon_pid = getpid();
    int n = 0, rc = -1, e, failed;

    argv[n++] = (char *)path;
    for (int i = 0; args[i] && n < WORKER_ARGS_MAX - 1; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;
    envp = worker_environment(owner, &marker);
    if (envp == NULL) {
        snprintf(err, cap, "cannot start %s: out of memory", path);
        goto done;
    }
    /* Close-on-exec everywhere: a worker must not inherit another
     * worker's pipes, or that one would never see end-of-file. */
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0 ||
        pipe2(status, O_CLOEXEC) != 0) {
        snprintf(err, cap, "pipe: %s", strerror(errno));
        goto done;
    }
    /* The child starts with every signal blocked, so none is handled by
     * the daemon's handlers in it before it resets them. */
    sigfillset(&all);
    if ((e = pthread_sigmask(SIG_SETMASK, &all, &old)) != 0) {
        snprintf(err, cap, "cannot start %s: pthread_sigmask: %s", path, strerror(e));
        goto done;
    }
    pid = fork();
    if (pid == 0)
        child_exec(path, argv, envp, to[0], from[1], status[1], daemon_pid);
    e = errno;
    pthread_sigmask(SIG_SETMASK, &old, NULL); /* cannot fail: it was just valid */
    if (pid < 0) {
        snprintf(err, cap, "cannot start %s: fork: %s", path, strerror(e));
        goto done;
    }
    close(status[1]);
    status[1] = -1;
    failed = exec_outcome(status[0]);
    if (failed) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
            ;
        snprintf(err, cap, "cannot start %s: %s", path, strerror(failed));
        goto done;
    }
    w->pid = pid;
    w->to_fd = to[1];
    w->from_fd = from[0];
    to[1] = -1;
    from[0] = -1;
    dynbuf_reset(&w->in);
    rc = 0;

done:
    for (int i = 0; i < 2; i++) {
        if (to[i] >= 0)
            close(to[i]);
        if (from[i] >= 0)
            close(from[i]);
        if (status[i] >= 0)
            close(status[i]);
    }
    free(envp);
    free(marker);
    return rc;
}

enum worker_read worker_read_line(struct worker_proc *w, int64_t deadline_ms,
                                  char **line)
{
    char chunk[65536];

    *line = NULL;
    for (;;) {
        char *nl = w->in.len ? memchr(w->in.data, '\n', w->in.len) : NULL;
        struct pollfd pfd = {.fd = w->from_fd, .events = POLLIN};
        int64_t left;
        ssize_t got;
        int pr;

        if (nl) {
            size_t n = (size_t)(nl - w->in.data);
            *line = malloc(n + 1);
            if (*line == NULL)
                return WORKER_ERROR;
            memcpy(*line, w->in.data, n);
            (*line)[n] = '\0';
            dynbuf_consume(&w->in, n + 1);
            return WORKER_LINE;
        }
        if (w->from_fd < 0)
            return WORKER_EOF;
        left = deadline_ms - time_mono_ms();
        if (left <= 0)
            return WORKER_TIMEOUT;
        pr = poll(&pfd, 1, left > 1000 ? 1000 : (int)left);
        if (pr < 0 && errno != EINTR)
            return WORKER_ERROR;
        if (pr <= 0)
            continue;
        got = read(w->from_fd, chunk, sizeof(chunk));
        if (got < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (got <= 0)
            return got == 0 ? WORKER_EOF : WORKER_ERROR;
        if (dynbuf_add(&w->in, chunk, (size_t)got) != 0)
            return WORKER_ERROR; /* a line over the cap */
    }
}

int worker_write_line(struct worker_proc *w, const char *text)
{
    size_t len = strlen(text);
    const char *parts[2] = {text, "\n"};
    size_t sizes[2] = {len, 1};

    if (w->to_fd < 0)
        return -1;
    for (int i = 0; i < 2; i++) {
        size_t off = 0;
        while (off < sizes[i]) {
            ssize_t n = write(w->to_fd, parts[i] + off, sizes[i] - off);
            if (n < 0 && errno == EINTR)
                continue;
            if (n <= 0)
                return -1;
            off += (size_t)n;
        }
    }
    return 0;
}

int worker_alive(struct worker_proc *w)
{
    struct pollfd pfd = {.fd = w->from_fd, .events = POLLIN};

    if (w->pid <= 0 || w->from_fd < 0)
        return 0;
    if (waitpid(w->pid, NULL, WNOHANG) != 0)
        return 0; /* exited (now reaped) or no longer ours */
    /* Hung up with nothing left to read means its stdout is closed. */
    if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLHUP) &&
        !(pfd.revents & POLLIN))
        return 0;
    return 1;
}

static void describe_status(int status, char *how, size_t cap)
{
    if (WIFEXITED(status))
        snprintf(how, cap, "exited with status %d", WEXITSTATUS(status));
    else if (WIFSIGNALED(status))
        snprintf(how, cap, "killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else
        snprintf(how, cap, "ended (status %d)", status);
}

void worker_stop(struct worker_proc *w, int wait_ms, char *how, size_t cap)
{
    int64_t until = time_mono_ms() + wait_ms;
    int status = 0;
    pid_t got = 0;

    if (how && cap)
        snprintf(how, cap, "was not running");
    if (w->to_fd >= 0)
        close(w->to_fd);
    w->to_fd = -1;
    if (w->pid > 0) {
        while ((got = waitpid(w->pid, &status, WNOHANG)) == 0 &&
               time_mono_ms() < until)
            usleep(10000);
        if (got == 0) {
            kill(w->pid, SIGKILL);
            got = waitpid(w->pid, &status, 0);
        }
        if (got == w->pid && how)
            describe_status(status, how, cap);
        else if (how)
            snprintf(how, cap, "ended (already reaped)");
    }
    if (w->from_fd >= 0)
        close(w->from_fd);
    w->from_fd = -1;
    w->pid = 0;
    dynbuf_reset(&w->in);
}

cJSON *worker_list(const char *path, const char *owner, int timeout_ms,
                   char *err, size_t cap)
{
    static const char *const args[] = {"--list", NULL};
    struct worker_proc w;
    struct dynbuf all;
    int64_t deadline = time_mono_ms() + timeout_ms;
    cJSON *out = NULL;
    char how[96];
    char *line = NULL;
    enum worker_read r;

    worker_init(&w);
    dynbuf_init(&all, 1024 * 1024);
    if (worker_spawn(&w, path, args, owner, err, cap) != 0)
        goto done;
    /* The list is one JSON object, possibly over several lines. */
    while ((r = worker_read_line(&w, deadline, &line)) == WORKER_LINE) {
        (void)!dynbuf_add(&all, line, strlen(line)); /* dynbuf_failed below */
        free(line);
        line = NULL;
    }
    if (r == WORKER_TIMEOUT) {
        snprintf(err, cap, "%s --list did not answer within %d ms", path, timeout_ms);
        goto done;
    }
    (void)!dynbuf_add(&all, w.in.data ? w.in.data : "", w.in.len); /* no final newline */
    if (dynbuf_failed(&all)) {
        snprintf(err, cap, "%s --list printed more than the %zu MiB its list may take", path,
                 all.cap / (1024 * 1024));
        goto done;
    }
    out = all.len ? cJSON_ParseWithLength(all.data, all.len) : NULL;
    if (!cJSON_IsObject(out)) {
        cJSON_Delete(out);
        out = NULL;
        snprintf(err, cap, "%s --list did not print a JSON object", path);
    }

done:
    worker_stop(&w, 2000, how, sizeof(how));
    dynbuf_free(&w.in);
    dynbuf_free(&all);
    return out;
}
