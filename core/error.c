#include "core/error.h"

#include <stdarg.h>
#include <stdio.h>

int fikit_err_set(struct fikit_err *err, int code, const char *fmt, ...)
{
    if (err) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err->msg, sizeof err->msg, fmt, ap);
        va_end(ap);
    }
    return code;
}
