/* Owns: the one logging function every part of fikit writes through.
 * Lines look like "fikit: [1234] warning: message" on stderr, so a user can
 * tell fikit's words from the program's. */
#ifndef FIKIT_CORE_LOG_H
#define FIKIT_CORE_LOG_H

#include <stdbool.h>

enum fikit_log_level {
    FIKIT_LOG_ERROR = 0,
    FIKIT_LOG_WARN = 1,
    FIKIT_LOG_INFO = 2,
    FIKIT_LOG_DEBUG = 3,
    FIKIT_LOG_TRACE = 4,
};

/* Accepted spellings, for error messages. */
#define FIKIT_LOG_LEVEL_NAMES "error, warn, info, debug, trace"

void fikit_log_set_level(enum fikit_log_level level);
bool fikit_log_enabled(enum fikit_log_level level);
/* Returns 0 and sets *out, or -EINVAL for an unknown name. */
int fikit_log_parse_level(const char *name, enum fikit_log_level *out);
const char *fikit_log_level_name(enum fikit_log_level level);

void fikit_log(enum fikit_log_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define fikit_error(...) fikit_log(FIKIT_LOG_ERROR, __VA_ARGS__)
#define fikit_warn(...) fikit_log(FIKIT_LOG_WARN, __VA_ARGS__)
#define fikit_info(...) fikit_log(FIKIT_LOG_INFO, __VA_ARGS__)
#define fikit_debug(...)                                                     \
    do {                                                                     \
        if (fikit_log_enabled(FIKIT_LOG_DEBUG))                              \
            fikit_log(FIKIT_LOG_DEBUG, __VA_ARGS__);                         \
    } while (0)

#endif
