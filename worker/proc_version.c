/*
 * proc_version.c - driver version from /proc/driver/nvidia/version; see
 * proc_version.h for the formats it reads.
 */
#include "proc_version.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#define NVRM_TAG "NVRM version:"

/* A version token: digits and dots, starting with a digit, with a dot. */
static int version_token_length(const char *s)
{
    int len = 0, dots = 0;

    if (*s < '0' || *s > '9')
        return 0;
    while ((s[len] >= '0' && s[len] <= '9') || s[len] == '.') {
        dots += s[len] == '.';
        len++;
    }
    if (s[len] != '\0' && s[len] != ' ' && s[len] != '\t' && s[len] != '\n')
        return 0;
    return dots > 0 && s[len - 1] != '.' ? len : 0;
}

int gb_parse_proc_driver_version(const char *text, char *out, size_t cap)
{
    const char *p = text ? strstr(text, NVRM_TAG) : NULL;

    if (p == NULL || cap == 0)
        return -1;
    p += strlen(NVRM_TAG);
    while (*p && *p != '\n') {
        int at_token_start = p[-1] == ' ' || p[-1] == '\t' || p[-1] == ':';
        int len = at_token_start ? version_token_length(p) : 0;
        if (len > 0) {
            if ((size_t)len >= cap)
                return -1;
            memcpy(out, p, (size_t)len);
            out[len] = '\0';
            return 0;
        }
        p++;
    }
    return -1;
}

int gb_read_proc_driver_version(const char *path, char *out, size_t cap,
                                char *reason, size_t reason_cap)
{
    char text[1024];
    size_t got;
    FILE *f = fopen(path, "r");

    if (f == NULL) {
        snprintf(reason, reason_cap, "%s: %s (no NVIDIA kernel module loaded?)",
                 path, strerror(errno));
        return -1;
    }
    got = fread(text, 1, sizeof(text) - 1, f);
    text[got] = '\0';
    fclose(f);
    if (gb_parse_proc_driver_version(text, out, cap) != 0) {
        snprintf(reason, reason_cap, "%s: no \"" NVRM_TAG "\" line with a version",
                 path);
        return -1;
    }
    return 0;
}
