/* fikit calibrate: measure this machine's switch cost for fikitd. */
#include "conf/config.h"
#include "core/calibration.h"
#include "tools/commands.h"
#include "fikitd/daemon_files.h"
#include "tools/options.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "Usage: fikit calibrate [-c FILE] [-b cuda|opencl] [-s timeslice|mps] [-r ROUNDS] [-n]\n"
               "\n"
               "Measures what it costs a task to get the device back after another process used\n"
               "it: two processes with their own contexts; one times a tiny kernel after the\n"
               "device sat idle and again right after the other ran one. The difference of the\n"
               "medians is the switch cost (DESIGN.md: about 250 us under time-slicing on an\n"
               "H200; near 0 under MPS and on a CPU device). fikitd uses it for the substrate\n"
               "cost when fikit.ini says substrate_cost_us = auto; it is stored per substrate\n"
               "and device model in STATE_DIR/calibration.\n"
               "\n"
               "Run it on an otherwise idle device, under the substrate it is for: for mps, with\n"
               "the MPS control daemon running and CUDA_MPS_PIPE_DIRECTORY set as for clients.\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE       fikit.ini (state_dir, substrate)\n"
               "  -b, --backend B         cuda or opencl (default: cuda if it works, else opencl)\n"
               "  -s, --substrate S       timeslice or mps (default: fikit.ini's)\n"
               "  -r, --rounds N          rounds (default 200)\n"
               "  -n, --dry-run           measure and print, store nothing\n"
               "  -h, --help              show this help\n"
               "\n"
               "Exit status: 0, or 1 if the probe failed or the result could not be stored.\n");
}

/* The probe next to us (build tree: ../bench/, installed: ../libexec/fikit/). */
static int find_probe(const char *backend, char *out, size_t len)
{
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    const char *dir = dirname(self);
    const char *where[] = {"%s/../bench/fikit-calibrate-%s", "%s/../libexec/fikit/fikit-calibrate-%s"};
    for (int i = 0; i < 2; i++) {
        snprintf(out, len, where[i], dir, backend);
        if (access(out, X_OK) == 0)
            return 0;
    }
    return -1;
}

static int run_probe(const char *probe, int rounds, char *model, size_t mlen, long long *alone,
                     long long *after)
{
    char cmd[PATH_MAX + 64];
    snprintf(cmd, sizeof cmd, "'%s' %d 2>/dev/null", probe, rounds);
    FILE *p = popen(cmd, "r");
    if (!p)
        return -1;
    char line[512];
    int got = 0;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "device ", 7)) {
            snprintf(model, mlen, "%.200s", line + 7);
            got |= 1;
        } else if (sscanf(line, "alone_ns %lld", alone) == 1) {
            got |= 2;
        } else if (sscanf(line, "after_other_ns %lld", after) == 1) {
            got |= 4;
        }
    }
    return pclose(p) == 0 && got == 7 ? 0 : -1;
}

int fikit_cmd_calibrate(int argc, char **argv)
{
    const char *config = NULL, *backend = NULL, *substrate = NULL, *rounds_arg = NULL;
    bool dry = false;
    const struct fikit_tool_opt opts[] = {
        FIKIT_OPT("config", 'c', &config), FIKIT_OPT("backend", 'b', &backend),
        FIKIT_OPT("substrate", 's', &substrate), FIKIT_OPT("rounds", 'r', &rounds_arg),
        FIKIT_FLAG("dry-run", 'n', &dry), {0}};
    int first = fikit_tool_options(argc, argv, opts, usage);
    int rounds = rounds_arg ? atoi(rounds_arg) : 200;
    if (first != argc || rounds < 5 || (backend && strcmp(backend, "cuda") && strcmp(backend, "opencl")) ||
        (substrate && strcmp(substrate, "timeslice") && strcmp(substrate, "mps"))) {
        usage(stderr);
        return 2;
    }
    struct fikit_config cfg;
    if (fikit_tool_config("calibrate", config, &cfg))
        return 1;
    if (!substrate)
        substrate = fikit_substrate_name(cfg.substrate);
    char probe[PATH_MAX], model[256];
    long long alone = 0, after = 0;
    int rc = -1;
    const char *tried[] = {backend ? backend : "cuda", backend ? NULL : "opencl"};
    for (int i = 0; i < 2 && tried[i] && rc; i++) {
        if (find_probe(tried[i], probe, sizeof probe))
            continue;
        fprintf(stderr, "fikit calibrate: %s, %d rounds...\n", tried[i], rounds);
        rc = run_probe(probe, rounds, model, sizeof model, &alone, &after);
        backend = tried[i];
    }
    if (rc) {
        fprintf(stderr, "fikit calibrate: no probe ran (fikit-calibrate-%s missing or no device)\n",
                backend ? backend : "cuda/opencl");
        return 1;
    }
    long long cost = after > alone ? after - alone : 0;
    printf("%s (%s, %s): a tiny kernel takes %.1f us after an idle period, %.1f us right after "
           "another process ran one: switch cost %.1f us\n",
           model, backend, substrate, alone / 1000.0, after / 1000.0, cost / 1000.0);
    if (dry)
        return 0;
    char state[PATH_MAX];
    fikit_config_state_dir(&cfg, state, sizeof state);
    struct fikit_err err;
    if (fikit_calibration_put(state, substrate, model, cost, &err)) {
        fprintf(stderr, "fikit calibrate: %s\n", err.msg);
        return 1;
    }
    printf("stored in %s/calibration: fikitd uses it for %s on %s (substrate_cost_us = auto)\n", state,
           substrate, model);
    /* fikitd reads it when it opens a device, at that device's first task. */
    int pid = fikitd_running_pid(&cfg);
    if (pid)
        printf("fikitd (pid %d) runs: it uses the new cost for a device it opens from now on; for a device "
               "it already schedules, restart it (fikit stop, then fikitd)\n", pid);
    return 0;
}
