/* fikit sim: what fikit's policy does to a service and a training job on a
 * modelled GPU, in seconds and the same every time (sim/, docs/sim.md). */
#include "conf/config.h"
#include "core/clock.h"
#include "sim/experiment.h"
#include "tools/commands.h"
#include "tools/options.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: fikit sim [OPTIONS]\n"
            "\n"
            "Runs a service and a training job on a model of a shared GPU, in each sharing mode,\n"
            "with fikit's own policy where fikit schedules (the same admission and scheduling\n"
            "code that programs and fikitd run, with fikit.ini's settings), and prints what\n"
            "bench/evaluate prints on a GPU: the service's p50 and p99 and their ratios to\n"
            "alone with 95 %% intervals, the job's throughput against alone, and what fikit did.\n"
            "Both tasks are first run alone and measured, as under fikit-launch --measure;\n"
            "the service's Poisson request rate is LOAD of its capacity alone. Deterministic\n"
            "for a seed. It is a model: every claim about a GPU comes from the GPU\n"
            "(docs/sim.md says where the model fits the H200 and where not).\n"
            "\n"
            "Options:\n"
            "  -c, --config FILE      fikit.ini whose policy runs (default: as fikitd finds it)\n"
            "  -p, --pair NAME        cuda, resnet50, bert or all (default resnet50): the\n"
            "                         workloads of bench/evaluate, from sim/workloads/\n"
            "      --service FILE     a service workload file instead (docs/sim-workload-format.md)\n"
            "      --loop FILE        a loop workload file instead\n"
            "  -d, --device NAME      a device file: NAME.ini in sim/devices/ or a path\n"
            "                         (default h200)\n"
            "  -s, --substrate S      timeslice, mps or both (default both): which modes run\n"
            "  -m, --modes LIST       modes, comma-separated, from: " FIKIT_SIM_MODE_NAMES "\n"
            "                         (default all of the substrate)\n"
            "  -l, --load X           the service's load, 0 < X < 1 (default 0.5)\n"
            "  -n, --requests N       service requests counted per mode (default 20000)\n"
            "  -w, --warmup N         requests not counted first (default 200)\n"
            "      --seed N           the seed of the arrivals and request choice (default 1)\n"
            "      --beside-pct N     the job's thread cap in mode beside (default 50)\n"
            "      --mps-client-priority  fikit's MPS modes give the job a lower MPS client\n"
            "                         priority (CUDA_MPS_CLIENT_PRIORITY) even where fikit.ini\n"
            "                         would not (it does for priorities 1-9 on MPS)\n"
            "  fikit-mps runs the job as fikit-launch starts a priority-9 task with no [task]\n"
            "  section (mps_lower_share: beside at mps_lower_thread_percentage by default);\n"
            "  fikit-alone runs the service alone under fikit (its own time per launch,\n"
            "  the device file's fikit_launch_us); fikit-alone-mps the same as an MPS\n"
            "  client (MPS's own time per launch too: mps_launch_us).\n"
            "      --budget X         the service's latency_budget in fikit's modes, 0 (off) or\n"
            "                         1..10 (default: fikit.ini's for priority 0); the budget\n"
            "                         column says where its controller ended and how often it\n"
            "                         cut and climbed\n"
            "      --sm-shares        on MPS, the budget also sets a beside job's thread cap at\n"
            "                         run time (with mps_lower_cap = launches in fikit.ini the\n"
            "                         share is kept per launch instead, as fikit does on a GPU:\n"
            "                         while the service is active, the whole device otherwise)\n"
            "      --budget-step N    the budget's knobs fixed at step N of its ladder (0: the job\n"
            "                         waits while the service is active .. 13: beside, the whole\n"
            "                         device at rest; a job in gaps stops at 6): a fixed setting\n"
            "                         to hold the controller against (core/budget.h)\n"
            "      --service-pace F   the service's kernels take F times as long in every run after\n"
            "                         the one its budget's reference comes from (0.5..2, default\n"
            "                         1): a service whose pace moved since its profile, as on an\n"
            "                         H100 its p99 alone did by up to 2.9x between runs\n"
            "      --json FILE        also write the results as JSON\n"
            "      --trace FILE       a Perfetto trace (Chrome JSON) of the pair's run, for one\n"
            "                         pair and one mode: its first --trace-ms of simulated time\n"
            "                         (each kernel, request, hold and fill); open it in\n"
            "                         https://ui.perfetto.dev\n"
            "      --trace-ms MS      how much of the run the trace holds (default 200)\n"
            "  -q, --quiet            no progress on stderr\n"
            "  -h, --help             show this help\n"
            "\n"
            "Files are looked up in $FIKIT_SIM_DIR, then fikit's source tree, then the installed\n"
            "data folder (%s).\n"
            "\n"
            "Exit status: 0 on success, 1 if a file or the run failed, 2 on a usage error.\n",
            FIKIT_SIM_INSTALL_DIR);
}

/* NAME (in sub, with suffix) or a path, into buf. */
static int find_file(const char *name, const char *sub, const char *suffix, char *buf, size_t len)
{
    if (strchr(name, '/')) {
        snprintf(buf, len, "%s", name);
        return 0;
    }
    const char *dirs[] = {getenv("FIKIT_SIM_DIR"), FIKIT_SIM_SOURCE_DIR, FIKIT_SIM_INSTALL_DIR};
    for (size_t i = 0; i < 3; i++) {
        if (!dirs[i] || !*dirs[i])
            continue;
        struct stat st;
        snprintf(buf, len, "%s/%s/%s%s", dirs[i], sub, name, suffix);
        if (stat(buf, &st) == 0)
            return 0;
    }
    snprintf(buf, len, "%s/%s/%s%s", FIKIT_SIM_INSTALL_DIR, sub, name, suffix);
    return -ENOENT;
}

struct pair {
    const char *name, *service, *loop;
};

static const struct pair pairs[] = {
    {"cuda", "cuda-service", "cuda-batch"},
    {"resnet50", "resnet50-serve", "resnet50-train"},
    {"bert", "bert-serve", "resnet50-train"},
};
#define NPAIRS (sizeof pairs / sizeof pairs[0])

static int load_workload(const char *name, struct fikit_sim_workload *w)
{
    char path[4096];
    if (find_file(name, "workloads", ".wl", path, sizeof path) != 0) {
        fprintf(stderr, "fikit sim: workload '%s': no %s.wl in $FIKIT_SIM_DIR/workloads, %s/workloads or %s/workloads\n",
                name, name, FIKIT_SIM_SOURCE_DIR, FIKIT_SIM_INSTALL_DIR);
        return -1;
    }
    struct fikit_err err;
    if (fikit_sim_workload_load(path, w, &err)) {
        fprintf(stderr, "fikit sim: %s\n", err.msg);
        return -1;
    }
    return 0;
}

static void progress(const char *what, void *user)
{
    if (user)
        fprintf(stderr, "fikit sim: %s ...\n", what);
}

static void print_q(FILE *f, const char *key, struct fikit_sim_q q)
{
    fprintf(f, "\"%s\": [%.4f, %.4f, %.4f]", key, q.v, q.lo, q.hi);
}

static void print_report(const struct fikit_sim_experiment *x, const struct fikit_sim_report *r,
                         const char *pair, FILE *json, bool first)
{
    printf("\n%s: %s beside %s on %s, load %.2f (%.1f of %.1f requests/s), %llu requests a mode\n",
           pair, x->service->name, x->loop->name, x->dev->name, x->load, r->rate_rps, r->capacity_rps,
           (unsigned long long)x->requests);
    printf("alone: service p50 %.3f ms, p99 %.3f ms [%.3f, %.3f]; %s %.2f sequences/s\n", r->alone_p50.v,
           r->alone_p99.v, r->alone_p99.lo, r->alone_p99.hi, x->loop->name, r->loop_alone_per_s);
    if (x->budget > 0)
        printf("budget: %s p99 %.2fx alone at most (%u request sizes measured alone)%s\n",
               x->budget_of_requests ? "the requests'" : "each request size's", x->budget, r->burst_sizes,
               x->sm_shares ? ", SM shares on" : "");
    if (x->service_pace != 1.0)
        printf("service pace: its kernels take %.2fx as long as when its budget's reference was measured\n",
               x->service_pace);
    printf("%-15s %8s %8s %6s %6s %-15s %7s %7s %7s %7s %7s %8s %s\n", "mode", "p50_ms", "p99_ms", "p50_x",
           "p99_x", "p99_x_95%", "train_x", "holds", "grants", "fills", "paces", "held_ms",
           x->budget > 0 ? "budget" : "");
    for (int m = 0; m < FIKIT_SIM_MODES; m++) {
        const struct fikit_sim_row *w = &r->row[m];
        if (!w->done)
            continue;
        char ci[32], train[16];
        snprintf(ci, sizeof ci, "[%.2f, %.2f]", w->p99_ratio.lo, w->p99_ratio.hi);
        if (m == FIKIT_SIM_MODE_FIKIT_ALONE || m == FIKIT_SIM_MODE_FIKIT_ALONE_MPS)
            snprintf(train, sizeof train, "-");
        else
            snprintf(train, sizeof train, "%.2f", w->loop_ratio);
        char steered[128] = "";
        if (w->budgeted)
            snprintf(steered, sizeof steered, "step %d%s, pace %.2fx, bursts %.3fx at load %.2f, %llu cuts, %llu climbs",
                     w->budget_step, w->budget_unmeetable ? " (unmeetable)" : "", w->budget_pace, w->budget_bursts,
                     w->budget_load, (unsigned long long)w->budget_cuts, (unsigned long long)w->budget_climbs);
        printf("%-15s %8.3f %8.3f %6.2f %6.2f %-15s %7s %7llu %7llu %7llu %7llu %8.3f %s\n",
               fikit_sim_mode_name((enum fikit_sim_mode)m), w->p50.v, w->p99.v, w->p50_ratio.v,
               w->p99_ratio.v, ci, train, (unsigned long long)w->holds,
               (unsigned long long)w->grants, (unsigned long long)w->fills, (unsigned long long)w->paces,
               w->held_ms, steered);
    }
    if (!json)
        return;
    fprintf(json, "%s{\"pair\": \"%s\", \"service\": \"%s\", \"loop\": \"%s\", \"device\": \"%s\", "
                  "\"load\": %.3f, \"requests\": %llu, \"seed\": %llu, \"capacity_rps\": %.3f, "
                  "\"rate_rps\": %.3f, ",
            first ? "" : ",\n", pair, x->service->name, x->loop->name, x->dev->name, x->load,
            (unsigned long long)x->requests, (unsigned long long)x->seed, r->capacity_rps, r->rate_rps);
    print_q(json, "alone_p50_ms", r->alone_p50);
    fprintf(json, ", ");
    print_q(json, "alone_p99_ms", r->alone_p99);
    fprintf(json, ", \"loop_alone_per_s\": %.4f, \"modes\": {", r->loop_alone_per_s);
    bool any = false;
    for (int m = 0; m < FIKIT_SIM_MODES; m++) {
        const struct fikit_sim_row *w = &r->row[m];
        if (!w->done)
            continue;
        fprintf(json, "%s\"%s\": {", any ? ", " : "", fikit_sim_mode_name((enum fikit_sim_mode)m));
        any = true;
        print_q(json, "p50_ms", w->p50);
        fprintf(json, ", ");
        print_q(json, "p99_ms", w->p99);
        fprintf(json, ", ");
        print_q(json, "p50_x", w->p50_ratio);
        fprintf(json, ", ");
        print_q(json, "p99_x", w->p99_ratio);
        fprintf(json, ", ");
        print_q(json, "burst_p99_x", w->burst_p99_ratio);
        fprintf(json, ", \"loop_per_s\": %.4f, \"loop_x\": %.4f, \"holds\": %llu, \"grants\": %llu, "
                      "\"fills\": %llu, \"paces\": %llu, \"held_ms\": %.4f, \"switches\": %llu",
                w->loop_per_s, w->loop_ratio, (unsigned long long)w->holds, (unsigned long long)w->grants,
                (unsigned long long)w->fills, (unsigned long long)w->paces, w->held_ms,
                (unsigned long long)w->switches);
        if (w->budgeted)
            fprintf(json, ", \"budget\": %.3f, \"budget_step\": %d, \"budget_pace\": %.4f, \"budget_load\": %.4f, "
                          "\"budget_bursts\": %.4f, \"budget_body\": %.4f, \"budget_cuts\": %llu, "
                          "\"budget_climbs\": %llu, \"budget_unmeetable\": %s",
                    x->budget, w->budget_step, w->budget_pace, w->budget_load, w->budget_bursts, w->budget_body,
                    (unsigned long long)w->budget_cuts,
                    (unsigned long long)w->budget_climbs, w->budget_unmeetable ? "true" : "false");
        fprintf(json, "}");
    }
    fprintf(json, "}}");
}

static int parse_u64(const char *opt, const char *s, uint64_t lo, uint64_t hi, uint64_t *out)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (!*s || *end || errno || *s == '-' || v < lo || v > hi) {
        fprintf(stderr, "fikit sim: %s: '%s': accepted: a whole number from %llu to %llu\n", opt, s,
                (unsigned long long)lo, (unsigned long long)hi);
        return -1;
    }
    *out = v;
    return 0;
}

int fikit_cmd_sim(int argc, char **argv)
{
    enum { OPT_SERVICE = 256, OPT_LOOP, OPT_SEED, OPT_JSON, OPT_PCT, OPT_PRIO, OPT_TRACE, OPT_TRACE_MS,
           OPT_BUDGET, OPT_SM_SHARES, OPT_SERVICE_PACE, OPT_BUDGET_STEP };
    const char *config = NULL, *pair = "resnet50", *service = NULL, *loop = NULL, *device = "h200",
               *substrate = "both", *modes = NULL, *json_path = NULL, *trace_path = NULL;
    const char *load_arg = NULL, *requests_arg = NULL, *warmup_arg = NULL, *seed_arg = NULL,
               *pct_arg = NULL, *trace_ms_arg = NULL, *budget_arg = NULL,
               *pace_arg = NULL, *step_arg = NULL;
    bool quiet = false, mps_prio = false, sm_shares = false;
    const struct fikit_tool_opt opts[] = {
        FIKIT_OPT("config", 'c', &config), FIKIT_OPT("pair", 'p', &pair),
        FIKIT_OPT("service", OPT_SERVICE, &service), FIKIT_OPT("loop", OPT_LOOP, &loop),
        FIKIT_OPT("device", 'd', &device), FIKIT_OPT("substrate", 's', &substrate),
        FIKIT_OPT("modes", 'm', &modes), FIKIT_OPT("load", 'l', &load_arg),
        FIKIT_OPT("requests", 'n', &requests_arg), FIKIT_OPT("warmup", 'w', &warmup_arg),
        FIKIT_OPT("seed", OPT_SEED, &seed_arg), FIKIT_OPT("beside-pct", OPT_PCT, &pct_arg),
        FIKIT_OPT("json", OPT_JSON, &json_path), FIKIT_FLAG("quiet", 'q', &quiet),
        FIKIT_FLAG("mps-client-priority", OPT_PRIO, &mps_prio),
        FIKIT_OPT("trace", OPT_TRACE, &trace_path), FIKIT_OPT("trace-ms", OPT_TRACE_MS, &trace_ms_arg),
        FIKIT_OPT("budget", OPT_BUDGET, &budget_arg), FIKIT_FLAG("sm-shares", OPT_SM_SHARES, &sm_shares),
        FIKIT_OPT("service-pace", OPT_SERVICE_PACE, &pace_arg),
        FIKIT_OPT("budget-step", OPT_BUDGET_STEP, &step_arg),
        {0}};
    int first = fikit_tool_options(argc, argv, opts, usage);
    double load = 0.5;
    if (load_arg) {
        char *end;
        load = strtod(load_arg, &end);
        if (!*load_arg || *end || !(load > 0 && load < 1)) {
            fprintf(stderr, "fikit sim: --load: '%s': accepted: a number more than 0 and less than 1\n",
                    load_arg);
            return 2;
        }
    }
    uint64_t requests = 20000, warmup = 200, seed = 1, pct = 50, trace_ms = 200;
    if ((requests_arg && parse_u64("--requests", requests_arg, 100, 10000000, &requests)) ||
        (warmup_arg && parse_u64("--warmup", warmup_arg, 0, 1000000, &warmup)) ||
        (seed_arg && parse_u64("--seed", seed_arg, 0, UINT64_MAX, &seed)) ||
        (pct_arg && parse_u64("--beside-pct", pct_arg, 1, 100, &pct)) ||
        (trace_ms_arg && parse_u64("--trace-ms", trace_ms_arg, 1, 600000, &trace_ms)))
        return 2;
    if (first != argc) {
        fprintf(stderr, "fikit sim: unexpected argument '%s'\n\n", argv[first]);
        usage(stderr);
        return 2;
    }
    if ((service != NULL) != (loop != NULL)) {
        fprintf(stderr, "fikit sim: --service and --loop go together\n");
        return 2;
    }
    uint32_t mode_mask = 0;
    if (strcmp(substrate, "timeslice") == 0) {
        mode_mask = 1u << FIKIT_SIM_MODE_TIMESLICE | 1u << FIKIT_SIM_MODE_FIKIT_TS |
                    1u << FIKIT_SIM_MODE_FIKIT_ALONE;
    } else if (strcmp(substrate, "mps") == 0) {
        mode_mask = 1u << FIKIT_SIM_MODE_MPS | 1u << FIKIT_SIM_MODE_MPS_PRIO | 1u << FIKIT_SIM_MODE_FIKIT_MPS |
                    1u << FIKIT_SIM_MODE_BESIDE | 1u << FIKIT_SIM_MODE_FIKIT_ALONE_MPS;
    } else if (strcmp(substrate, "both") == 0) {
        mode_mask = (1u << FIKIT_SIM_MODES) - 1;
    } else {
        fprintf(stderr, "fikit sim: --substrate: '%s': accepted: timeslice, mps, both\n", substrate);
        return 2;
    }
    if (modes) {
        uint32_t mm = 0;
        char buf[256];
        snprintf(buf, sizeof buf, "%s", modes);
        for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
            enum fikit_sim_mode m;
            if (fikit_sim_mode_parse(tok, &m)) {
                fprintf(stderr, "fikit sim: --modes: '%s': accepted: %s\n", tok, FIKIT_SIM_MODE_NAMES);
                return 2;
            }
            mm |= 1u << m;
        }
        mode_mask = mm;
    }
    size_t first_pair = 0, npairs = 0;
    if (!service) {
        if (strcmp(pair, "all") == 0) {
            npairs = NPAIRS;
        } else {
            for (size_t i = 0; i < NPAIRS; i++)
                if (strcmp(pair, pairs[i].name) == 0)
                    first_pair = i, npairs = 1;
            if (!npairs) {
                fprintf(stderr, "fikit sim: --pair: '%s': accepted: cuda, resnet50, bert, all\n", pair);
                return 2;
            }
        }
    }

    if (trace_path && ((service ? 1 : npairs) != 1 || __builtin_popcount(mode_mask) != 1)) {
        fprintf(stderr, "fikit sim: --trace: one pair and one mode (--modes NAME) at a time\n");
        return 2;
    }
    struct fikit_config cfg;
    struct fikit_err err;
    if (fikit_config_load(config, &cfg, &err)) {
        fprintf(stderr, "fikit sim: %s\n", err.msg);
        return 1;
    }
    char path[4096];
    if (find_file(device, "devices", ".ini", path, sizeof path) != 0) {
        fprintf(stderr, "fikit sim: --device: no %s.ini in $FIKIT_SIM_DIR/devices, %s/devices or %s/devices\n",
                device, FIKIT_SIM_SOURCE_DIR, FIKIT_SIM_INSTALL_DIR);
        return 1;
    }
    /* The service's budget: fikit.ini's for a task of priority 0 unless
     * --budget says otherwise. */
    double budget = fikit_config_task_budget(&cfg, NULL, 0);
    if (budget_arg) {
        char *end;
        budget = strtod(budget_arg, &end);
        if (!*budget_arg || *end || !(budget == 0 || (budget >= 1.0 && budget <= 10.0))) {
            fprintf(stderr, "fikit sim: --budget: '%s': accepted: 0 (off) or 1..10\n", budget_arg);
            return 2;
        }
    }
    int budget_step = 0; /* fikit_sim_experiment.budget_step: 0, the controller decides */
    if (step_arg) {
        uint64_t st;
        if (parse_u64("--budget-step", step_arg, 0, FIKIT_BUDGET_STEPS - 1, &st))
            return 2;
        if (budget == 0) {
            fprintf(stderr, "fikit sim: --budget-step needs a budget (--budget 0 turns it off)\n");
            return 2;
        }
        budget_step = (int)st + 1;
    }
    double service_pace = 1.0;
    if (pace_arg) {
        char *end;
        service_pace = strtod(pace_arg, &end);
        if (!*pace_arg || *end || !(service_pace >= 0.5 && service_pace <= 2.0)) {
            fprintf(stderr, "fikit sim: --service-pace: '%s': accepted: 0.5..2\n", pace_arg);
            return 2;
        }
    }
    struct fikit_sim_device dev;
    if (fikit_sim_device_load(path, &dev, &err)) {
        fprintf(stderr, "fikit sim: %s\n", err.msg);
        return 1;
    }
    struct fikit_sim_experiment x = {.dev = &dev, .load = load, .requests = requests, .warmup = warmup,
                                     .seed = seed, .modes = mode_mask, .beside_thread_pct = (uint32_t)pct,
                                     .fikit_mps_priority = mps_prio, .budget = budget,
                                     .budget_of_requests = fikit_config_task_budget_of_requests(&cfg, NULL),
                                     .budget_step = budget_step,
                                     .sm_shares = sm_shares, .service_pace = service_pace,
                                     .poll_ns = cfg.poll_ns, .pickup_ns = 5000, .wake_ns = 4000};
    /* The switch cost fikitd would take from `fikit calibrate` on this
     * device: the device's own for time-slicing, none on MPS. */
    fikit_config_sched_params(&cfg, (int64_t)dev.switch_ns, &x.sched_ts);
    fikit_config_sched_params(&cfg, 0, &x.sched_mps);
    /* fikit-mps runs the job as fikit-launch would start a priority-9 task
     * with no [task] section on an MPS device. */
    struct fikit_config cfg_mps = cfg;
    struct fikit_task_sharing lower;
    cfg_mps.substrate = FIKIT_SUBSTRATE_MPS;
    fikit_config_task_sharing(&cfg_mps, NULL, FIKIT_LEVELS - 1, &lower);
    x.fikit_mps_beside = lower.share == FIKIT_SHARE_BESIDE;
    x.fikit_mps_thread_pct = (uint32_t)lower.thread_pct;
    x.fikit_mps_confine_pct = (uint32_t)lower.confine_pct;
    x.fikit_mps_priority = mps_prio || lower.low_client_priority;

    FILE *json = NULL;
    if (json_path && !(json = fopen(json_path, "w"))) {
        fprintf(stderr, "fikit sim: --json: %s: %s\n", json_path, strerror(errno));
        return 1;
    }
    if (trace_path) {
        if (!(x.trace = fopen(trace_path, "w"))) {
            fprintf(stderr, "fikit sim: --trace: %s: %s\n", trace_path, strerror(errno));
            if (json)
                fclose(json);
            return 1;
        }
        x.trace_ns = trace_ms * FIKIT_NS_PER_MS;
        fprintf(x.trace, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n");
    }
    if (json)
        fprintf(json, "{\"device\": \"%s\", \"policy\": \"%s\", \"pairs\": [\n", dev.name,
                fikit_policy_name(x.sched_ts.policy));
    printf("fikit sim on %s (%s); policy %s, gap_confidence %.2f, max_queued %.0f us, substrate cost "
           "%.1f us (timeslice) / %.1f us (mps), seed %llu\n",
           dev.name, dev.about, fikit_policy_name(x.sched_ts.policy), x.sched_ts.gap_confidence,
           x.sched_ts.max_queued_ns / 1e3, x.sched_ts.substrate_cost_ns / 1e3,
           x.sched_mps.substrate_cost_ns / 1e3, (unsigned long long)seed);
    int status = 0;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    uint64_t events = 0;
    for (size_t i = 0; i < (service ? 1 : npairs) && !status; i++) {
        struct fikit_sim_workload ws, wl;
        const char *sname = service ? service : pairs[first_pair + i].service;
        const char *lname = service ? loop : pairs[first_pair + i].loop;
        if (load_workload(sname, &ws)) {
            status = 1;
            break;
        }
        if (load_workload(lname, &wl)) {
            fikit_sim_workload_free(&ws);
            status = 1;
            break;
        }
        x.service = &ws;
        x.loop = &wl;
        struct fikit_sim_report rep;
        if (fikit_sim_experiment_run(&x, &rep, progress, quiet ? NULL : (void *)1, &err)) {
            fprintf(stderr, "fikit sim: %s\n", err.msg);
            status = 1;
        } else {
            events += rep.events;
            print_report(&x, &rep, service ? "custom" : pairs[first_pair + i].name, json, i == 0);
        }
        fikit_sim_workload_free(&ws);
        fikit_sim_workload_free(&wl);
    }
    clock_gettime(CLOCK_MONOTONIC, &t1);
    if (x.trace) {
        fprintf(x.trace, "\n]}\n");
        if (fclose(x.trace) != 0) {
            fprintf(stderr, "fikit sim: --trace: %s: %s\n", trace_path, strerror(errno));
            status = 1;
        }
    }
    if (json) {
        fprintf(json, "\n]}\n");
        if (fclose(json) != 0) {
            fprintf(stderr, "fikit sim: --json: %s: %s\n", json_path, strerror(errno));
            status = 1;
        }
    }
    if (!quiet)
        fprintf(stderr, "fikit sim: %llu events in %.1f s\n", (unsigned long long)events,
                (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9);
    return status;
}
