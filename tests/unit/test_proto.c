/* The protocol decoder against the fuzz corpus's seed messages: each seed is
 * a valid message of the current protocol, so the fuzzer starts from inside
 * the decoder. A protocol change that makes the seeds stale (other version,
 * other payload size) fails here rather than leaving fuzz_proto to test the
 * first check only, as happened from protocol version 2 to 3. */
#include "core/proto.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <stdio.h>
#include <string.h>

#define CORPUS FIKIT_SOURCE_DIR "/tests/fuzz/corpus/proto"

Test(proto, every_seed_is_a_message_of_this_version)
{
    DIR *d = opendir(CORPUS);
    cr_assert_not_null(d, "%s", CORPUS);
    int seeds = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096], buf[FIKIT_MSG_MAX];
        snprintf(path, sizeof path, "%s/%s", CORPUS, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        uint16_t type;
        const char *why = "";
        cr_expect_eq(fikit_proto_check(buf, n, &type, &why), 0, "seed %s rejected: %s", e->d_name, why);
        seeds++;
    }
    closedir(d);
    cr_assert_geq(seeds, 5, "the seeds are there (%d)", seeds);
}
