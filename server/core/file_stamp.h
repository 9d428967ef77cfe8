/*
 * file_stamp.h - has a file changed since it was last read?  What the
 * daemon's re-read files use (the TLS certificate and key, the peers file):
 * the device, inode, size and modification time of the path, so that a
 * file replaced whole (written beside, then renamed) or edited in place is
 * seen at the next look, as the Prometheus exporter-toolkit sees its own.
 */
#ifndef GPUBENCH_CORE_FILE_STAMP_H
#define GPUBENCH_CORE_FILE_STAMP_H

#include <sys/types.h>
#include <time.h>

struct file_stamp {
    int present; /* 0: the path could not be stat'ed (the rest is 0) */
    dev_t dev;
    ino_t ino;
    off_t size;
    struct timespec mtime;
};

/* path's stamp now into out. */
void file_stamp_read(const char *path, struct file_stamp *out);

/* 1 when a and b are the same look at the same file. */
int file_stamp_same(const struct file_stamp *a, const struct file_stamp *b);

#endif
