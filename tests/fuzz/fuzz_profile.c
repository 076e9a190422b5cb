/* Profile files: the loader must reject anything damaged with file:line, and
 * whatever it accepts must save and load back to the same bytes. */
#include "core/measure.h"
#include "core/profile.h"
#include "tests/fuzz/fuzz_util.h"

#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char *slurp(const char *path, size_t *n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    char *buf = malloc(1 << 20);
    *n = fread(buf, 1, 1 << 20, f);
    fclose(f);
    return buf;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char path[64];
    int fd = fuzz_as_file(data, size, path, sizeof path);
    if (fd < 0)
        return 0;
    struct fikit_measure_store st;
    struct fikit_profile_meta meta;
    struct fikit_err err;
    fikit_measure_init(&st);
    int rc = fikit_profile_load(path, &meta, &st, &err);
    fuzz_error_names_file(rc, &err, path);
    if (rc == 0) {
        /* Round trip through a real file (save renames into its directory). */
        char dir[] = "/tmp/fikit-fuzz-XXXXXX";
        if (mkdtemp(dir)) {
            char a[128], b[128];
            snprintf(a, sizeof a, "%s/a.profile", dir);
            snprintf(b, sizeof b, "%s/b.profile", dir);
            struct fikit_measure_store back;
            fikit_measure_init(&back);
            if (fikit_profile_save(a, &meta, &st, &err) != 0 ||
                fikit_profile_load(a, NULL, &back, &err) != 0 ||
                fikit_profile_save(b, &meta, &back, &err) != 0)
                abort();
            size_t na, nb;
            char *x = slurp(a, &na), *y = slurp(b, &nb);
            if (!x || !y || na != nb || memcmp(x, y, na) != 0)
                abort();
            free(x);
            free(y);
            unlink(a);
            unlink(b);
            rmdir(dir);
            fikit_measure_destroy(&back);
        }
    }
    fikit_measure_destroy(&st);
    close(fd);
    return 0;
}
