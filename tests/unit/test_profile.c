/* The measurement store and profile files: round trip, merging, and each
 * kind of damaged file rejected with the file and line. */
#include "core/measure.h"
#include "core/profile.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch_dir.h"

static const struct fikit_profile_meta META = {.task = "serve", .device_model = "NVIDIA H200",
                                               .backend = FIKIT_BACKEND_CUDA};

static uint64_t add_kernel(struct fikit_measure_store *st, const char *name, uint32_t grid)
{
    struct fikit_kernel_desc d = {.backend = FIKIT_BACKEND_CUDA, .name = name,
                                  .grid = {grid, 1, 1}, .block = {256, 1, 1}, .shmem = 0};
    uint64_t key = fikit_kernel_key(&d);
    cr_assert_eq(fikit_measure_add_kernel(st, key, &d), 0);
    return key;
}

/* A store with three kernels, their durations and the gaps between them. */
static void fill(struct fikit_measure_store *st, uint64_t *k1, uint64_t *k2, uint64_t *k3)
{
    cr_assert_eq(fikit_measure_init(st), 0);
    *k1 = add_kernel(st, "_Z4convPKfPf", 120);
    *k2 = add_kernel(st, "_Z4reluPf", 64);
    *k3 = add_kernel(st, "name with spaces%and percent", 1);
    for (int i = 0; i < 100; i++) {
        fikit_measure_add_duration(st, *k1, 40000 + (uint64_t)i * 10);
        fikit_measure_add_duration(st, *k2, 5000 + (uint64_t)i);
        fikit_measure_add_gap(st, FIKIT_KEY_NONE, *k1, 0);
        fikit_measure_add_gap(st, *k1, *k2, 3000 + (uint64_t)i * 7);
        fikit_measure_add_gap(st, *k2, *k1, 1000000);
        /* bursts of two sizes, as a service's requests of two kinds */
        fikit_measure_add_burst(st, 12, 4000000 + (uint64_t)i * 1000);
        if (i % 4 == 0)
            fikit_measure_add_burst(st, 40, 15000000 + (uint64_t)i * 3000);
    }
    fikit_measure_add_duration(st, *k3, 1);
    fikit_measure_add_gap_at(st, *k2, *k1, 500000, true); /* after a wait: between bursts */
}

static void path_in_dir(char *buf, size_t len, const char *name)
{
    snprintf(buf, len, "%s/%s", dir, name);
}

/* fill()s st and saves it as name in the test's directory, whose path it
 * writes to path. */
static void save_filled(struct fikit_measure_store *st, uint64_t *k1, uint64_t *k2, uint64_t *k3,
                        const char *name, char *path, size_t len)
{
    fill(st, k1, k2, k3);
    path_in_dir(path, len, name);
    struct fikit_err err;
    cr_assert_eq(fikit_profile_save(path, &META, st, &err), 0, "%s", err.msg);
}

Test(profile, round_trip_keeps_every_statistic, .init = make_dir, .fini = remove_dir)
{
    struct fikit_measure_store st, back;
    uint64_t k1, k2, k3;
    fill(&st, &k1, &k2, &k3);
    char path[512];
    cr_assert_eq(fikit_profile_path(path, sizeof path, dir, "serve", "NVIDIA H200"), 0);
    cr_assert(strstr(path, "/serve/NVIDIA_H200.profile"), "%s", path);
    struct fikit_err err;
    cr_assert_eq(fikit_profile_save(path, &META, &st, &err), 0, "%s", err.msg);

    cr_assert_eq(fikit_measure_init(&back), 0);
    struct fikit_profile_meta meta;
    cr_assert_eq(fikit_profile_load(path, &meta, &back, &err), 0, "%s", err.msg);
    cr_assert_str_eq(meta.task, "serve");
    cr_assert_str_eq(meta.device_model, "NVIDIA H200");
    cr_assert_eq(meta.backend, FIKIT_BACKEND_CUDA);
    cr_assert_eq(fikit_measure_kernel_count(&back), 3);
    cr_assert_eq(fikit_measure_gap_count(&back), 3);
    cr_assert_str_eq(fikit_measure_desc(&back, k3)->name, "name with spaces%and percent");
    const uint64_t keys[] = {k1, k2, k3};
    for (int i = 0; i < 3; i++) {
        const struct fikit_stat *a = &fikit_measure_kernel(&st, keys[i])->duration;
        const struct fikit_stat *b = &fikit_measure_kernel(&back, keys[i])->duration;
        cr_assert_eq(a->count, b->count);
        cr_assert_eq(a->sum, b->sum);
        cr_assert_eq(a->min, b->min);
        cr_assert_eq(a->max, b->max);
        cr_assert_eq(fikit_stat_quantile(a, 0.9), fikit_stat_quantile(b, 0.9));
    }
    const struct fikit_gap_stats *g = fikit_measure_gap(&back, k1, k2);
    cr_assert_not_null(g);
    cr_assert_eq(g->gap.count, 100);
    cr_assert_eq(g->gap.min, 3000);
    cr_assert_eq(fikit_measure_gap(&back, FIKIT_KEY_NONE, k1)->gap.sketch.zero_count, 100);
    cr_assert_eq(fikit_measure_max_gap(&back), 1000000);
    cr_assert_eq(fikit_measure_burst_count(&back), 2);
    cr_assert_eq(back.between_gaps, 1, "where its gaps fell is kept");
    cr_assert_eq(back.inner_gap_max_ns, 0);
    cr_assert_eq(fikit_measure_idle_gap(&back), 0, "its bursts end in waits: no gap inside one yet");
    size_t nb;
    const struct fikit_burst_stats **bs = fikit_measure_sorted_bursts(&back, &nb);
    cr_assert_eq(nb, 2);
    cr_assert_eq(bs[0]->launches, 12);
    cr_assert_eq(bs[0]->len.count, 100);
    cr_assert_eq(bs[0]->len.max, 4099000);
    cr_assert_eq(bs[1]->launches, 40);
    cr_assert_eq(bs[1]->len.count, 25);
    cr_assert_eq(fikit_stat_quantile(&bs[1]->len, 0.99), fikit_stat_quantile(&bs[1]->len, 0.99));
    free(bs);

    /* Saving what was loaded gives the same bytes. */
    char path2[512];
    path_in_dir(path2, sizeof path2, "again.profile");
    cr_assert_eq(fikit_profile_save(path2, &meta, &back, &err), 0);
    char cmd[1200];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", path, path2);
    cr_assert_eq(system(cmd), 0, "a profile is a fixed point of load and save");
    fikit_measure_destroy(&st);
    fikit_measure_destroy(&back);
}

Test(profile, loading_merges_into_what_was_learned, .init = make_dir, .fini = remove_dir)
{
    struct fikit_measure_store st, learned;
    uint64_t k1, k2, k3;
    char path[512];
    save_filled(&st, &k1, &k2, &k3, "p.profile", path, sizeof path);
    struct fikit_err err;
    fill(&learned, &k1, &k2, &k3);
    cr_assert_eq(fikit_profile_load(path, NULL, &learned, &err), 0, "%s", err.msg);
    cr_assert_eq(fikit_measure_kernel(&learned, k1)->duration.count, 200);
    cr_assert_eq(fikit_measure_gap(&learned, k1, k2)->gap.count, 200);
    size_t nb;
    const struct fikit_burst_stats **bs = fikit_measure_sorted_bursts(&learned, &nb);
    cr_assert_eq(nb, 2);
    cr_assert_eq(bs[0]->len.count, 200, "bursts merge like the other statistics");
    free(bs);
    fikit_measure_destroy(&st);
    fikit_measure_destroy(&learned);
}

Test(measure, merge_skips_colliding_kernels_and_their_gaps)
{
    struct fikit_measure_store a, b;
    fikit_measure_init(&a);
    fikit_measure_init(&b);
    struct fikit_kernel_desc x = {.backend = FIKIT_BACKEND_CUDA, .name = "x", .grid = {1, 1, 1}};
    struct fikit_kernel_desc y = {.backend = FIKIT_BACKEND_CUDA, .name = "y", .grid = {1, 1, 1}};
    /* The same key names x in a and y in b: a forced collision. */
    fikit_measure_add_kernel(&a, 5, &x);
    fikit_measure_add_duration(&a, 5, 100);
    fikit_measure_add_kernel(&b, 5, &y);
    fikit_measure_add_duration(&b, 5, 999);
    fikit_measure_add_gap(&b, FIKIT_KEY_NONE, 5, 7);
    cr_assert_eq(fikit_measure_merge(&a, &b), 1);
    cr_assert_eq(fikit_measure_kernel(&a, 5)->duration.count, 1);
    cr_assert_eq(fikit_measure_kernel(&a, 5)->duration.max, 100, "y's time never reaches x");
    cr_assert_null(fikit_measure_gap(&a, FIKIT_KEY_NONE, 5));
    cr_assert_eq(fikit_measure_add_duration(&a, 6, 1), -ENOENT);
    fikit_measure_destroy(&a);
    fikit_measure_destroy(&b);
}

/* Writes a valid profile, lets edit() damage its text, and expects the
 * loader to fail with msg (a substring) and to leave the store empty. */
static void expect_rejected(void (*edit)(char *text, size_t *len), const char *msg)
{
    struct fikit_measure_store st, out;
    uint64_t k1, k2, k3;
    char path[512];
    save_filled(&st, &k1, &k2, &k3, "bad.profile", path, sizeof path);
    struct fikit_err err;
    FILE *f = fopen(path, "r");
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = '\0';
    edit(text, &len);
    f = fopen(path, "w");
    fwrite(text, 1, len, f);
    fclose(f);
    fikit_measure_init(&out);
    int rc = fikit_profile_load(path, NULL, &out, &err);
    cr_assert_lt(rc, 0, "damaged profile accepted");
    cr_assert(strstr(err.msg, path) == err.msg, "error names the file: %s", err.msg);
    cr_assert(strstr(err.msg, msg), "expected '%s' in: %s", msg, err.msg);
    cr_assert_eq(fikit_measure_kernel_count(&out), 0, "nothing of a bad file is kept");
    fikit_measure_destroy(&st);
    fikit_measure_destroy(&out);
}

static void truncate_half(char *t, size_t *len) { (void)t; *len /= 2; }
static void drop_end_line(char *t, size_t *len)
{
    char *e = strstr(t, "\nend ");
    *len = (size_t)(e - t) + 1;
}
static void flip_digit(char *t, size_t *len)
{
    (void)len;
    char *k = strstr(t, "\ngap ");
    k[30] = k[30] == '1' ? '2' : '1'; /* inside a key: still well formed hex */
}
static void burst_twice(char *t, size_t *len)
{
    /* the first burst line again, after itself */
    char *b = strstr(t, "\nburst ") + 1;
    size_t n = (size_t)(strchr(b, '\n') - b) + 1;
    memmove(b + n, b, *len - (size_t)(b - t) + 1);
    *len += n;
}
static void burst_of_none(char *t, size_t *len)
{
    (void)len;
    char *b = strstr(t, "\nburst 12 ");
    memcpy(b + 7, "00", 2);
}
static void other_version(char *t, size_t *len)
{
    (void)len;
    t[14] = '9';
}
static void not_a_profile(char *t, size_t *len)
{
    (void)len;
    memcpy(t, "hello", 5);
}
static void bad_field(char *t, size_t *len)
{
    (void)len;
    char *k = strstr(t, "\nkernel ");
    char *sp = strchr(k + 8, ' '); /* after the key */
    sp = strchr(sp + 1, ' ');      /* after the name */
    sp[1] = 'x';
}
static void append_garbage(char *t, size_t *len)
{
    strcpy(t + *len, "kernel 1 2 3\n");
    *len += 13;
}
static void empty(char *t, size_t *len) { (void)t; *len = 0; }
/* Found by fuzz_profile: a line of blanks after a line long enough to make
 * getline move its buffer once left the field table pointing at freed memory. */
static void blank_line_after_long_comment(char *t, size_t *len)
{
    char *nl = strchr(t, '\n') + 1; /* after the magic line */
    char ins[600];
    memset(ins, 'x', sizeof ins);
    memcpy(ins, "# ", 2);
    ins[sizeof ins - 5] = '\n';
    memcpy(ins + sizeof ins - 4, "  \t\n", 4);
    memmove(nl + sizeof ins, nl, *len - (size_t)(nl - t) + 1);
    memcpy(nl, ins, sizeof ins);
    *len += sizeof ins;
}

/* A profile changed by mutate is refused with an error that holds msg. */
#define REJECTS(test, mutate, msg)                                                                 \
    Test(profile, test, .init = make_dir, .fini = remove_dir) { expect_rejected(mutate, msg); }

REJECTS(rejects_truncated, truncate_half, "truncated")
REJECTS(rejects_missing_end, drop_end_line, "truncated: no end line")
REJECTS(rejects_changed_content, flip_digit, ":")
REJECTS(rejects_other_version, other_version, ":1: profile format version 9; this fikit reads versions 1 to 3")
REJECTS(rejects_a_burst_size_twice, burst_twice, "burst 12 listed twice")
REJECTS(rejects_a_burst_of_no_launches, burst_of_none, "bad burst record")
REJECTS(rejects_other_files, not_a_profile, ":1: not a fikit profile")
REJECTS(rejects_bad_field, bad_field, "bad kernel record")
REJECTS(rejects_data_after_end, append_garbage, "data after the end line")
REJECTS(rejects_empty, empty, "empty file")
REJECTS(blank_line_after_long_line_is_only_blank, blank_line_after_long_comment, "checksum mismatch")

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++) {
        h ^= (unsigned char)p[i];
        h *= 0x100000001b3ull;
    }
    return h;
}

/* A saved profile's text, as a file of an older version is edited from it. */
static size_t read_text(const char *path, char *text, size_t size)
{
    FILE *f = fopen(path, "r");
    cr_assert(f, "%s", path);
    size_t len = fread(text, 1, size - 1, f);
    fclose(f);
    text[len] = '\0';
    return len;
}

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

/* Loading path fails, its error saying want; nothing loaded. */
static void load_fails(const char *path, const char *want)
{
    struct fikit_measure_store out;
    struct fikit_err err;
    cr_assert_eq(fikit_measure_init(&out), 0);
    cr_assert_lt(fikit_profile_load(path, NULL, &out, &err), 0);
    cr_assert(strstr(err.msg, want), "%s", err.msg);
    cr_assert_eq(fikit_measure_kernel_count(&out), 0);
    fikit_measure_destroy(&out);
}

/* A profile of version 1 (before burst records: three numbers on its end
 * line) still loads, with no bursts. */
Test(profile, version_1_still_loads, .init = make_dir, .fini = remove_dir)
{
    struct fikit_measure_store st, out;
    uint64_t k1, k2, k3;
    char path[512];
    save_filled(&st, &k1, &k2, &k3, "old.profile", path, sizeof path);
    static char text[1 << 16];
    read_text(path, text, sizeof text);
    /* What fikit of version 1 wrote: no burst lines, its own end line. */
    cr_assert(strncmp(text, "fikit-profile 3\n", 16) == 0);
    text[14] = '1';
    char *first_burst = strstr(text, "\ngaps-by-burst ") + 1; /* version 2's records begin here */
    size_t body = (size_t)(first_burst - text);
    unsigned long nk, ng;
    cr_assert_eq(sscanf(strstr(text, "\nend ") + 1, "end %lu %lu", &nk, &ng), 2);
    snprintf(text + body, sizeof text - body, "end %lu %lu %016llx\n", nk, ng,
             (unsigned long long)fnv1a(text, body));
    write_text(path, text);
    struct fikit_err err;
    cr_assert_eq(fikit_measure_init(&out), 0);
    cr_assert_eq(fikit_profile_load(path, NULL, &out, &err), 0, "%s", err.msg);
    cr_assert_eq(fikit_measure_kernel_count(&out), 3);
    cr_assert_eq(fikit_measure_burst_count(&out), 0);
    /* and a burst line in a version 1 file is no record of that version */
    snprintf(text + body, sizeof text - body, "burst 3 1 5 5 5 0 1 0:1\nend %lu %lu %016llx\n", nk, ng, 0ull);
    write_text(path, text);
    load_fails(path, "unknown record 'burst'");
    fikit_measure_destroy(&st);
    fikit_measure_destroy(&out);
}

/* A profile of version 2 loads with its kernels and gaps but without its
 * burst records: they timed a burst from its first launch, and version 3
 * from the start of its host work; the records still count on the end line. */
Test(profile, version_2_loads_without_its_bursts, .init = make_dir, .fini = remove_dir)
{
    struct fikit_measure_store st, out;
    uint64_t k1, k2, k3;
    char path[512];
    save_filled(&st, &k1, &k2, &k3, "v2.profile", path, sizeof path);
    cr_assert_gt(fikit_measure_burst_count(&st), 0, "the saved store has bursts");
    static char text[1 << 16];
    read_text(path, text, sizeof text);
    cr_assert(strncmp(text, "fikit-profile 3\n", 16) == 0);
    text[14] = '2';
    char *end = strstr(text, "\nend ") + 1;
    size_t body = (size_t)(end - text);
    unsigned long nk, ng, nb;
    cr_assert_eq(sscanf(end, "end %lu %lu %lu", &nk, &ng, &nb), 3);
    cr_assert_gt(nb, 0);
    snprintf(text + body, sizeof text - body, "end %lu %lu %lu %016llx\n", nk, ng, nb,
             (unsigned long long)fnv1a(text, body));
    write_text(path, text);
    struct fikit_err err;
    cr_assert_eq(fikit_measure_init(&out), 0);
    cr_assert_eq(fikit_profile_load(path, NULL, &out, &err), 0, "%s", err.msg);
    cr_assert_eq(fikit_measure_kernel_count(&out), 3);
    cr_assert_eq(fikit_measure_burst_count(&out), 0, "version 2's bursts are learned again");
    /* A wrong burst count on its end line is still caught. */
    snprintf(text + body, sizeof text - body, "end %lu %lu %lu %016llx\n", nk, ng, nb + 1,
             (unsigned long long)fnv1a(text, body));
    write_text(path, text);
    load_fails(path, "truncated or corrupt");
    fikit_measure_destroy(&st);
    fikit_measure_destroy(&out);
}

Test(profile, missing_file_names_it)
{
    struct fikit_measure_store out;
    struct fikit_err err;
    fikit_measure_init(&out);
    cr_assert_eq(fikit_profile_load("/nonexistent/x.profile", NULL, &out, &err), -ENOENT);
    cr_assert_str_eq(err.msg, "/nonexistent/x.profile: No such file or directory");
    fikit_measure_destroy(&out);
}

Test(profile, failed_save_keeps_the_old_profile, .init = make_dir, .fini = remove_dir)
{
    if (geteuid() == 0)
        cr_skip_test("root ignores directory permissions; the fault tests cover a full disk");
    struct fikit_measure_store st;
    uint64_t k1, k2, k3;
    char path[512];
    save_filled(&st, &k1, &k2, &k3, "keep.profile", path, sizeof path);
    struct fikit_err err;
    chmod(dir, 0500);
    fikit_measure_add_duration(&st, k1, 1);
    cr_assert_lt(fikit_profile_save(path, &META, &st, &err), 0);
    cr_assert(strstr(err.msg, "the previous profile is kept"), "%s", err.msg);
    chmod(dir, 0700);
    struct fikit_measure_store back;
    fikit_measure_init(&back);
    cr_assert_eq(fikit_profile_load(path, NULL, &back, &err), 0);
    cr_assert_eq(fikit_measure_kernel(&back, k1)->duration.count, 100);
    fikit_measure_destroy(&st);
    fikit_measure_destroy(&back);
}

Test(profile, save_leaves_no_temporary_files, .init = make_dir, .fini = remove_dir)
{
    struct fikit_measure_store st;
    uint64_t k1, k2, k3;
    char path[512];
    save_filled(&st, &k1, &k2, &k3, "sub/dir/t.profile", path, sizeof path);
    struct fikit_err err;
    cr_assert_eq(fikit_profile_save(path, &META, &st, &err), 0);
    char cmd[600];
    snprintf(cmd, sizeof cmd, "test $(ls %s/sub/dir | wc -l) -eq 1", dir);
    cr_assert_eq(system(cmd), 0);
    fikit_measure_destroy(&st);
}

/* A profile that fikit writes always loads. A program of many kernels: the
 * learner records gaps whose previous kernel was never measured (no kernel
 * record), and the loader rejected the whole profile for it (":50: gap
 * record names a kernel with no kernel record"). */
Test(profile, what_is_written_loads_with_many_kernels, .init = make_dir, .fini = remove_dir)
{
    struct fikit_measure_store st;
    cr_assert_eq(fikit_measure_init(&st), 0);
    enum { N = 3000 };
    static uint64_t keys[N];
    char name[64];
    for (int i = 0; i < N; i++) {
        snprintf(name, sizeof name, "_Z6kernel%dPf", i);
        keys[i] = add_kernel(&st, name, (uint32_t)(i % 7 + 1));
        for (int r = 0; r < 5; r++)
            fikit_measure_add_duration(&st, keys[i], 1000 + (uint64_t)(i * 13 + r * 101));
    }
    for (int i = 1; i < N; i++)
        cr_assert_eq(fikit_measure_add_gap(&st, keys[i - 1], keys[i], 500 + (uint64_t)i), 0);
    /* What the learner also records: a gap after a kernel it never measured
     * (no kernel record), and one before such a kernel. */
    struct fikit_kernel_desc ghost = {.backend = FIKIT_BACKEND_CUDA, .name = "_Z5ghostv",
                                      .grid = {1, 1, 1}, .block = {1, 1, 1}};
    uint64_t g = fikit_kernel_key(&ghost);
    cr_assert_eq(fikit_measure_add_gap(&st, g, keys[0], 777), 0);
    cr_assert_eq(fikit_measure_add_gap(&st, keys[5], g, 778), 0);
    /* A kernel whose name is empty. */
    uint64_t empty = add_kernel(&st, "", 3);
    fikit_measure_add_duration(&st, empty, 5);
    cr_assert_eq(fikit_measure_add_gap(&st, keys[9], empty, 779), 0);

    char path[128];
    path_in_dir(path, sizeof path, "many.profile");
    struct fikit_err err;
    cr_assert_eq(fikit_profile_save(path, &META, &st, &err), 0, "%s", err.msg);
    struct fikit_measure_store back;
    cr_assert_eq(fikit_measure_init(&back), 0);
    struct fikit_profile_meta meta;
    cr_assert_eq(fikit_profile_load(path, &meta, &back, &err), 0, "what fikit wrote does not load: %s", err.msg);
    cr_assert_eq(fikit_measure_kernel_count(&back), N, "every named kernel is kept");
    cr_assert_eq(fikit_measure_gap_count(&back), N - 1, "every gap between kept kernels is kept");
    for (int i = 0; i < N; i++) {
        const struct fikit_kernel_stats *ks = fikit_measure_kernel(&back, keys[i]);
        cr_assert_not_null(ks);
        cr_assert_eq(ks->duration.count, 5);
        cr_assert_eq(ks->duration.sum, fikit_measure_kernel(&st, keys[i])->duration.sum);
    }
    for (int i = 1; i < N; i++) {
        const struct fikit_gap_stats *gs = fikit_measure_gap(&back, keys[i - 1], keys[i]);
        cr_assert(gs && gs->gap.count == 1 && gs->gap.sum == 500 + (uint64_t)i);
    }
    cr_assert_null(fikit_measure_gap(&back, g, keys[0]), "a gap after an unrecorded kernel is left out");
    /* Saved again, the loaded store gives the same bytes. */
    char again[128];
    path_in_dir(again, sizeof again, "again.profile");
    cr_assert_eq(fikit_profile_save(again, &META, &back, &err), 0, "%s", err.msg);
    char cmd[400];
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", path, again);
    cr_assert_eq(system(cmd), 0, "a second round trip writes the same file");
    fikit_measure_destroy(&st);
    fikit_measure_destroy(&back);
}

/* The writer checks its text with the loader: a text the loader rejects is
 * refused with the loader's reason, and nothing is written. */
Test(profile, check_text_is_the_loader)
{
    struct fikit_err err;
    const char *good = "fikit-profile 3\ntask t\ndevice-model m\nbackend cuda\n";
    cr_assert_lt(fikit_profile_check_text("x.profile", good, strlen(good), &err), 0,
                 "no end line: rejected");
    cr_assert(strstr(err.msg, "not writing a profile that would not load (x.profile:"), "%s", err.msg);
    cr_assert(strstr(err.msg, "truncated: no end line"), "%s", err.msg);
}
