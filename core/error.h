/* Owns: the error text that travels with a negative return code, so that a
 * caller can print "file:line: what is wrong" without knowing who failed. */
#ifndef FIKIT_CORE_ERROR_H
#define FIKIT_CORE_ERROR_H

#include <stddef.h>

struct fikit_err {
    char msg[768];
};

/* Sets the message (printf-style) and returns code, so a caller can write
 * `return fikit_err_set(err, -EINVAL, "...")`. err may be NULL. */
int fikit_err_set(struct fikit_err *err, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
