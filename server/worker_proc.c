/*
 * worker_proc.c - see worker_proc.h.
 */
#define _GNU_SOURCE /* pipe2 */
#include "worker_proc.h"
#include "timeutil.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

void worker_init(struct worker_proc *w)
{
    w->pid = 0;
    w->to_fd = -1;
    w->from_fd = -1;
    dynbuf_init(&w->in, WORKER_LINE_CAP);
}

int worker_spawn(struct worker_proc *w, const char *path,
                 const char *const *args, char *err, size_t cap)
{
    posix_spawn_file_actions_t fa;
    char *argv[16];
    int to[2] = {-1, -1}, from[2] = {-1, -1};
    int n = 0, rc = -1, fa_ready = 0;

    argv[n++] = (char *)path;
    for (int i = 0; args[i] && n < 15; i++)
        argv[n++] = (char *)args[i];
    argv[n] = NULL;

    /* Close-on-exec everywhere: a worker must not inherit another
     * worker's pipes, or that one would never see end-of-file. */
    if (pipe2(to, O_CLOEXEC) != 0 || pipe2(from, O_CLOEXEC) != 0) {
        snprintf(err, cap, "pipe: %s", strerror(errno));
        goto done;
    }
    if (posix_spawn_file_actions_init(&fa) != 0)
        goto done;
    fa_ready = 1;
    posix_spawn_file_actions_adddup2(&fa, to[0], 0);
    posix_spawn_file_actions_adddup2(&fa, from[1], 1);
    rc = posix_spawn(&w->pid, path, &fa, NULL, argv, environ);
    if (rc != 0) {
        snprintf(err, cap, "cannot start %s: %s", path, strerror(rc));
        w->pid = 0;
        rc = -1;
        goto done;
    }
    w->to_fd = to[1];
    w->from_fd = from[0];
    to[1] = -1;
    from[0] = -1;
    dynbuf_reset(&w->in);
    rc = 0;

done:
    if (fa_ready)
        posix_spawn_file_actions_destroy(&fa);
    for (int i = 0; i < 2; i++) {
        if (to[i] >= 0)
            close(to[i]);
        if (from[i] >= 0)
            close(from[i]);
    }
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
            return WORKER_ERROR;  /* a line over the cap */
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
        return 0;  /* exited (now reaped) or no longer ours */
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

cJSON *worker_list(const char *path, int timeout_ms, char *err, size_t cap)
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
    if (worker_spawn(&w, path, args, err, cap) != 0)
        goto done;
    /* The list is one JSON object, possibly over several lines. */
    while ((r = worker_read_line(&w, deadline, &line)) == WORKER_LINE) {
        dynbuf_add(&all, line, strlen(line));
        free(line);
        line = NULL;
    }
    if (r == WORKER_TIMEOUT) {
        snprintf(err, cap, "%s --list did not answer within %d ms", path, timeout_ms);
        goto done;
    }
    dynbuf_add(&all, w.in.data ? w.in.data : "", w.in.len);  /* no final newline */
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
