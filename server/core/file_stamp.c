/*
 * file_stamp.c - see file_stamp.h.
 */
#include "file_stamp.h"

#include <string.h>
#include <sys/stat.h>

void file_stamp_read(const char *path, struct file_stamp *out)
{
    struct stat st;

    memset(out, 0, sizeof(*out));
    if (stat(path, &st) != 0)
        return;
    out->present = 1;
    out->dev = st.st_dev;
    out->ino = st.st_ino;
    out->size = st.st_size;
    out->mtime = st.st_mtim;
}

int file_stamp_same(const struct file_stamp *a, const struct file_stamp *b)
{
    return a->present == b->present && a->dev == b->dev && a->ino == b->ino &&
           a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
           a->mtime.tv_nsec == b->mtime.tv_nsec;
}
