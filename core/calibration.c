#include "core/calibration.h"

#include "core/file.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static void escape(char *out, size_t len, const char *s)
{
    size_t n = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p && n + 4 < len; p++) {
        if (*p <= ' ' || *p >= 0x7f || *p == '%')
            n += (size_t)snprintf(out + n, len - n, "%%%02X", *p);
        else
            out[n++] = (char)*p;
    }
    out[n] = '\0';
}

int fikit_calibration_get(const char *state_dir, const char *substrate, const char *model,
                          int64_t *cost_ns)
{
    char path[PATH_MAX], want[512], line[1024];
    snprintf(path, sizeof path, "%s/calibration", state_dir);
    escape(want, sizeof want, model);
    FILE *f = fopen(path, "re");
    if (!f)
        return -ENOENT;
    int rc = -ENOENT;
    if (!fgets(line, sizeof line, f) || strncmp(line, "fikit-calibration 1", 19) != 0) {
        fclose(f);
        return -EPROTO;
    }
    while (fgets(line, sizeof line, f)) {
        char s[32], m[512];
        long long cost;
        if (line[0] == '#' || sscanf(line, "%31s %511s %lld", s, m, &cost) != 3)
            continue;
        if (!strcmp(s, substrate) && !strcmp(m, want) && cost >= 0) {
            *cost_ns = cost;
            rc = 0;
        }
    }
    fclose(f);
    return rc;
}

int fikit_calibration_put(const char *state_dir, const char *substrate, const char *model,
                          int64_t cost_ns, struct fikit_err *err)
{
    char path[PATH_MAX], want[512], line[1024];
    snprintf(path, sizeof path, "%s/calibration", state_dir);
    escape(want, sizeof want, model);
    mkdir(state_dir, 0755);
    char *text = NULL;
    size_t text_len = 0;
    FILE *out = open_memstream(&text, &text_len);
    if (!out)
        return fikit_err_set(err, -ENOMEM, "cannot write %s: out of memory", path);
    fprintf(out, "fikit-calibration 1\n# substrate device-model switch-cost-ns measured (fikit calibrate)\n");
    FILE *in = fopen(path, "re");
    if (in) {
        while (fgets(line, sizeof line, in)) {
            char s[32], m[512];
            if (line[0] == '#' || !strncmp(line, "fikit-calibration", 17))
                continue;
            if (sscanf(line, "%31s %511s", s, m) == 2 && !strcmp(s, substrate) && !strcmp(m, want))
                continue; /* replaced below */
            fputs(line, out);
        }
        fclose(in);
    }
    char when[32];
    time_t now = time(NULL);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
    fprintf(out, "%s %s %" PRId64 " %s\n", substrate, want, cost_ns, when);
    int rc = fclose(out) != 0 || !text ? -ENOMEM : fikit_file_replace(path, text, text_len);
    free(text);
    if (rc)
        return fikit_err_set(err, rc, "cannot write %s: %s", path, strerror(-rc));
    return 0;
}
