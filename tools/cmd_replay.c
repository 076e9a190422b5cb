/* fikit replay: the policy, made visible before any GPU is involved. */
#include "conf/config.h"
#include "core/replay.h"
#include "tools/commands.h"
#include "tools/options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: fikit replay [OPTIONS] TIMELINE\n"
            "\n"
            "Replays a text timeline of kernel launches through fikit's scheduling policy (the\n"
            "client's admission and fikitd's scheduler) on a simulated device and prints every\n"
            "decision (run, fill, pace, hold, grant) and the resulting\n"
            "device timeline, then per task the makespan alone and shared.\n"
            "\n"
            "Each task is first measured alone, as 'fikit-launch --measure' would: kernel\n"
            "durations and the idle gap after each (previous, current) kernel pair. Then all\n"
            "tasks run together; the device runs one kernel at a time and pays the substrate\n"
            "cost on every switch between tasks.\n"
            "\n"
            "TIMELINE lines: TIME_US TASK PRIORITY KERNEL DURATION_US [STREAM]\n"
            "  TIME_US is when the task issues the launch (later if an earlier launch of the\n"
            "  task was held); PRIORITY 0 is the highest, 9 the lowest; '#' starts a comment.\n"
            "  Use - to read standard input.\n"
            "\n"
            "Options (defaults come from fikit.ini, see --config):\n"
            "  -c, --config FILE          read this fikit.ini\n"
            "  -p, --policy POLICY        fill, strict or passthrough\n"
            "  -s, --substrate-cost US    cost of a switch between tasks, microseconds\n"
            "  -m, --margin US            safety margin added to every fit, microseconds\n"
            "  -g, --gap-confidence Q     quantile of the remaining gap relied on (0..0.5)\n"
            "  -i, --idle-after US        idle threshold of a task, microseconds (0: learned)\n"
            "  -q, --quiet                print only the per-task summary\n"
            "  -h, --help                 show this help\n"
            "\n"
            "Exit status: 0 on success, 1 if the timeline or configuration is invalid,\n"
            "2 on a usage error.\n");
}

static int parse_us(const char *opt, const char *s, uint64_t *ns)
{
    char *end;
    double v = strtod(s, &end);
    if (!*s || *end || v < 0 || v > 1e9) {
        fprintf(stderr, "fikit replay: %s: '%s' is not a number of microseconds (0 to 1e9)\n", opt, s);
        return -1;
    }
    *ns = (uint64_t)(v * 1000.0 + 0.5);
    return 0;
}

int fikit_cmd_replay(int argc, char **argv)
{
    const char *config = NULL, *policy = NULL, *cost = NULL, *margin = NULL, *conf = NULL,
               *idle = NULL;
    bool quiet = false;
    const struct fikit_tool_opt opts[] = {
        FIKIT_OPT("config", 'c', &config), FIKIT_OPT("policy", 'p', &policy),
        FIKIT_OPT("substrate-cost", 's', &cost), FIKIT_OPT("margin", 'm', &margin),
        FIKIT_OPT("gap-confidence", 'g', &conf), FIKIT_OPT("idle-after", 'i', &idle),
        FIKIT_FLAG("quiet", 'q', &quiet), {0}};
    int first = fikit_tool_options(argc, argv, opts, usage);
    if (first != argc - 1) {
        fprintf(stderr, "fikit replay: expected one TIMELINE file\n\n");
        usage(stderr);
        return 2;
    }
    struct fikit_config cfg;
    if (fikit_tool_config("replay", config, &cfg))
        return 1;
    struct fikit_sched_params p;
    fikit_config_sched_params(&cfg, -1, &p);
    if (policy && fikit_policy_parse(policy, &p.policy)) {
        fprintf(stderr, "fikit replay: --policy: '%s' is not accepted (accepted: %s)\n", policy,
                FIKIT_POLICY_NAMES);
        return 2;
    }
    if ((cost && parse_us("--substrate-cost", cost, &p.substrate_cost_ns)) ||
        (margin && parse_us("--margin", margin, &p.safety_margin_ns)) ||
        (idle && parse_us("--idle-after", idle, &p.idle_after_ns)))
        return 2; /* --idle-after 0: learned, as idle_after_us = auto */
    if (conf) {
        char *end;
        p.gap_confidence = strtod(conf, &end);
        if (!*conf || *end || p.gap_confidence < 0 || p.gap_confidence > 0.5) {
            fprintf(stderr, "fikit replay: --gap-confidence: '%s' is not a number from 0 to 0.5\n", conf);
            return 2;
        }
    }

    const char *path = argv[first];
    FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "re");
    if (!in) {
        perror(path);
        return 1;
    }
    struct fikit_replay_launch *l = NULL;
    size_t n = 0;
    struct fikit_err err;
    int rc = fikit_replay_parse(in, strcmp(path, "-") == 0 ? "<stdin>" : path, &l, &n, &err);
    if (in != stdin)
        fclose(in);
    if (rc) {
        fprintf(stderr, "fikit replay: %s\n", err.msg);
        return 1;
    }
    struct fikit_replay_result res;
    rc = fikit_replay_run(l, n, &p, quiet ? NULL : stdout, &res, &err);
    if (rc) {
        fprintf(stderr, "fikit replay: %s\n", err.msg);
        free(l);
        return 1;
    }
    if (quiet) {
        printf("# TASK PRIORITY LAUNCHES HELD FIT FREE FILLED MAKESPAN_ALONE_US MAKESPAN_SHARED_US RATIO\n");
        for (size_t t = 0; t < res.ntasks; t++) {
            const struct fikit_replay_task_result *R = &res.tasks[t];
            printf("%-10s %d %zu %zu %zu %zu %zu %.1f %.1f %.3f\n", R->task, R->priority, R->launches,
                   R->held, R->granted_fit, R->granted_free, R->filled, R->alone_makespan_ns / 1000.0,
                   R->shared_makespan_ns / 1000.0,
                   R->alone_makespan_ns ? (double)R->shared_makespan_ns / R->alone_makespan_ns : 1.0);
        }
    }
    free(l);
    return 0;
}
