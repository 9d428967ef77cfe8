/*
 * log.h - timestamped lines on stderr, one call one line, safe from any
 * thread (a single fprintf under stdio's own lock).
 */
#ifndef GPUBENCH_CORE_LOG_H
#define GPUBENCH_CORE_LOG_H

enum log_level {
    LOG_DEBUG,
    LOG_INFO,
    LOG_WARN,
    LOG_ERROR,
};

void log_set_level(enum log_level level);
void log_msg(enum log_level level, const char *fmt, ...)
#ifdef __GNUC__
    __attribute__((format(printf, 2, 3)))
#endif
    ;

#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_warn(...) log_msg(LOG_WARN, __VA_ARGS__)
#define log_error(...) log_msg(LOG_ERROR, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)

#endif
