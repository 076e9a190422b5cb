#include "core/log.h"

#include <errno.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static _Atomic int current_level = FIKIT_LOG_WARN;

static const char *const level_names[] = {"error", "warn", "info", "debug", "trace"};

void fikit_log_set_level(enum fikit_log_level level) { atomic_store(&current_level, (int)level); }


bool fikit_log_enabled(enum fikit_log_level level) { return (int)level <= atomic_load(&current_level); }

int fikit_log_parse_level(const char *name, enum fikit_log_level *out)
{
    for (size_t i = 0; i < sizeof level_names / sizeof level_names[0]; i++) {
        if (strcmp(name, level_names[i]) == 0) {
            *out = (enum fikit_log_level)i;
            return 0;
        }
    }
    if (strcmp(name, "warning") == 0) {
        *out = FIKIT_LOG_WARN;
        return 0;
    }
    return -EINVAL;
}

const char *fikit_log_level_name(enum fikit_log_level level)
{
    if ((unsigned)level < sizeof level_names / sizeof level_names[0])
        return level_names[level];
    return "?";
}

void fikit_log(enum fikit_log_level level, const char *fmt, ...)
{
    if (!fikit_log_enabled(level))
        return;
    int saved_errno = errno;
    /* One write() per line so lines of concurrent threads never interleave. */
    char line[1024];
    int n = snprintf(line, sizeof line, "fikit: [%ld] %s: ", (long)getpid(),
                     level == FIKIT_LOG_WARN ? "warning" : fikit_log_level_name(level));
    va_list ap;
    va_start(ap, fmt);
    int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = (size_t)n + (m < 0 ? 0 : (size_t)m);
    if (len > sizeof line - 2)
        len = sizeof line - 2;
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
    errno = saved_errno;
}
