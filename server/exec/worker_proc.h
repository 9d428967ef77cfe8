/*
 * worker_proc.h - one worker process and the NDJSON pipes to it.
 *
 * The server never touches CUDA: it starts `WORKER --serve
 * --device N` (or `WORKER --list`) with its stdin and stdout on pipes and
 * its stderr on the daemon's, writes one job a line and reads answer lines
 * against a deadline.  Lines are capped, so a worker gone wrong cannot make
 * the daemon allocate without bound.
 */
#ifndef GPUBENCH_EXEC_WORKER_PROC_H
#define GPUBENCH_EXEC_WORKER_PROC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <cjson/cJSON.h>

#include "dynbuf.h"

#define WORKER_LINE_CAP (16 * 1024 * 1024)

struct worker_proc {
    pid_t pid;        /* 0 when there is none */
    int to_fd;        /* its stdin */
    int from_fd;      /* its stdout */
    struct dynbuf in; /* bytes read and not yet returned as a line */
};

enum worker_read {
    WORKER_LINE = 1,
    WORKER_EOF = 0,
    WORKER_ERROR = -1,
    WORKER_TIMEOUT = -2,
};

void worker_init(struct worker_proc *w);

/* Every worker carries WORKER_OWNER_ENV=<its daemon's database, named by
 * db_lock_owner_tag()> in its environment: a daemon that starts on that
 * database knows by it the workers a previous daemon of its own left
 * behind (worker_strays.h). */
#define WORKER_OWNER_ENV "GPUBENCHD_WORKER_DB"

/* Starts path with args (argv[0] is set to path) for the daemon of the
 * database owner (db_lock_owner_tag()), with an empty signal mask, default
 * signal dispositions, a process group of its own and SIGKILL as its
 * death signal: it dies with the thread that calls this, which must
 * outlive it (see worker_proc.c).  0, or -1 with a sentence in err. */
int worker_spawn(struct worker_proc *w, const char *path,
                 const char *const *args, const char *owner,
                 char *err, size_t cap);

/* One line, without its newline, into *line (malloc'ed, caller frees).
 * Waits until deadline_ms on time_mono_ms()'s clock. */
enum worker_read worker_read_line(struct worker_proc *w, int64_t deadline_ms,
                                  char **line);

/* Writes text and a newline.  0, or -1 when the worker is gone. */
int worker_write_line(struct worker_proc *w, const char *text);

/* 1 while the process runs and its stdout is open. */
int worker_alive(struct worker_proc *w);

/* Closes its stdin, waits up to wait_ms for it to exit, then SIGKILLs it;
 * reaps it and describes how it ended ("exited with status 1", "killed by
 * signal 11 (Segmentation fault)") in how. */
void worker_stop(struct worker_proc *w, int wait_ms, char *how, size_t cap);

/* Runs `path --list` and returns its JSON object (caller owns it), or NULL
 * with a sentence in err. */
cJSON *worker_list(const char *path, const char *owner, int timeout_ms,
                   char *err, size_t cap);

#endif
