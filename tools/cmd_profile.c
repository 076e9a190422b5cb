/* fikit profile show: what fikit measured about a task. */
#include "conf/config.h"
#include "core/budget.h"
#include "core/profile.h"
#include "tools/commands.h"
#include "tools/options.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f, "Usage: fikit profile show [-c FILE] [-n N] TASK\n"
               "       fikit profile path [-c FILE] TASK\n"
               "\n"
               "show: prints each profile of TASK (one per device model): per kernel its launch\n"
               "geometry and duration statistics (count, mean, p50, p90, p99, max), by total\n"
               "time; then the N longest typical gaps between kernel pairs.\n"
               "path: prints the directory holding TASK's profiles.\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE   read profile_dir from this fikit.ini\n"
               "  -n, --top N         gaps to list (default 20)\n"
               "  -h, --help          show this help\n"
               "\n"
               "Exit status: 0, or 1 if the task has no readable profile.\n");
}

static double us(uint64_t ns) { return (double)ns / 1000.0; }

static int by_total(const void *a, const void *b)
{
    const struct fikit_kernel_stats *x = *(const struct fikit_kernel_stats *const *)a;
    const struct fikit_kernel_stats *y = *(const struct fikit_kernel_stats *const *)b;
    return (x->duration.sum < y->duration.sum) - (x->duration.sum > y->duration.sum);
}

static int by_gap(const void *a, const void *b)
{
    const struct fikit_gap_stats *x = *(const struct fikit_gap_stats *const *)a;
    const struct fikit_gap_stats *y = *(const struct fikit_gap_stats *const *)b;
    uint64_t gx = fikit_stat_quantile(&x->gap, 0.5), gy = fikit_stat_quantile(&y->gap, 0.5);
    return (gx < gy) - (gx > gy);
}

static const char *name_of(const struct fikit_measure_store *st, uint64_t key)
{
    if (key == FIKIT_KEY_NONE)
        return "(start)";
    const struct fikit_kernel_desc *d = fikit_measure_desc(st, key);
    return d ? d->name : "?";
}

static int show_one(const char *path, int top)
{
    struct fikit_measure_store st;
    struct fikit_profile_meta meta;
    struct fikit_err err;
    fikit_measure_init(&st);
    if (fikit_profile_load(path, &meta, &st, &err)) {
        fprintf(stderr, "fikit profile: %s\n", err.msg);
        fikit_measure_destroy(&st);
        return 1;
    }
    size_t nk, ng;
    const struct fikit_kernel_stats **ks = fikit_measure_sorted_kernels(&st, &nk);
    const struct fikit_gap_stats **gs = fikit_measure_sorted_gaps(&st, &ng);
    qsort(ks, nk, sizeof *ks, by_total);
    qsort(gs, ng, sizeof *gs, by_gap);
    printf("%s\n  task %s on %s (%s): %zu kernels, %zu gap pairs, longest gap %.1f us\n", path,
           meta.task, meta.device_model, fikit_backend_kind_name(meta.backend), nk, ng,
           us(fikit_measure_max_gap(&st)));
    if (st.between_gaps)
        printf("  its bursts end in waits: %llu gaps came after one (idle between bursts); the longest gap "
               "inside a burst, %.1f us, is what its idle threshold is built on\n",
               (unsigned long long)st.between_gaps, us(st.inner_gap_max_ns));
    printf("\n");
    printf("  %-32s %-16s %-12s %8s %10s %10s %10s %10s %10s\n", "kernel", "grid", "block",
           "count", "mean_us", "p50_us", "p90_us", "p99_us", "max_us");
    for (size_t i = 0; i < nk; i++) {
        const struct fikit_kernel_desc *d = fikit_measure_desc(&st, ks[i]->key);
        const struct fikit_stat *s = &ks[i]->duration;
        char grid[40], block[40];
        snprintf(grid, sizeof grid, "%u,%u,%u", d->grid[0], d->grid[1], d->grid[2]);
        snprintf(block, sizeof block, "%u,%u,%u", d->block[0], d->block[1], d->block[2]);
        printf("  %-32.32s %-16s %-12s %8" PRIu64 " %10.1f %10.1f %10.1f %10.1f %10.1f\n", d->name,
               grid, block, s->count, us(fikit_stat_mean(s)), us(fikit_stat_quantile(s, 0.5)),
               us(fikit_stat_quantile(s, 0.9)), us(fikit_stat_quantile(s, 0.99)), us(s->max));
    }
    printf("\n  idle gap after a kernel, given the kernel before it; longest median first:\n");
    printf("  %-28s %-28s %8s %10s %10s %10s %10s\n", "after kernel", "preceded by", "count",
           "p10_us", "p50_us", "p90_us", "max_us");
    for (size_t i = 0; i < ng && (int)i < top; i++) {
        const struct fikit_stat *s = &gs[i]->gap;
        printf("  %-28.28s %-28.28s %8" PRIu64 " %10.1f %10.1f %10.1f %10.1f\n",
               name_of(&st, gs[i]->key), name_of(&st, gs[i]->prev), s->count,
               us(fikit_stat_quantile(s, 0.1)), us(fikit_stat_quantile(s, 0.5)),
               us(fikit_stat_quantile(s, 0.9)), us(s->max));
    }
    size_t nb;
    const struct fikit_burst_stats **bs = fikit_measure_sorted_bursts(&st, &nb);
    printf("\n  bursts alone (runs alone on the device), by launches: what a latency_budget is judged against\n");
    if (!nb)
        printf("  none recorded: run the task alone under fikit to hold a latency_budget for it\n");
    else
        printf("  %8s %8s %10s %10s %10s\n", "launches", "count", "p50_us", "p99_us", "max_us");
    for (size_t i = 0; bs && i < nb; i++) {
        const struct fikit_stat *s = &bs[i]->len;
        printf("  %8u %8" PRIu64 " %10.1f %10.1f %10.1f%s\n", bs[i]->launches, s->count,
               us(fikit_stat_quantile(s, 0.5)), us(fikit_stat_quantile(s, 0.99)), us(s->max),
               s->count < FIKIT_BUDGET_REF_MIN ? "  (too few to judge)" : "");
    }
    printf("\n");
    free(ks);
    free(gs);
    free(bs);
    fikit_measure_destroy(&st);
    return 0;
}

static int is_profile(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return n > 8 && strcmp(e->d_name + n - 8, ".profile") == 0;
}

int fikit_cmd_profile(int argc, char **argv)
{
    const char *config = NULL, *top_arg = NULL;
    const struct fikit_tool_opt opts[] = {FIKIT_OPT("config", 'c', &config),
                                          FIKIT_OPT("top", 'n', &top_arg), {0}};
    if (argc >= 2 && (!strcmp(argv[1], "--help") || !strcmp(argv[1], "-h"))) {
        usage(stdout);
        return 0;
    }
    if (argc < 2 || (strcmp(argv[1], "show") && strcmp(argv[1], "path"))) {
        fprintf(stderr, "fikit profile: expected an action: show or path\n\n");
        usage(stderr);
        return 2;
    }
    const char *action = argv[1];
    argc--;
    argv++;
    int first = fikit_tool_options(argc, argv, opts, usage);
    int top = top_arg ? atoi(top_arg) : 20;
    if (first + 1 != argc) {
        fprintf(stderr, "fikit profile %s: expected one TASK\n\n", action);
        usage(stderr);
        return 2;
    }
    const char *task = argv[first];
    struct fikit_config cfg;
    if (fikit_tool_config("profile", config, &cfg))
        return 1;
    char dir[4096], tdir[4200];
    fikit_config_profile_dir(&cfg, dir, sizeof dir);
    snprintf(tdir, sizeof tdir, "%s/%s", dir, task);
    if (!strcmp(action, "path")) {
        printf("%s\n", tdir);
        return 0;
    }
    /* One profile per device model, in name order. */
    struct dirent **files;
    int shown = scandir(tdir, &files, is_profile, alphasort), rc = 0;
    if (shown < 0) {
        fprintf(stderr, "fikit profile: task %s has no profiles (%s: no such directory); measure "
                        "it with: fikit-launch --task %s --measure -- PROGRAM\n", task, tdir, task);
        return 1;
    }
    for (int i = 0; i < shown; i++) {
        char path[4500];
        snprintf(path, sizeof path, "%s/%s", tdir, files[i]->d_name);
        rc |= show_one(path, top);
        free(files[i]);
    }
    free(files);
    if (!shown) {
        fprintf(stderr, "fikit profile: no profiles in %s\n", tdir);
        return 1;
    }
    return rc;
}
