/* Shared by the fuzz targets: the input as a file, for the loaders that read
 * files (a memfd, so nothing touches the disk). */
#ifndef FIKIT_FUZZ_UTIL_H
#define FIKIT_FUZZ_UTIL_H

#include "core/error.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

/* Writes data to a fresh memfd; path receives /proc/self/fd/N. Returns the fd. */
static int fuzz_as_file(const uint8_t *data, size_t size, char *path, size_t len)
{
    int fd = memfd_create("fuzz", MFD_CLOEXEC);
    if (fd < 0)
        return -1;
    size_t off = 0;
    while (off < size) {
        ssize_t n = write(fd, data + off, size - off);
        if (n <= 0)
            break;
        off += (size_t)n;
    }
    snprintf(path, len, "/proc/self/fd/%d", fd);
    return fd;
}

/* A loader's error must name the file it read (path): aborts if not. */
static inline void fuzz_error_names_file(int rc, const struct fikit_err *err, const char *path)
{
    if (rc != 0 && strncmp(err->msg, path, strlen(path)) != 0)
        abort();
}

/* Hands the input to load as a file (its path), and aborts if an error
 * does not name that file. Returns load's result, or -1 if no file could
 * be made. */
static inline int fuzz_load(const uint8_t *data, size_t size,
                            int (*load)(const char *path, void *arg, struct fikit_err *err), void *arg)
{
    char path[64];
    int fd = fuzz_as_file(data, size, path, sizeof path);
    if (fd < 0)
        return -1;
    struct fikit_err err;
    int rc = load(path, arg, &err);
    fuzz_error_names_file(rc, &err, path);
    close(fd);
    return rc;
}

#endif
