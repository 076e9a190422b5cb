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

struct loaded {
    struct fikit_measure_store st;
    struct fikit_profile_meta meta;
};

static int load(const char *path, void *arg, struct fikit_err *err)
{
    struct loaded *l = arg;
    return fikit_profile_load(path, &l->meta, &l->st, err);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    struct loaded l;
    struct fikit_err err;
    fikit_measure_init(&l.st);
    if (fuzz_load(data, size, load, &l) == 0) {
        /* Round trip through a real file (save renames into its directory). */
        char dir[] = "/tmp/fikit-fuzz-XXXXXX";
        if (mkdtemp(dir)) {
            char a[128], b[128];
            snprintf(a, sizeof a, "%s/a.profile", dir);
            snprintf(b, sizeof b, "%s/b.profile", dir);
            struct fikit_measure_store back;
            fikit_measure_init(&back);
            if (fikit_profile_save(a, &l.meta, &l.st, &err) != 0 ||
                fikit_profile_load(a, NULL, &back, &err) != 0 ||
                fikit_profile_save(b, &l.meta, &back, &err) != 0)
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
    fikit_measure_destroy(&l.st);
    return 0;
}
