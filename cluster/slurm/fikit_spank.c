/* fikit's Slurm SPANK plugin: every task of a job step runs under fikit as
 * under fikit-launch, at the priority the job asks for (--gpu-priority) and
 * no higher than its partition's ceiling.
 *
 * Loaded through plugstack.conf:
 *
 *   required /usr/lib/x86_64-linux-gnu/slurm-wlm/fikit_spank.so \
 *            default=9 max=0 ceiling=batch:5,debug:3 \
 *            library=/usr/lib/x86_64-linux-gnu/fikit/libfikit.so config=/etc/fikit/fikit.ini
 *
 * Job options (srun, sbatch, salloc, #SBATCH): --gpu-priority=N (0 highest
 * .. 9 lowest) and --fikit-task=NAME. In each task, before its exec:
 *
 * - as root (slurm_spank_task_init_privileged) it tells fikitd that this
 *   process and what it starts are the task NAME at priority N, allowed no
 *   higher than the partition's ceiling (FIKIT_MSG_ATTEST). fikitd trusts
 *   that record over what the client later claims and over [limits], so a
 *   user who edits the task's environment cannot rise above the ceiling.
 *   The partition comes from slurmctld (slurm_load_job), never from the
 *   job's environment; where it cannot be had, the strictest ceiling binds.
 * - as the user (slurm_spank_task_init) it sets what fikit-launch sets:
 *   OPENCL_LAYERS and LD_PRELOAD (kept, libfikit.so added), FIKIT_TASK,
 *   FIKIT_PRIORITY, FIKIT_BACKEND, FIKIT_CONFIG.
 *
 * A batch script's own processes (srun, the shell) touch no GPU and so
 * never register; a step's tasks are attested by the step's own slurmstepd
 * and do not descend from the batch script, so each step is its own task.
 */
#include <stdint.h> /* spank.h uses uint32_t without including it */

#include <slurm/slurm.h>
#include <slurm/spank.h>

#include "conf/config.h"
#include "core/proto.h"

#include <dlfcn.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

SPANK_PLUGIN(fikit, 1);

#ifndef FIKIT_SPANK_LIBRARY
#define FIKIT_SPANK_LIBRARY "/usr/local/lib/fikit/libfikit.so"
#endif

#define MAX_CEILINGS 64

/* Plugin arguments (plugstack.conf). */
static int arg_default = -1; /* priority of a job that gives none; -1: fikit.ini's for the task */
static int arg_max = 0;      /* ceiling of a partition not listed */
static struct {
    char part[64];
    int ceiling;
} ceilings[MAX_CEILINGS];
static int nceilings;
static char arg_library[4096] = FIKIT_SPANK_LIBRARY;
static char arg_config[4096];

/* Job options. */
static int opt_priority = -1;
static char opt_task[64];

/* What task_init_privileged decided, for task_init in the same process. */
static bool decided;
static char task_name[64];
static int task_level = -1;
static enum fikit_backend_choice task_backend = FIKIT_BACKEND_CHOICE_AUTO;
static char config_used[4096];

static int parse_priority(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (!*s || *end || errno || v < 0 || v > 9)
        return -1;
    *out = (int)v;
    return 0;
}

static int cb_priority(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    if (!optarg || parse_priority(optarg, &opt_priority)) {
        slurm_error("fikit: --gpu-priority=%s: not a priority (accepted: 0 (highest) to 9 (lowest))",
                    optarg ? optarg : "");
        return -1;
    }
    return 0;
}

static int cb_task(int val, const char *optarg, int remote)
{
    (void)val;
    (void)remote;
    if (!optarg || !fikit_proto_task_name_ok(optarg) || strlen(optarg) >= sizeof opt_task) {
        slurm_error("fikit: --fikit-task=%s: not a task name (accepted: 1 to 63 of A-Z a-z 0-9 _ . -)",
                    optarg ? optarg : "");
        return -1;
    }
    snprintf(opt_task, sizeof opt_task, "%s", optarg);
    return 0;
}

static struct spank_option options[] = {
    {"gpu-priority", "N",
     "GPU priority under fikit: 0 (highest) to 9 (lowest); the partition's ceiling may lower it", 1, 0,
     cb_priority},
    {"fikit-task", "NAME",
     "the fikit task the job's programs are (its [task.NAME] in fikit.ini); default: the job name", 1, 0,
     cb_task},
    SPANK_OPTIONS_TABLE_END};

static int parse_ceilings(const char *list)
{
    char buf[4096];
    snprintf(buf, sizeof buf, "%s", list);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save)) {
        char *colon = strrchr(item, ':');
        int v;
        if (!colon || colon == item || (size_t)(colon - item) >= sizeof ceilings[0].part ||
            parse_priority(colon + 1, &v)) {
            slurm_error("fikit: plugstack.conf: ceiling=%s: '%s' is not PARTITION:N with N from 0 to 9",
                        list, item);
            return -1;
        }
        if (nceilings == MAX_CEILINGS) {
            slurm_error("fikit: plugstack.conf: ceiling=%s: more than %d partitions", list, MAX_CEILINGS);
            return -1;
        }
        *colon = '\0';
        snprintf(ceilings[nceilings].part, sizeof ceilings[nceilings].part, "%s", item);
        ceilings[nceilings++].ceiling = v;
    }
    return 0;
}

static int parse_args(int ac, char **av)
{
    for (int i = 0; i < ac; i++) {
        const char *a = av[i];
        const char *eq = strchr(a, '=');
        const char *v = eq ? eq + 1 : "";
        size_t klen = eq ? (size_t)(eq - a) : strlen(a);
        if (klen == 7 && !strncmp(a, "default", 7)) {
            if (parse_priority(v, &arg_default)) {
                slurm_error("fikit: plugstack.conf: default=%s: not a priority (accepted: 0 to 9)", v);
                return -1;
            }
        } else if (klen == 3 && !strncmp(a, "max", 3)) {
            if (parse_priority(v, &arg_max)) {
                slurm_error("fikit: plugstack.conf: max=%s: not a priority (accepted: 0 to 9)", v);
                return -1;
            }
        } else if (klen == 7 && !strncmp(a, "ceiling", 7)) {
            if (parse_ceilings(v))
                return -1;
        } else if ((klen == 7 && !strncmp(a, "library", 7)) || (klen == 6 && !strncmp(a, "config", 6))) {
            char *dst = klen == 7 ? arg_library : arg_config;
            if (v[0] != '/' || strlen(v) >= sizeof arg_library) {
                slurm_error("fikit: plugstack.conf: %s: not an absolute path", a);
                return -1;
            }
            snprintf(dst, sizeof arg_library, "%s", v);
        } else {
            slurm_error("fikit: plugstack.conf: unknown argument '%s' (accepted: default=N, max=N, "
                        "ceiling=PARTITION:N[,...], library=PATH, config=PATH)", a);
            return -1;
        }
    }
    return 0;
}

int slurm_spank_init(spank_t sp, int ac, char **av)
{
    if (parse_args(ac, av))
        return -1;
    for (struct spank_option *o = options; o->name; o++)
        if (spank_option_register(sp, o) != ESPANK_SUCCESS) {
            slurm_error("fikit: cannot register option --%s", o->name);
            return -1;
        }
    return 0;
}

/* The strictest ceiling configured: what binds when the partition is not known. */
static int strictest(void)
{
    int c = arg_max;
    for (int i = 0; i < nceilings; i++)
        if (ceilings[i].ceiling > c)
            c = ceilings[i].ceiling;
    return c;
}

/* The job's partition as slurmctld knows it, through slurmstepd's own copy
 * of the Slurm API (no second libslurm in the process). */
static int job_partition(uint32_t jobid, char *buf, size_t len)
{
    typedef int (*load_job_f)(job_info_msg_t **, uint32_t, uint16_t);
    typedef void (*free_job_f)(job_info_msg_t *);
    load_job_f load = (load_job_f)dlsym(RTLD_DEFAULT, "slurm_load_job");
    free_job_f release = (free_job_f)dlsym(RTLD_DEFAULT, "slurm_free_job_info_msg");
    if (!load || !release)
        return -ENOSYS;
    job_info_msg_t *msg = NULL;
    if (load(&msg, jobid, SHOW_ALL) != 0 || !msg)
        return -EIO;
    int rc = -ENOENT;
    if (msg->record_count >= 1 && msg->job_array[0].partition) {
        snprintf(buf, len, "%s", msg->job_array[0].partition);
        rc = 0;
    }
    release(msg);
    return rc;
}

static int ceiling_of(const char *part)
{
    for (int i = 0; i < nceilings; i++)
        if (!strcmp(ceilings[i].part, part))
            return ceilings[i].ceiling;
    return arg_max;
}

/* A job name as a task name: what fikit.ini accepts, the rest '_'. */
static void task_from_job_name(const char *job, uint32_t jobid, char *out, size_t len)
{
    if (!job || !*job) {
        snprintf(out, len, "job%u", jobid);
        return;
    }
    snprintf(out, len, "%s", job);
    for (char *p = out; *p; p++)
        if (!fikit_task_name_valid((char[]){*p, 0}))
            *p = '_';
}

static int attest(const char *socket_path, const struct fikit_msg_attest *m, char *why, size_t len)
{
    int fd = fikit_proto_connect(socket_path);
    if (fd < 0) {
        snprintf(why, len, "cannot reach fikitd at %s: %s", socket_path, strerror(-fd));
        return fd;
    }
    int rc = fikit_proto_send(fd, FIKIT_MSG_ATTEST, m, sizeof *m, -1);
    char buf[FIKIT_MSG_MAX];
    uint16_t type = 0;
    if (rc == 0)
        rc = fikit_proto_recv(fd, buf, &type, NULL, 5000);
    close(fd);
    if (rc < 0) {
        snprintf(why, len, "fikitd at %s did not take the task's record: %s", socket_path,
                 rc == -ECONNRESET ? "it closed the connection (a fikitd older than this plugin?)"
                                   : strerror(-rc));
        return rc;
    }
    if (type == FIKIT_MSG_ERROR) {
        const struct fikit_msg_error *e = fikit_proto_payload(buf);
        snprintf(why, len, "fikitd refused the task's record: %s", e->text);
        return e->code;
    }
    return type == FIKIT_MSG_OK ? 0 : -EPROTO;
}

int slurm_spank_task_init_privileged(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    uint32_t jobid = 0, stepid = 0;
    spank_get_item(sp, S_JOB_ID, &jobid);
    spank_get_item(sp, S_JOB_STEPID, &stepid);

    static struct fikit_config cfg;
    struct fikit_err err;
    if (fikit_config_load(arg_config[0] ? arg_config : NULL, &cfg, &err)) {
        /* As fikit-launch without a readable configuration: the task runs, unscheduled. */
        slurm_error("fikit: %s; job %u runs without fikit", err.msg, jobid);
        return 0;
    }
    if (cfg.source[0])
        snprintf(config_used, sizeof config_used, "%s", cfg.source);
    task_backend = cfg.backend;

    char jobname[256] = "";
    if (spank_getenv(sp, "SLURM_JOB_NAME", jobname, sizeof jobname) != ESPANK_SUCCESS)
        jobname[0] = '\0';
    if (opt_task[0])
        snprintf(task_name, sizeof task_name, "%s", opt_task);
    else
        task_from_job_name(jobname, jobid, task_name, sizeof task_name);
    task_level = opt_priority >= 0 ? opt_priority : arg_default;

    char part[128];
    int ceiling;
    int prc = job_partition(jobid, part, sizeof part);
    if (prc == 0) {
        ceiling = ceiling_of(part);
    } else {
        ceiling = strictest();
        snprintf(part, sizeof part, "unknown");
        slurm_error("fikit: job %u: cannot learn its partition from slurmctld (%s); the strictest "
                    "ceiling, %d, binds", jobid, strerror(-prc), ceiling);
    }

    struct fikit_msg_attest m = {.pid = (int32_t)getpid(), .level = task_level, .ceiling = ceiling};
    snprintf(m.task, sizeof m.task, "%s", task_name);
    char step[32];
    if (stepid == SLURM_BATCH_SCRIPT)
        snprintf(step, sizeof step, "batch");
    else if (stepid == SLURM_INTERACTIVE_STEP)
        snprintf(step, sizeof step, "interactive");
    else
        snprintf(step, sizeof step, "step %u", stepid);
    snprintf(m.origin, sizeof m.origin, "slurm job %u %s, partition %.48s (ceiling %d)", jobid, step, part,
             ceiling);

    char sock[4096], why[6144];
    fikit_config_socket_path(&cfg, sock, sizeof sock);
    int rc = attest(sock, &m, why, sizeof why);
    if (rc && cfg.on_daemon_missing == FIKIT_ON_MISSING_FAIL) {
        slurm_error("fikit: %s (on_daemon_missing = fail in %s); job %u is not started", why,
                    cfg.source[0] ? cfg.source : "the configuration", jobid);
        return -1;
    }
    if (rc) {
        /* The client will find no daemon either (and say so on the task's stderr: one
         * line there), or be held to [limits]; the node's log keeps why. */
        slurm_info("fikit: job %u: %s", jobid, why);
    }
    decided = true;
    return 0;
}

/* Appends lib to a colon-separated list in the job's environment. */
static void add_to_list(spank_t sp, const char *var, const char *lib)
{
    char old[8192], v[8192 + 4096];
    if (spank_getenv(sp, var, old, sizeof old) == ESPANK_SUCCESS && old[0]) {
        if (strstr(old, lib))
            return;
        snprintf(v, sizeof v, "%s:%s", old, lib);
        spank_setenv(sp, var, v, 1);
    } else {
        spank_setenv(sp, var, lib, 1);
    }
}

int slurm_spank_task_init(spank_t sp, int ac, char **av)
{
    (void)ac;
    (void)av;
    if (!decided)
        return 0;
    enum fikit_backend_choice be = task_backend;
    if (be == FIKIT_BACKEND_CHOICE_AUTO || be == FIKIT_BACKEND_CHOICE_OPENCL)
        add_to_list(sp, "OPENCL_LAYERS", arg_library);
    if (be == FIKIT_BACKEND_CHOICE_AUTO || be == FIKIT_BACKEND_CHOICE_CUDA || be == FIKIT_BACKEND_CHOICE_HIP)
        add_to_list(sp, "LD_PRELOAD", arg_library);
    spank_setenv(sp, "FIKIT_TASK", task_name, 1);
    if (task_level >= 0) {
        char num[16];
        snprintf(num, sizeof num, "%d", task_level);
        spank_setenv(sp, "FIKIT_PRIORITY", num, 1);
    } else {
        spank_unsetenv(sp, "FIKIT_PRIORITY");
    }
    spank_setenv(sp, "FIKIT_BACKEND", fikit_backend_choice_name(be), 1);
    spank_unsetenv(sp, "FIKIT_MEASURE");
    if (config_used[0])
        spank_setenv(sp, "FIKIT_CONFIG", config_used, 1);
    return 0;
}
