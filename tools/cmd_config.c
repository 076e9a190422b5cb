/* fikit config: validate fikit.ini and show what is in effect. */
#include "conf/config.h"
#include "core/shm.h"
#include "tools/commands.h"
#include "tools/options.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f, "Usage: fikit config [-c FILE]\n"
               "\n"
               "Finds fikit.ini (--config, $FIKIT_CONFIG, $XDG_CONFIG_HOME/fikit/fikit.ini,\n"
               "/etc/fikit/fikit.ini, else built-in defaults), validates every section, key and\n"
               "value, and prints the configuration in effect with the derived paths: every\n"
               "key of every section, [limits] as one line per rule.\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE   check this file\n"
               "  -h, --help          show this help\n"
               "\n"
               "Exit status: 0 if the configuration is valid, 1 if not (the error names the\n"
               "file, line, key and value, and what is accepted), 2 on a usage error.\n");
}

int fikit_cmd_config(int argc, char **argv)
{
    const char *path = NULL;
    const struct fikit_tool_opt opts[] = {FIKIT_OPT("config", 'c', &path), {0}};
    int first, done = fikit_tool_options(argc, argv, opts, usage, &first);
    if (done >= 0)
        return done;
    if (first != argc) {
        usage(stderr);
        return 2;
    }
    struct fikit_config cfg;
    if (fikit_tool_config("config", path, &cfg))
        return 1;
    char sock[4096], state[4096], prof[4096];
    fikit_config_socket_path(&cfg, sock, sizeof sock);
    fikit_config_state_dir(&cfg, state, sizeof state);
    fikit_config_profile_dir(&cfg, prof, sizeof prof);
    printf("source            %s\n", cfg.source[0] ? cfg.source : "(built-in defaults)");
    printf("backend           %s\n", fikit_backend_choice_name(cfg.backend));
    printf("log_level         %s\n", fikit_log_level_name(cfg.log_level));
    printf("policy            %s\n", fikit_policy_name(cfg.policy));
    printf("substrate         %s\n", fikit_substrate_name(cfg.substrate));
    if (cfg.substrate_cost_ns < 0)
        printf("substrate_cost_us auto (calibrated, else %llu)\n",
               (unsigned long long)fikit_substrate_default_cost_ns(cfg.substrate) / 1000);
    else
        printf("substrate_cost_us %lld\n", (long long)cfg.substrate_cost_ns / 1000);
    printf("safety_margin_us  %llu\n", (unsigned long long)cfg.safety_margin_ns / 1000);
    printf("gap_confidence    %g\n", cfg.gap_confidence);
    if (cfg.idle_after_ns)
        printf("idle_after_us     %llu\n", (unsigned long long)cfg.idle_after_ns / 1000);
    else
        printf("idle_after_us     auto (learned)\n");
    printf("recheck_us        %llu\n", (unsigned long long)cfg.recheck_ns / 1000);
    printf("starve_after_us   %llu\n", (unsigned long long)cfg.starve_after_ns / 1000);
    printf("max_queued_us     %llu\n", (unsigned long long)cfg.max_queued_ns / 1000);
    printf("max_wait_ms       %llu\n", (unsigned long long)cfg.max_wait_ns / 1000000);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t spin = fikit_config_spin_ns(&cfg, cpus, false);
    char spin_here[64];
    if (spin == FIKIT_SPIN_ALWAYS)
        snprintf(spin_here, sizeof spin_here, "always");
    else
        snprintf(spin_here, sizeof spin_here, "%llu", (unsigned long long)spin / 1000);
    if (cfg.spin_ns == FIKIT_SPIN_AUTO)
        printf("spin_us           auto (%s here for a GPU: %ld CPUs, always from %d; 50 for a "
               "device that computes on the CPUs)\n", spin_here, cpus, FIKIT_SPIN_AUTO_MIN_CPUS);
    else
        printf("spin_us           %s\n", spin_here);
    printf("pauses            %s\n", cfg.pauses ? "on" : "off");
    printf("mps_lower_share   %s\n", fikit_share_name(cfg.mps_lower_share));
    printf("mps_lower_thread_percentage %d\n", cfg.mps_lower_thread_pct);
    if (cfg.beside_max_slowdown)
        printf("beside_max_slowdown %g\n", cfg.beside_max_slowdown);
    else
        printf("beside_max_slowdown 0 (off)\n");
    printf("poll_us           %llu\n", (unsigned long long)cfg.poll_ns / 1000);
    printf("socket            %s\n", sock);
    if (cfg.socket_group[0])
        printf("socket_group      %s\n", cfg.socket_group);
    else
        printf("socket_group      auto (%s)\n", geteuid() == 0 ? "fikit as root, if it exists"
                                                               : "none: only this user");
    printf("state_dir         %s\n", state);
    printf("trace_events      %u\n", cfg.trace_events);
    if (cfg.warn_held_ns)
        printf("warn_held_after_ms %llu\n", (unsigned long long)(cfg.warn_held_ns / 1000000));
    else
        printf("warn_held_after_ms 0 (never)\n");
    printf("metrics_file      %s\n", cfg.metrics_file[0] ? cfg.metrics_file : "off");
    printf("metrics_interval_ms %llu\n", (unsigned long long)(cfg.metrics_interval_ns / 1000000));
    printf("profile_dir       %s\n", prof);
    printf("sample_rate       %g\n", cfg.sample_rate);
    printf("on_daemon_missing %s\n", cfg.on_daemon_missing == FIKIT_ON_MISSING_FAIL ? "fail" : "passthrough");
    printf("default_priority  %d\n", cfg.default_priority);
    for (int i = 0; i < cfg.ntasks; i++) {
        printf("task              %s priority %d", cfg.tasks[i].name, cfg.tasks[i].priority);
        if (cfg.tasks[i].mps_thread_percentage)
            printf(" mps_thread_percentage %d", cfg.tasks[i].mps_thread_percentage);
        if (cfg.tasks[i].share != FIKIT_SHARE_GAPS)
            printf(" share %s", fikit_share_name(cfg.tasks[i].share));
        printf("\n");
    }
    /* [limits]: the ceiling of users no rule names, then each rule. */
    printf("limit             default %d%s\n", cfg.limit_default,
           cfg.limit_default == 0 ? " (anyone may claim any level)" : "");
    for (int i = 0; i < cfg.nlimits; i++)
        printf("limit             %s.%s %d\n", cfg.limits[i].is_group ? "group" : "user",
               cfg.limits[i].name, cfg.limits[i].max_priority);
    return 0;
}
