/* fikit sim's workload files: what a file reads as, every kind of bad input
 * rejected with FILE:LINE and the field, value and accepted values, a saved
 * workload read back identically, and every shipped workload loads. */
#include "sim/workload.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "scratch_dir.h"

static int parse(const char *text, struct fikit_sim_workload *w, struct fikit_err *err)
{
    return fikit_sim_workload_parse(text, strlen(text), "t.wl", w, err);
}

static const char GOOD[] =
    "fikit-sim-workload 1\n"
    "# a comment line\n"
    "\n"
    "name resnet50-serve   # a comment after fields\n"
    "kind service\n"
    "source H200 2026-12-04, bench/results: 218 launches # kept: free text\n"
    "seq\n"
    "L 18.6 9.5 49 256 conv%20a\n"
    "L 0 10 1 1024 relu\n"
    "  L\t20.125\t0.001\t4294967295\t65536\tconv%20a\n"
    "S 3\n"
    "end\n"
    "seq\n"
    "L 1000 10000000 1 1 %23hash#inside\n"
    "S 0\n"
    "end\n";

Test(sim_workload, parses_every_field)
{
    struct fikit_sim_workload w;
    struct fikit_err err = {{0}};
    cr_assert_eq(parse(GOOD, &w, &err), 0, "%s", err.msg);
    cr_assert_str_eq(w.name, "resnet50-serve");
    cr_assert_eq(w.kind, FIKIT_SIM_SERVICE);
    cr_assert_str_eq(w.source, "H200 2026-12-04, bench/results: 218 launches # kept: free text");
    cr_assert_eq(w.nseqs, 2);
    cr_assert_eq(w.nsteps, 6);
    cr_assert_eq(w.seqs[0].first, 0);
    cr_assert_eq(w.seqs[0].n, 4);
    cr_assert_eq(w.seqs[1].first, 4);
    cr_assert_eq(w.seqs[1].n, 2);
    cr_assert_eq(w.nkernels, 3);
    cr_assert_str_eq(w.kernels[0], "conv a");
    cr_assert_str_eq(w.kernels[1], "relu");
    cr_assert_str_eq(w.kernels[2], "#hash#inside");

    const struct fikit_sim_step *s = w.steps;
    cr_assert_eq(s[0].op, FIKIT_SIM_LAUNCH);
    cr_assert_eq(s[0].host_ns, 18600);
    cr_assert_eq(s[0].dur_ns, 9500);
    cr_assert_eq(s[0].blocks, 49);
    cr_assert_eq(s[0].threads, 256);
    cr_assert_eq(s[0].kernel, 0);
    cr_assert_eq(s[1].host_ns, 0);
    cr_assert_eq(s[1].kernel, 1);
    cr_assert_eq(s[2].host_ns, 20125);
    cr_assert_eq(s[2].dur_ns, 1);
    cr_assert_eq(s[2].blocks, 4294967295u);
    cr_assert_eq(s[2].threads, 65536);
    cr_assert_eq(s[2].kernel, 0);
    cr_assert_eq(s[3].op, FIKIT_SIM_SYNC);
    cr_assert_eq(s[3].host_ns, 3000);
    cr_assert_eq(s[3].dur_ns, 0);
    cr_assert_eq(s[4].host_ns, 1000000);
    cr_assert_eq(s[4].dur_ns, 10000000000ull);
    cr_assert_eq(s[4].kernel, 2);
    fikit_sim_workload_free(&w);
    cr_assert_null(w.steps);
    fikit_sim_workload_free(&w); /* twice is harmless */
}

Test(sim_workload, loop_may_end_without_sync_and_source_is_optional)
{
    struct fikit_sim_workload w;
    struct fikit_err err = {{0}};
    const char *t = "fikit-sim-workload 1\r\nname train\r\nkind loop\r\nseq\r\nL 5 1200 4096 256 k\r\n"
                    "end";
    cr_assert_eq(parse(t, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(w.kind, FIKIT_SIM_LOOP);
    cr_assert_str_eq(w.source, "");
    cr_assert_eq(w.nsteps, 1);
    cr_assert_eq(w.steps[0].dur_ns, 1200000);
    fikit_sim_workload_free(&w);
}

/* Each bad input: the exact message, and nothing left in *out. */
static void rejects(const char *text, int code, const char *msg)
{
    struct fikit_sim_workload w;
    struct fikit_err err = {{0}};
    int rc = parse(text, &w, &err);
    cr_assert_eq(rc, code, "rc %d for:\n%s\nmessage: %s", rc, text, err.msg);
    cr_assert_str_eq(err.msg, msg, "for:\n%s", text);
    cr_assert_null(w.steps);
    cr_assert_null(w.seqs);
    cr_assert_null(w.kernels);
    cr_assert_eq(w.nsteps + w.nseqs + w.nkernels, 0);
}

#define HDR "fikit-sim-workload 1\nname x\nkind service\n"
#define HDRL "fikit-sim-workload 1\nname x\nkind loop\n"

Test(sim_workload, rejects_the_header)
{
    rejects("", -EINVAL, "t.wl: empty file; the first line must be 'fikit-sim-workload 1'");
    rejects("fikit-profile 1\n", -EINVAL,
            "t.wl:1: not a fikit sim workload (the first line must be 'fikit-sim-workload 1')");
    rejects("# comment\nfikit-sim-workload 1\n", -EINVAL,
            "t.wl:1: not a fikit sim workload (the first line must be 'fikit-sim-workload 1')");
    rejects("fikit-sim-workload 2\n", -EPROTO,
            "t.wl:1: format version '2'; this fikit reads version 1");
    rejects("fikit-sim-workload\n", -EPROTO,
            "t.wl:1: format version ''; this fikit reads version 1");
    rejects("fikit-sim-workload 1\nkind service\nseq\nS 1\nend\n", -EINVAL,
            "t.wl:3: seq before the name line; accepted: the header (name, kind, source) first");
    rejects("fikit-sim-workload 1\nname x\nseq\n", -EINVAL,
            "t.wl:3: seq before the kind line; accepted: the header (name, kind, source) first");
    rejects("fikit-sim-workload 1\nname x\n", -EINVAL,
            "t.wl:2: no kind line; accepted: a header with name and kind");
    rejects(HDR, -EINVAL, "t.wl:3: no seq; accepted: at least one sequence");
    rejects(HDR "name y\n", -EINVAL, "t.wl:4: a second name line; accepted: one");
    rejects(HDR "kind loop\n", -EINVAL, "t.wl:4: a second kind line; accepted: one");
    rejects(HDR "source a\nsource b\n", -EINVAL, "t.wl:5: a second source line; accepted: one");
    rejects("fikit-sim-workload 1\nname a b\n", -EINVAL, "t.wl:2: name takes one field; found 2");
    rejects("fikit-sim-workload 1\nname 0123456789012345678901234567890123456789012345678901234567890123\n",
            -EINVAL,
            "t.wl:2: name '0123456789012345678901234567890123456789012345678901234567890...': "
            "accepted: 1 to 63 bytes from '!' to '~', not beginning with '#'");
    rejects("fikit-sim-workload 1\nname x\nkind batch\n", -EINVAL,
            "t.wl:3: kind 'batch': accepted: service, loop");
    rejects(HDR "seq\nS 1\nend\nkind loop\n", -EINVAL,
            "t.wl:7: kind after the first seq; accepted: header lines (name, kind, source) before "
            "the first seq");
    rejects(HDR "seq\nS 1\nend\nsource late\n", -EINVAL,
            "t.wl:7: source after the first seq; accepted: header lines (name, kind, source) "
            "before the first seq");
    rejects(HDR "source a\x01"
                "b\n",
            -EINVAL, "t.wl:4: source: a control byte 0x01; accepted: text");
    rejects(HDR "bogus 1\n", -EINVAL,
            "t.wl:4: unknown record 'bogus'; accepted: name, kind, source, seq, L, S, end, # comments");
    rejects(HDR "seq\nS 1 2 3 4 5 6 7 8\nend\n", -EINVAL, "t.wl:5: more than 8 fields");
}

/* strlen stops at a NUL: this one passes the length. */
Test(sim_workload, rejects_nul)
{
    struct fikit_sim_workload w;
    struct fikit_err err = {{0}};
    const char t[] = "fikit-sim-workload 1\nname x\0y\nkind loop\n";
    cr_assert_eq(fikit_sim_workload_parse(t, sizeof t - 1, "t.wl", &w, &err), -EINVAL);
    cr_assert_str_eq(err.msg, "t.wl:2: a NUL byte in the line: not a text file");
}

Test(sim_workload, rejects_the_structure)
{
    rejects(HDR "seq\nseq\n", -EINVAL,
            "t.wl:5: seq inside the seq begun at line 4; accepted: 'end' first");
    rejects(HDR "end\n", -EINVAL, "t.wl:4: end outside a seq; accepted: 'end' closes a seq");
    rejects(HDR "L 1 1 1 1 k\n", -EINVAL,
            "t.wl:4: L outside a seq; accepted: steps between 'seq' and 'end'");
    rejects(HDR "seq\nend\n", -EINVAL,
            "t.wl:5: the seq begun at line 4 has no steps; accepted: at least one L or S");
    rejects(HDR "seq\nS 1\nL 1 1 1 1 k\nend\n", -EINVAL,
            "t.wl:7: the seq begun at line 4 ends with L; a service's sequence must end with S (a "
            "request ends with a sync)");
    rejects(HDR "seq\nS 1\nend\nseq\nS 1\n", -EINVAL,
            "t.wl:8: truncated: the seq begun at line 7 has no end");
    rejects(HDR "seq x\n", -EINVAL, "t.wl:4: seq takes no fields; found 1");
    rejects(HDR "seq\nS 1\nend now\n", -EINVAL, "t.wl:6: end takes no fields; found 1");
}

/* A loop whose one step is before value after, rejected on that line with
 * "FIELD 'value': what". */
static void rejects_field(const char *before, const char *value, const char *after, const char *field,
                          const char *what)
{
    char t[300], want[400];
    snprintf(t, sizeof t, HDRL "seq\n%s%s%s\nend\n", before, value, after);
    snprintf(want, sizeof want, "t.wl:5: %s '%s': %s", field, value, what);
    rejects(t, -EINVAL, want);
}

Test(sim_workload, rejects_each_field)
{
    rejects(HDRL "seq\nL 1 1 1 1\nend\n", -EINVAL,
            "t.wl:5: L takes 5 fields, 'L HOST_US DUR_US BLOCKS THREADS NAME'; found 4");
    rejects(HDRL "seq\nS\nend\n", -EINVAL, "t.wl:5: S takes 1 field, 'S HOST_US'; found 0");
    const char *host = "accepted: CPU time in microseconds, 0 to 10000000 (10 s), at most 3 decimals";
    const char *dur = "accepted: a duration in microseconds, more than 0 and at most 10000000 (10 s), "
                      "at most 3 decimals";
    const char *bad_host[] = {"-1", "1.2345", "1e3", "10000000.001", "x", "1.", ".5", "+1"};
    for (size_t i = 0; i < sizeof bad_host / sizeof *bad_host; i++) {
        rejects_field("L ", bad_host[i], " 1 1 1 k", "HOST_US", host);
        rejects_field("S ", bad_host[i], "", "HOST_US", host);
    }
    const char *bad_dur[] = {"0", "0.000", "10000000.001", "99999999999999999999", "1,5"};
    for (size_t i = 0; i < sizeof bad_dur / sizeof *bad_dur; i++)
        rejects_field("L 1 ", bad_dur[i], " 1 1 k", "DUR_US", dur);
    const char *blocks = "accepted: the grid's blocks, an integer from 1 to 4294967295";
    rejects_field("L 1 1 ", "0", " 1 k", "BLOCKS", blocks);
    rejects_field("L 1 1 ", "4294967296", " 1 k", "BLOCKS", blocks);
    const char *threads = "accepted: threads per block, an integer from 1 to 65536";
    rejects_field("L 1 1 1 ", "65537", " k", "THREADS", threads);
    rejects_field("L 1 1 1 ", "2.5", " k", "THREADS", threads);
    const char *escape = "bad escape; accepted: bytes '!' to '~' other than '%', and %XX (two hex "
                         "digits, not %00) for any other byte";
    rejects_field("L 1 1 1 1 ", "a%2", "", "NAME", escape);
    rejects_field("L 1 1 1 1 ", "a%00", "", "NAME", escape);
    char t[1400], name[1100];
    memset(name, 'n', 1024);
    name[1024] = '\0';
    snprintf(t, sizeof t, HDRL "seq\nL 1 1 1 1 %s\nend\n", name);
    rejects(t, -EINVAL,
            "t.wl:5: NAME 'nnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnnn...': 1024 bytes "
            "decoded; accepted: 1 to 1023");
    name[1023] = '\0';
    snprintf(t, sizeof t, HDRL "seq\nL 1 1 1 1 %s\nend\n", name);
    struct fikit_sim_workload w;
    struct fikit_err err;
    cr_assert_eq(parse(t, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(strlen(w.kernels[0]), 1023);
    fikit_sim_workload_free(&w);
}

Test(sim_workload, rejects_more_than_a_million_steps)
{
    size_t n = FIKIT_SIM_MAX_STEPS + 1, cap = 64 + n * 8;
    char *t = malloc(cap), *p = t;
    cr_assert_not_null(t);
    p += sprintf(p, HDRL "seq\n");
    for (size_t i = 0; i < n; i++) {
        memcpy(p, "S 1\n", 4);
        p += 4;
    }
    p += sprintf(p, "end\n");
    struct fikit_sim_workload w;
    struct fikit_err err = {{0}};
    cr_assert_eq(fikit_sim_workload_parse(t, (size_t)(p - t), "big.wl", &w, &err), -E2BIG);
    cr_assert_str_eq(err.msg, "big.wl:1000005: more than 1000000 steps; accepted: at most 1000000 in a file");
    /* exactly the bound is accepted */
    p -= 8;
    p += sprintf(p, "end\n");
    cr_assert_eq(fikit_sim_workload_parse(t, (size_t)(p - t), "big.wl", &w, &err), 0, "%s", err.msg);
    cr_assert_eq(w.nsteps, FIKIT_SIM_MAX_STEPS);
    fikit_sim_workload_free(&w);
    free(t);
}

static void same(const struct fikit_sim_workload *a, const struct fikit_sim_workload *b)
{
    cr_assert_str_eq(a->name, b->name);
    cr_assert_eq(a->kind, b->kind);
    cr_assert_str_eq(a->source, b->source);
    cr_assert_eq(a->nsteps, b->nsteps);
    cr_assert_eq(a->nseqs, b->nseqs);
    cr_assert_eq(a->nkernels, b->nkernels);
    for (size_t i = 0; i < a->nseqs; i++) {
        cr_assert_eq(a->seqs[i].first, b->seqs[i].first);
        cr_assert_eq(a->seqs[i].n, b->seqs[i].n);
    }
    for (size_t i = 0; i < a->nsteps; i++) {
        const struct fikit_sim_step *x = &a->steps[i], *y = &b->steps[i];
        cr_assert(x->op == y->op && x->host_ns == y->host_ns && x->dur_ns == y->dur_ns &&
                      x->blocks == y->blocks && x->threads == y->threads && x->kernel == y->kernel,
                  "step %zu differs", i);
    }
    for (size_t i = 0; i < a->nkernels; i++)
        cr_assert_str_eq(a->kernels[i], b->kernels[i]);
}

Test(sim_workload, round_trip, .init = make_dir, .fini = remove_dir)
{
    struct fikit_sim_workload w, back;
    struct fikit_err err = {{0}};
    cr_assert_eq(parse(GOOD, &w, &err), 0, "%s", err.msg);
    /* Names with every awkward byte, and odd durations. */
    free(w.kernels[1]);
    w.kernels[1] = strdup("sp ace%per\tcent\x7f\xc3\xa9#");
    w.steps[0].host_ns = 1;
    w.steps[0].dur_ns = 1234567891;
    char path[128];
    snprintf(path, sizeof path, "%s/w.wl", dir);
    cr_assert_eq(fikit_sim_workload_save(path, &w, &err), 0, "%s", err.msg);
    cr_assert_eq(fikit_sim_workload_load(path, &back, &err), 0, "%s", err.msg);
    same(&w, &back);
    /* Saving what was loaded gives the same bytes. */
    char path2[140], cmd[400];
    snprintf(path2, sizeof path2, "%s/again.wl", dir);
    cr_assert_eq(fikit_sim_workload_save(path2, &back, &err), 0, "%s", err.msg);
    snprintf(cmd, sizeof cmd, "cmp -s %s %s", path, path2);
    cr_assert_eq(system(cmd), 0);
    fikit_sim_workload_free(&back);

    /* A workload the format cannot hold is refused and the file kept. */
    w.steps[3].op = FIKIT_SIM_LAUNCH; /* a service's request ending with a launch */
    w.steps[3].dur_ns = 1;
    w.steps[3].blocks = w.steps[3].threads = 1;
    cr_assert_eq(fikit_sim_workload_save(path, &w, &err), -EINVAL);
    cr_assert(strstr(err.msg, "sequence 0 of a service does not end with a sync"), "%s", err.msg);
    w.steps[3].op = FIKIT_SIM_SYNC;
    w.steps[0].dur_ns = 0;
    cr_assert_eq(fikit_sim_workload_save(path, &w, &err), -EINVAL);
    cr_assert(strstr(err.msg, "step 0: duration 0 ns"), "%s", err.msg);
    w.steps[0].dur_ns = 1;
    snprintf(w.source, sizeof w.source, "two\nlines");
    cr_assert_eq(fikit_sim_workload_save(path, &w, &err), -EINVAL);
    cr_assert(strstr(err.msg, "control byte"), "%s", err.msg);
    cr_assert_eq(fikit_sim_workload_load(path, &back, &err), 0, "%s", err.msg);
    cr_assert_eq(back.steps[0].dur_ns, 1234567891);
    fikit_sim_workload_free(&back);
    fikit_sim_workload_free(&w);

    /* No temporary file left behind. */
    DIR *d = opendir(dir);
    struct dirent *e;
    int files = 0;
    while ((e = readdir(d)))
        files += e->d_name[0] != '.';
    closedir(d);
    cr_assert_eq(files, 2);
}

Test(sim_workload, load_errors, .init = make_dir, .fini = remove_dir)
{
    struct fikit_sim_workload w;
    struct fikit_err err = {{0}};
    char path[128];
    snprintf(path, sizeof path, "%s/missing.wl", dir);
    cr_assert_eq(fikit_sim_workload_load(path, &w, &err), -ENOENT);
    cr_assert(strstr(err.msg, "missing.wl: No such file or directory"), "%s", err.msg);
    cr_assert_eq(fikit_sim_workload_load(dir, &w, &err), -EINVAL);
    cr_assert(strstr(err.msg, ": not a regular file"), "%s", err.msg);
    snprintf(path, sizeof path, "%s/bad.wl", dir);
    FILE *f = fopen(path, "w");
    fputs(HDR "seq\nS 1\n", f);
    fclose(f);
    cr_assert_eq(fikit_sim_workload_load(path, &w, &err), -EINVAL);
    char want[200];
    snprintf(want, sizeof want, "%s:5: truncated: the seq begun at line 4 has no end", path);
    cr_assert_str_eq(err.msg, want);
}

/* Every workload shipped in sim/workloads/ loads, and tells a sequence's
 * shape that fits its kind. */
Test(sim_workload, shipped_files_load)
{
    char wdir[1024];
    snprintf(wdir, sizeof wdir, "%s/sim/workloads", FIKIT_SOURCE_DIR);
    DIR *d = opendir(wdir);
    cr_assert_not_null(d, "%s", wdir);
    struct dirent *e;
    int n = 0;
    while ((e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 4 || strcmp(e->d_name + l - 3, ".wl"))
            continue;
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", wdir, e->d_name);
        struct fikit_sim_workload w;
        struct fikit_err err = {{0}};
        cr_assert_eq(fikit_sim_workload_load(path, &w, &err), 0, "%s", err.msg);
        cr_assert_gt(w.nseqs, 0);
        cr_assert_gt(strlen(w.source), 0, "%s: no source line", path);
        char want[80];
        snprintf(want, sizeof want, "%s.wl", w.name);
        cr_assert_str_eq(e->d_name, want, "the name line should match the file name");
        fikit_sim_workload_free(&w);
        n++;
    }
    closedir(d);
    cr_assert_geq(n, 5, "%d workload files in %s", n, wdir);
    /* The four pairs of bench/evaluate (both PyTorch services share resnet50's training). */
    const char *want[] = {"cuda-service", "cuda-batch", "resnet50-serve", "bert-serve", "resnet50-train"};
    for (size_t i = 0; i < sizeof want / sizeof *want; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s.wl", wdir, want[i]);
        struct fikit_sim_workload w;
        struct fikit_err err = {{0}};
        cr_assert_eq(fikit_sim_workload_load(path, &w, &err), 0, "%s", err.msg);
        cr_assert_eq(w.kind, strstr(want[i], "serv") ? FIKIT_SIM_SERVICE : FIKIT_SIM_LOOP, "%s", want[i]);
        cr_assert_geq(w.nseqs, 8, "%s: %zu sequences", want[i], w.nseqs);
        fikit_sim_workload_free(&w);
    }
}

/* A file named by $FIKIT_SIM_WORKLOAD_FILE loads (integration.sim_trace runs
 * this on what bench/sim-workload-from-trace wrote); skipped without it. */
Test(sim_workload, env_file)
{
    const char *path = getenv("FIKIT_SIM_WORKLOAD_FILE");
    if (!path || !*path)
        cr_skip_test("FIKIT_SIM_WORKLOAD_FILE is not set");
    struct fikit_sim_workload w;
    struct fikit_err err = {{0}};
    cr_assert_eq(fikit_sim_workload_load(path, &w, &err), 0, "%s", err.msg);
    size_t launches = 0, syncs = 0;
    for (size_t i = 0; i < w.nsteps; i++)
        *(w.steps[i].op == FIKIT_SIM_LAUNCH ? &launches : &syncs) += 1;
    printf("loaded %s: name %s, %s, %zu sequences, %zu launches, %zu syncs, %zu kernels\n", path, w.name,
           w.kind == FIKIT_SIM_SERVICE ? "service" : "loop", w.nseqs, launches, syncs, w.nkernels);
    fflush(stdout);
    fikit_sim_workload_free(&w);
}
