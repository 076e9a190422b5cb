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
               "value, and prints the configuration in effect as a fikit.ini of its own: every\n"
               "key of every section, [limits] a line per rule, and where an auto value\n"
               "points here (a path, the spin) in a comment after it.\n"
               "\n"
               "Options:\n"
               "  -c, --config FILE   check this file\n"
               "  -h, --help          show this help\n"
               "\n"
               "Exit status: 0 if the configuration is valid, 1 if not (the error names the\n"
               "file, line, key and value, and what is accepted), 2 on a usage error.\n");
}

/* What fikit.ini's value comes to here ("" for nothing to say): where an
 * "auto" path points, what an auto spin is on this machine. */
static void note(const struct fikit_config *cfg, const char *key, const char *value, char *buf,
                 size_t len)
{
    char path[4096];
    bool is_auto = strcmp(value, "auto") == 0;
    buf[0] = '\0';
    if (!strcmp(key, "substrate_cost_us") && is_auto) {
        snprintf(buf, len, "calibrated, else %llu",
                 (unsigned long long)fikit_substrate_default_cost_ns(cfg->substrate) / 1000);
    } else if (!strcmp(key, "idle_after_us") && is_auto) {
        snprintf(buf, len, "learned");
    } else if (!strcmp(key, "spin_us") && is_auto) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        uint64_t spin = fikit_config_spin_ns(cfg, cpus, false);
        char here[64];
        if (spin == FIKIT_SPIN_ALWAYS)
            snprintf(here, sizeof here, "always");
        else
            snprintf(here, sizeof here, "%llu", (unsigned long long)spin / 1000);
        snprintf(buf, len, "%s here for a GPU: %ld CPUs, always from %d; 50 for a device that "
                 "computes on the CPUs", here, cpus, FIKIT_SPIN_AUTO_MIN_CPUS);
    } else if (!strcmp(key, "beside_max_slowdown") && !strcmp(value, "0")) {
        snprintf(buf, len, "off");
    } else if (!strcmp(key, "warn_held_after_ms") && !strcmp(value, "0")) {
        snprintf(buf, len, "never");
    } else if (!strcmp(key, "socket_group") && is_auto) {
        snprintf(buf, len, "%s", geteuid() == 0 ? "fikit as root, if it exists" : "none: only this user");
    } else if (is_auto) {
        /* An auto path: where it points here. */
        int (*where)(const struct fikit_config *, char *, size_t) =
            !strcmp(key, "socket")      ? fikit_config_socket_path
            : !strcmp(key, "state_dir") ? fikit_config_state_dir
            : !strcmp(key, "profile_dir") ? fikit_config_profile_dir
                                          : NULL;
        if (where && where(cfg, path, sizeof path) == 0)
            snprintf(buf, len, "%s", path);
    }
}

/* A [task.NAME] key without a default is shown once it is set: priority
 * always (it must be), mps_thread_percentage from 1, share once a line set it. */
static bool task_key_set(const struct fikit_conf_key *k, const struct fikit_task_conf *t)
{
    if (k->line_off) {
        int line;
        memcpy(&line, (const char *)t + k->line_off - 1, sizeof line);
        return line != 0;
    }
    int v;
    memcpy(&v, (const char *)t + k->off, sizeof v);
    return k->type != FIKIT_CONF_UINT || (uint64_t)v >= k->min;
}

int fikit_cmd_config(int argc, char **argv)
{
    const char *path = NULL;
    const struct fikit_tool_opt opts[] = {FIKIT_OPT("config", 'c', &path), {0}};
    int first = fikit_tool_options(argc, argv, opts, usage);
    if (first != argc) {
        usage(stderr);
        return 2;
    }
    struct fikit_config cfg;
    if (fikit_tool_config("config", path, &cfg))
        return 1;
    /* Every key of the table (conf/config.c), in its order, as fikit.ini
     * writes it: a section's header, then its keys, what a value comes to
     * here as a comment after it; a [task.NAME] with the keys it sets;
     * [limits] default and each rule. The output is itself a valid fikit.ini
     * of the same configuration. */
    printf("; the configuration in effect, from %s\n", cfg.source[0] ? cfg.source : "built-in defaults");
    char value[4096], extra[4200];
    const char *section = "";
    for (size_t i = 0; i < fikit_conf_nkeys; i++) {
        const struct fikit_conf_key *k = &fikit_conf_keys[i];
        if (!k->def || !strcmp(k->section, "limits"))
            continue;
        if (strcmp(k->section, section))
            printf("\n[%s]\n", section = k->section);
        fikit_conf_value(k, &cfg, value, sizeof value);
        note(&cfg, k->key, value, extra, sizeof extra);
        printf("%s = %s%s%s\n", k->key, value, extra[0] ? "  ; " : "", extra);
    }
    for (int t = 0; t < cfg.ntasks; t++) {
        printf("\n[task.%s]\n", cfg.tasks[t].name);
        for (size_t i = 0; i < fikit_conf_nkeys; i++) {
            const struct fikit_conf_key *k = &fikit_conf_keys[i];
            if (strcmp(k->section, "task.NAME") || !task_key_set(k, &cfg.tasks[t]))
                continue;
            fikit_conf_value(k, &cfg.tasks[t], value, sizeof value);
            printf("%s = %s\n", k->key, value);
        }
    }
    /* [limits]: the ceiling of users no rule names, then each rule. */
    printf("\n[limits]\n");
    for (size_t i = 0; i < fikit_conf_nkeys; i++) {
        const struct fikit_conf_key *k = &fikit_conf_keys[i];
        if (strcmp(k->section, "limits"))
            continue;
        if (k->def) {
            fikit_conf_value(k, &cfg, value, sizeof value);
            printf("%s = %s%s\n", k->key, value, cfg.limit_default == 0 ? "  ; anyone may claim any level" : "");
            continue;
        }
        for (int r = 0; r < cfg.nlimits; r++) {
            char rule[128];
            snprintf(rule, sizeof rule, "%s.%s", cfg.limits[r].is_group ? "group" : "user",
                     cfg.limits[r].name);
            if (!fikit_conf_name_matches(k->key, rule))
                continue;
            fikit_conf_value(k, &cfg.limits[r], value, sizeof value);
            printf("%s = %s\n", rule, value);
        }
    }
    return 0;
}
