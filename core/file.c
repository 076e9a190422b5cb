#include "core/file.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int write_all(int fd, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = write(fd, buf, len);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return -errno;
        }
        buf += n;
        len -= (size_t)n;
    }
    return 0;
}

int fikit_file_replace(const char *path, const char *text, size_t len)
{
    size_t pl = strlen(path);
    char *tmp = malloc(pl + 8), *dir = strdup(path);
    if (!tmp || !dir) {
        free(tmp);
        free(dir);
        return -ENOMEM;
    }
    snprintf(tmp, pl + 8, "%s.XXXXXX", path);
    int rc = 0, fd = mkstemp(tmp);
    if (fd < 0) {
        rc = -errno;
        goto out;
    }
    fchmod(fd, 0644);
    rc = write_all(fd, text, len);
    if (!rc && fsync(fd) != 0)
        rc = -errno;
    if (close(fd) != 0 && !rc)
        rc = -errno;
    if (!rc && rename(tmp, path) != 0)
        rc = -errno;
    if (rc) {
        unlink(tmp);
        goto out;
    }
    /* Make the rename itself durable. */
    int dfd = open(dirname(dir), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (dfd >= 0) {
        fsync(dfd);
        close(dfd);
    }
out:
    free(tmp);
    free(dir);
    return rc;
}
