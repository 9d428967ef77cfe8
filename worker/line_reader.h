/*
 * line_reader.h - one line of input with a bound on its length.
 *
 * `--serve` reads one JSON job a line from a pipe; a runaway writer must
 * not make it allocate without limit, so a line past the bound is read to
 * its end, thrown away and reported, and the next line is read normally.
 * Unit-tested in tests/unit/test_kernels_protocol.c.
 */
#ifndef GPUBENCH_WORKER_LINE_READER_H
#define GPUBENCH_WORKER_LINE_READER_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

/* The longest job line `--serve` accepts, newline excluded. */
#define GB_MAX_JOB_LINE (1024 * 1024)

enum gb_line_status {
    GB_LINE_OK = 1,  /* a line is in *buf (NUL-terminated, no '\n') */
    GB_LINE_EOF = 0, /* end of input, nothing read */
    GB_LINE_NOMEM = -1,
    GB_LINE_TOO_LONG = -2 /* a line over max bytes was skipped */
};

/* Reads the next line of f into *buf, growing it (up to max + 1 bytes;
 * the caller owns *buf and frees it once, after the last call).  *len is
 * the line's length.  A last line without a newline still counts; a '\r'
 * before the newline is dropped. */
enum gb_line_status gb_read_line(FILE *f, char **buf, size_t *cap, size_t max,
                                 size_t *len);

#ifdef __cplusplus
}
#endif

#endif
