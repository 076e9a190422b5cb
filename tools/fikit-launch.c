/* fikit-launch: starts any GPU program under fikit. */
#include "conf/config.h"
#include "core/proto.h"

#include <errno.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static void usage(FILE *f)
{
    fprintf(f,
            "Usage: fikit-launch [OPTIONS] [--] PROGRAM [ARGS...]\n"
            "\n"
            "Runs PROGRAM under fikit: every kernel it launches is identified, measured and\n"
            "scheduled by fikitd at the task's priority. The program is not changed: fikit\n"
            "enters it as an OpenCL layer (OPENCL_LAYERS) and, for CUDA and HIP, by LD_PRELOAD;\n"
            "both keep what the environment already lists. fikit-launch then execs PROGRAM, so\n"
            "the exit status and signals are the program's own.\n"
            "\n"
            "Options:\n"
            "  -c, --config FILE   use this fikit.ini (also for the program)\n"
            "  -t, --task NAME     the task: its [task.NAME] section gives the priority\n"
            "                      (default: the program's name)\n"
            "  -p, --priority N    priority 0 (highest) to 9 (lowest), overriding fikit.ini;\n"
            "                      fikitd may lower it ([limits])\n"
            "  -m, --measure       measure every kernel and gap and write the task's profile\n"
            "                      at exit (and every 30 s)\n"
            "  -b, --backend B     auto, cuda, hip or opencl, overriding fikit.ini\n"
            "  -h, --help          show this help\n"
            "      --version       show the version\n"
            "\n"
            "Environment passed to the program: FIKIT_TASK, FIKIT_PRIORITY, FIKIT_MEASURE,\n"
            "FIKIT_BACKEND, FIKIT_CONFIG, OPENCL_LAYERS, LD_PRELOAD; with substrate = mps,\n"
            "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE when the task has a thread cap (its\n"
            "mps_thread_percentage, or mps_lower_thread_percentage for priorities 1 to 9 under\n"
            "mps_lower_share = beside; none with mps_lower_cap = launches, where fikit confines\n"
            "its launches itself) and, for priorities 1 to 9, CUDA_MPS_CLIENT_PRIORITY=1\n"
            "unless the environment sets it.\n"
            "FIKIT_LIBRARY overrides where libfikit.so is found.\n"
            "\n"
            "If fikitd cannot be reached the program runs unscheduled after one line on\n"
            "stderr, or, with on_daemon_missing = fail in fikit.ini, is not started.\n"
            "\n"
            "Exit status: the program's; 125 if fikit-launch itself fails (bad option,\n"
            "configuration, unknown task, unreachable daemon with on_daemon_missing = fail);\n"
            "126 if PROGRAM cannot be executed; 127 if it is not found.\n");
}

#define FAIL_LAUNCH 125

/* libfikit.so: $FIKIT_LIBRARY, next to us in a build tree, or installed. */
static int find_library(char *out, size_t len)
{
    const char *env = getenv("FIKIT_LIBRARY");
    if (env && *env) {
        if (access(env, R_OK) != 0) {
            fprintf(stderr, "fikit-launch: FIKIT_LIBRARY=%s: %s\n", env, strerror(errno));
            return -1;
        }
        snprintf(out, len, "%s", env);
        return 0;
    }
    char self[PATH_MAX];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return -1;
    self[n] = '\0';
    char *dir = dirname(self);
    const char *candidates[] = {"%s/../interpose/libfikit.so", "%s/../lib/fikit/libfikit.so",
                                "%s/../lib64/fikit/libfikit.so",
                                "%s/../lib/x86_64-linux-gnu/fikit/libfikit.so"};
    for (size_t i = 0; i < sizeof candidates / sizeof candidates[0]; i++) {
        char path[PATH_MAX];
        snprintf(path, sizeof path, candidates[i], dir);
        char real[PATH_MAX];
        if (realpath(path, real) && access(real, R_OK) == 0) {
            snprintf(out, len, "%s", real);
            return 0;
        }
    }
    fprintf(stderr, "fikit-launch: cannot find libfikit.so near %s; set FIKIT_LIBRARY\n", dir);
    return -1;
}

/* Appends lib to a colon-separated list variable, keeping what is there and
 * its order: a sanitizer's runtime, for one, must stay first in LD_PRELOAD. */
static void add_to_list(const char *var, const char *lib, const char *sep)
{
    const char *old = getenv(var);
    if (old && *old) {
        if (strstr(old, lib))
            return;
        size_t n = strlen(old) + strlen(lib) + 2;
        char *v = malloc(n);
        snprintf(v, n, "%s%s%s", old, sep, lib);
        setenv(var, v, 1);
        free(v);
    } else {
        setenv(var, lib, 1);
    }
}

/* The program as execvp would find it, or NULL. */
static const char *resolve_program(const char *prog, char *buf, size_t len)
{
    if (strchr(prog, '/'))
        return access(prog, F_OK) == 0 ? prog : NULL;
    const char *path = getenv("PATH");
    if (!path)
        path = "/usr/local/bin:/usr/bin:/bin";
    char *copy = strdup(path), *save = NULL;
    const char *found = NULL;
    for (char *d = strtok_r(copy, ":", &save); d; d = strtok_r(NULL, ":", &save)) {
        snprintf(buf, len, "%s/%s", *d ? d : ".", prog);
        if (access(buf, X_OK) == 0) {
            found = buf;
            break;
        }
    }
    free(copy);
    return found;
}

int main(int argc, char **argv)
{
    static const struct option opts[] = {
        {"config", required_argument, 0, 'c'}, {"task", required_argument, 0, 't'},
        {"priority", required_argument, 0, 'p'}, {"measure", no_argument, 0, 'm'},
        {"backend", required_argument, 0, 'b'}, {"help", no_argument, 0, 'h'},
        {"version", no_argument, 0, 'V'},      {0, 0, 0, 0}};
    const char *config = NULL, *task = NULL, *prio = NULL, *backend = NULL;
    int measure = 0, c;
    /* Stop at the first non-option: the rest is the program's. */
    while ((c = getopt_long(argc, argv, "+c:t:p:mb:h", opts, NULL)) != -1) {
        switch (c) {
        case 'c': config = optarg; break;
        case 't': task = optarg; break;
        case 'p': prio = optarg; break;
        case 'm': measure = 1; break;
        case 'b': backend = optarg; break;
        case 'h': usage(stdout); return 0;
        case 'V': printf("fikit-launch %s\n", FIKIT_VERSION); return 0;
        default: usage(stderr); return FAIL_LAUNCH;
        }
    }
    if (optind >= argc) {
        fprintf(stderr, "fikit-launch: no PROGRAM given\n\n");
        usage(stderr);
        return FAIL_LAUNCH;
    }
    char **prog_argv = argv + optind;

    struct fikit_config cfg;
    struct fikit_err err;
    if (fikit_config_load(config, &cfg, &err)) {
        fprintf(stderr, "fikit-launch: %s\n", err.msg);
        return FAIL_LAUNCH;
    }
    char resolved[PATH_MAX];
    const char *prog = resolve_program(prog_argv[0], resolved, sizeof resolved);
    if (!prog) {
        fprintf(stderr, "fikit-launch: %s: command not found\n", prog_argv[0]);
        return 127;
    }
    struct stat st;
    if (stat(prog, &st) == 0 && (st.st_mode & (S_ISUID | S_ISGID))) {
        /* The dynamic loader ignores LD_PRELOAD for set-user-ID and
         * set-group-ID programs (secure-execution mode): fikit could not
         * enter it, and must not pretend to schedule it. */
        fprintf(stderr, "fikit-launch: %s is set-user-ID or set-group-ID: the loader ignores "
                        "LD_PRELOAD and OPENCL_LAYERS for it, so fikit cannot schedule it\n", prog);
        return FAIL_LAUNCH;
    }

    /* The task and its priority. */
    char taskbuf[FIKIT_NAME_MAX];
    bool task_given = task != NULL;
    if (!task) {
        char tmp[PATH_MAX];
        snprintf(tmp, sizeof tmp, "%s", prog_argv[0]);
        snprintf(taskbuf, sizeof taskbuf, "%s", basename(tmp));
        for (char *p = taskbuf; *p; p++)
            if (!fikit_task_name_valid((char[]){*p, 0}))
                *p = '_';
        task = taskbuf;
    }
    if (!fikit_task_name_valid(task)) {
        fprintf(stderr, "fikit-launch: --task %s: not a task name (accepted: 1 to 63 of A-Z a-z "
                        "0-9 _ . -)\n", task);
        return FAIL_LAUNCH;
    }
    const struct fikit_task_conf *tc = fikit_config_task(&cfg, task);
    int priority = tc ? tc->priority : cfg.default_priority;
    if (prio) {
        char *end;
        long v = strtol(prio, &end, 10);
        if (!*prio || *end || v < 0 || v > 9) {
            fprintf(stderr, "fikit-launch: --priority %s: not a priority (accepted: 0 to 9)\n", prio);
            return FAIL_LAUNCH;
        }
        priority = (int)v;
    } else if (!tc && task_given) {
        /* --task named a task fikit.ini does not know, and no priority. */
        char known[512];
        fikit_config_task_list(&cfg, known, sizeof known);
        fprintf(stderr, "fikit-launch: task '%s' is not in %s (known tasks: %s); add a [task.%s] "
                        "section or give --priority\n",
                task, cfg.source[0] ? cfg.source : "the built-in configuration", known, task);
        return FAIL_LAUNCH;
    }
    enum fikit_backend_choice be = cfg.backend;
    if (backend && fikit_backend_choice_parse(backend, &be)) {
        fprintf(stderr, "fikit-launch: --backend %s: unknown (accepted: %s)\n", backend,
                FIKIT_BACKEND_CHOICE_NAMES);
        return FAIL_LAUNCH;
    }

    /* The daemon, when the configuration says its absence is fatal. */
    if (cfg.on_daemon_missing == FIKIT_ON_MISSING_FAIL) {
        char sock[PATH_MAX];
        fikit_config_socket_path(&cfg, sock, sizeof sock);
        int fd = fikit_proto_connect(sock);
        if (fd < 0) {
            fprintf(stderr, "fikit-launch: cannot reach fikitd at %s: %s (on_daemon_missing = fail "
                            "in %s); start it with: fikitd%s%s\n",
                    sock, strerror(-fd), cfg.source[0] ? cfg.source : "the configuration",
                    cfg.source[0] ? " -c " : "", cfg.source);
            return FAIL_LAUNCH;
        }
        close(fd);
    }

    char lib[PATH_MAX];
    if (find_library(lib, sizeof lib))
        return FAIL_LAUNCH;
    if (be == FIKIT_BACKEND_CHOICE_AUTO || be == FIKIT_BACKEND_CHOICE_OPENCL)
        add_to_list("OPENCL_LAYERS", lib, ":");
    if (be == FIKIT_BACKEND_CHOICE_AUTO || be == FIKIT_BACKEND_CHOICE_CUDA ||
        be == FIKIT_BACKEND_CHOICE_HIP)
        add_to_list("LD_PRELOAD", lib, ":");
    char num[16];
    setenv("FIKIT_TASK", task, 1);
    snprintf(num, sizeof num, "%d", priority);
    setenv("FIKIT_PRIORITY", num, 1);
    setenv("FIKIT_BACKEND", fikit_backend_choice_name(be), 1);
    if (measure)
        setenv("FIKIT_MEASURE", "1", 1);
    else
        unsetenv("FIKIT_MEASURE");
    if (cfg.source[0]) {
        char real[PATH_MAX];
        setenv("FIKIT_CONFIG", realpath(cfg.source, real) ? real : cfg.source, 1);
    }
    struct fikit_task_sharing sharing;
    fikit_config_task_sharing(&cfg, tc, priority, &sharing);
    if (sharing.thread_pct) {
        snprintf(num, sizeof num, "%d", sharing.thread_pct);
        setenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE", num, 1);
    }
    /* Below normal, unless the caller chose (0 is normal, 1 below). */
    if (sharing.low_client_priority)
        setenv("CUDA_MPS_CLIENT_PRIORITY", "1", 0);
    execv(prog, prog_argv);
    int e = errno;
    fprintf(stderr, "fikit-launch: cannot execute %s: %s\n", prog, strerror(e));
    return e == ENOENT ? 127 : 126;
}
