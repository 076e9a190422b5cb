/* Owns: fikit.ini: the built-in defaults, the search order, parsing (inih),
 * validation of every section, key and value, and the derived paths (socket,
 * profiles, state). conf/fikit.ini documents every key. An error is one line:
 * "FILE:LINE: [section] key = value: what is wrong (accepted: ...)". */
#ifndef FIKIT_CONF_CONFIG_H
#define FIKIT_CONF_CONFIG_H

#include "core/arbiter.h"
#include "core/error.h"
#include "core/log.h"
#include "core/sched.h"

#include <limits.h>
#include <sys/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FIKIT_MAX_TASK_CONFS 64
#define FIKIT_MAX_LIMITS 64
#define FIKIT_NAME_MAX 64

enum fikit_backend_choice {
    FIKIT_BACKEND_CHOICE_AUTO = 0, /* every backend that was built, on whatever the program uses */
    FIKIT_BACKEND_CHOICE_CUDA,
    FIKIT_BACKEND_CHOICE_HIP,
    FIKIT_BACKEND_CHOICE_OPENCL,
};
#define FIKIT_BACKEND_CHOICE_NAMES "auto, cuda, hip, opencl"
const char *fikit_backend_choice_name(enum fikit_backend_choice b);
int fikit_backend_choice_parse(const char *s, enum fikit_backend_choice *out);

enum fikit_substrate {
    FIKIT_SUBSTRATE_TIMESLICE = 0, /* the driver's default time-slicing */
    FIKIT_SUBSTRATE_MPS,           /* CUDA MPS: no context switch */
};
#define FIKIT_SUBSTRATE_NAMES "timeslice, mps"
const char *fikit_substrate_name(enum fikit_substrate s);
/* The switch cost assumed when nothing was calibrated (DESIGN.md, H200). */
uint64_t fikit_substrate_default_cost_ns(enum fikit_substrate s);

enum fikit_on_missing {
    FIKIT_ON_MISSING_PASSTHROUGH = 0,
    FIKIT_ON_MISSING_FAIL,
};

/* How a task shares the device with higher levels (DESIGN.md, The policy). */
enum fikit_share {
    FIKIT_SHARE_GAPS = 0, /* only while they are idle or in their gaps (FIKIT) */
    FIKIT_SHARE_BESIDE,   /* beside them, within its MPS thread cap: never held */
};
#define FIKIT_SHARE_NAMES "gaps, beside"
const char *fikit_share_name(enum fikit_share s);

/* What a latency_budget holds (latency_budget_of; core/budget.h). */
enum fikit_budget_of {
    FIKIT_BUDGET_OF_REQUESTS = 0, /* the requests' latency: the busier the task, the less each burst may take */
    FIKIT_BUDGET_OF_BURSTS,       /* each burst: a task whose clients wait for each reply (no queue) */
};
const char *fikit_budget_of_name(enum fikit_budget_of b);

/* How a beside task on MPS is kept off the SMs that higher levels need. */
enum fikit_lower_cap {
    FIKIT_CAP_THREADS = 0, /* MPS's thread cap, for its whole run (fikit-launch sets it) */
    FIKIT_CAP_LAUNCHES,    /* each launch made while a higher level is active goes into a
                            * green context of its share (CUDA); the rest have the whole device */
};
const char *fikit_lower_cap_name(enum fikit_lower_cap c);

struct fikit_task_conf {
    char name[FIKIT_NAME_MAX];
    int priority;              /* 0..9 */
    int mps_thread_percentage; /* 1..100, 0 = not set */
    enum fikit_share share;
    int line;                  /* where it was defined, for messages */
    int share_line;            /* where share was set, 0 = not set */
    double latency_budget;     /* its bursts' p99 against alone at most; 0 = not set */
    enum fikit_budget_of latency_budget_of;
    int budget_of_line;        /* where latency_budget_of was set, 0 = not set */
};

struct fikit_limit {
    bool is_group;
    char name[FIKIT_NAME_MAX];
    int max_priority; /* the highest (numerically lowest) level allowed */
};

struct fikit_config {
    char source[PATH_MAX]; /* the file read, "" for built-in defaults */

    /* [fikit] */
    enum fikit_backend_choice backend;
    enum fikit_log_level log_level;

    /* [scheduler] */
    struct fikit_sched_params sched; /* the policy's keys, bound by their rows; its
                                      * substrate_cost_ns is resolved by
                                      * fikit_config_sched_params */
    enum fikit_substrate substrate;
    int64_t substrate_cost_ns; /* -1 = auto */
    double latency_budget;     /* for tasks of priority 0 that set none; 0 = off */
    enum fikit_budget_of latency_budget_of; /* for tasks that set none */
    enum fikit_share mps_lower_share; /* tasks of priority 1-9 on MPS without a share */
    int mps_lower_thread_pct;  /* their thread cap when that is beside: 1..99 */
    enum fikit_lower_cap mps_lower_cap; /* how a beside task's share is kept */
    uint64_t poll_ns;
    uint64_t spin_ns; /* FIKIT_SPIN_ALWAYS: held launches spin for as long as they are held;
                       * FIKIT_SPIN_AUTO: fikit_config_spin_ns decides */

    /* [daemon] */
    char socket_path[PATH_MAX]; /* "" = auto */
    char socket_group[FIKIT_NAME_MAX]; /* "" = auto: "fikit" as root, none otherwise */
    char state_dir[PATH_MAX];   /* "" = auto */
    uint32_t trace_events;
    uint64_t warn_held_ns; /* log a launch held this long; 0 = never */
    char metrics_file[PATH_MAX]; /* Prometheus textfile fikitd writes; "" = off */
    uint64_t metrics_interval_ns;

    /* [client] */
    enum fikit_on_missing on_daemon_missing;
    double sample_rate;
    char profile_dir[PATH_MAX]; /* "" = auto */
    int default_priority;

    /* [task.NAME] */
    struct fikit_task_conf tasks[FIKIT_MAX_TASK_CONFS];
    int ntasks;

    /* [limits] */
    int limit_default; /* highest level anyone not listed may claim */
    struct fikit_limit limits[FIKIT_MAX_LIMITS];
    int nlimits;
};

/* ------------------------------------------------------------ the keys
 * Every key of fikit.ini is one row of a table (conf/config.c, Redis-style):
 * its section, type, bounds, default, enum names and where it is stored. The
 * parser, the defaults, the "accepted:" of every error, the "Accepted:"
 * and "Default:" lines of conf/fikit.ini's comments (checked by
 * unit.config) and what `fikit config` prints all come from that row:
 * adding a key is adding a row. */

enum fikit_conf_type {
    FIKIT_CONF_ENUM,   /* one of names */
    FIKIT_CONF_UINT,   /* a whole number from min to max, times scale, or one of words */
    FIKIT_CONF_DOUBLE, /* a number from dmin to dmax; with zero_off, 0 too (off) */
    FIKIT_CONF_PATH,   /* an absolute path, or words[0] for "" */
    FIKIT_CONF_GROUP,  /* a group name, or words[0] for "" */
};

struct fikit_conf_word {
    const char *word;
    uint64_t value; /* stored as is (not scaled) */
};

struct fikit_conf_key {
    const char *section; /* "scheduler"; "task.NAME": any [task.*] */
    const char *key;     /* "user.NAME": any key that starts with "user." */
    enum fikit_conf_type type;
    const char *def;     /* the default as fikit.ini writes it; NULL: the section decides */
    uint64_t min, max, scale;
    double dmin, dmax;
    bool zero_off;
    struct fikit_conf_word words[2]; /* ENUM: other spellings, not listed */
    const char *(*name)(int i); /* FIKIT_CONF_ENUM: the names, 0..nnames-1 */
    int nnames;
    size_t off, size;   /* the field in struct fikit_config (fikit_task_conf, fikit_limit) */
    size_t line_off;    /* nonzero: offset + 1 of an int that gets the line it was set on */
};

extern const struct fikit_conf_key fikit_conf_keys[];
extern const size_t fikit_conf_nkeys;
/* The sections in order, "task.NAME" for [task.*]. */
extern const char *const fikit_conf_sections[];
extern const size_t fikit_conf_nsections;

/* What a key accepts: as an error message says it (ini = false: "an integer
 * from 0 to 9") or as conf/fikit.ini's comments do (ini = true: "0..9"). */
void fikit_conf_accepted(const struct fikit_conf_key *k, bool ini, char *buf, size_t len);
/* The value of k's field in base (a struct fikit_config, fikit_task_conf
 * or fikit_limit, as the row says) as fikit.ini writes it: "auto", "20",
 * "0.3", "beside", a path. Loading what it writes gives the same field. */
void fikit_conf_value(const struct fikit_conf_key *k, const void *base, char *buf, size_t len);
/* Whether name is what pattern names: itself, or for "X.NAME", any "X.". */
bool fikit_conf_name_matches(const char *pattern, const char *name);

void fikit_config_defaults(struct fikit_config *c);

/* Parses and validates one file over the defaults. */
int fikit_config_load_file(const char *path, struct fikit_config *c, struct fikit_err *err);

/* The search order: explicit (--config), $FIKIT_CONFIG,
 * $XDG_CONFIG_HOME/fikit/fikit.ini (default ~/.config), /etc/fikit/fikit.ini,
 * built-in defaults. An explicit or $FIKIT_CONFIG path that does not exist
 * is an error; the others are skipped when absent. */
int fikit_config_load(const char *explicit_path, struct fikit_config *c, struct fikit_err *err);

/* The latency budget of a task (tc may be NULL) at priority: its own,
 * else [scheduler] latency_budget at priority 0; 0: none. */
double fikit_config_task_budget(const struct fikit_config *c, const struct fikit_task_conf *tc, int priority);
/* Whether that budget is on the task's requests (latency_budget_of =
 * requests): its own latency_budget_of, else [scheduler]'s. */
bool fikit_config_task_budget_of_requests(const struct fikit_config *c, const struct fikit_task_conf *tc);
const struct fikit_task_conf *fikit_config_task(const struct fikit_config *c, const char *name);

/* How a task of a priority shares its device with higher levels: from its
 * [task.NAME] section (tc, NULL if none) where that says, else, on MPS,
 * from [scheduler] mps_lower_share for priorities 1-9. One rule for
 * fikit-launch (which sets the MPS environment), the client and fikit sim. */
struct fikit_task_sharing {
    enum fikit_share share;
    int thread_pct;           /* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE to set; 0: none */
    int confine_pct;          /* mps_lower_cap = launches: the share of the SMs fikit confines
                               * its launches to while a higher level is active; 0: none */
    bool low_client_priority; /* CUDA_MPS_CLIENT_PRIORITY=1 (below normal) to set */
};
void fikit_config_task_sharing(const struct fikit_config *c, const struct fikit_task_conf *tc,
                               int priority, struct fikit_task_sharing *out);
/* Its share of the SMs, however kept (percent; 0: the whole device). */
static inline int fikit_task_sm_share(const struct fikit_task_sharing *s)
{
    return s->thread_pct ? s->thread_pct : s->confine_pct;
}
/* "serve, train" into buf, for "known tasks: ..." messages. */
void fikit_config_task_list(const struct fikit_config *c, char *buf, size_t len);

/* Whether a task name is acceptable: [A-Za-z0-9_.-], 1..63 bytes. */
bool fikit_task_name_valid(const char *name);

/* Derived paths. Each returns 0 or -ENAMETOOLONG. */
int fikit_config_socket_path(const struct fikit_config *c, char *buf, size_t len);
int fikit_config_state_dir(const struct fikit_config *c, char *buf, size_t len);
int fikit_config_profile_dir(const struct fikit_config *c, char *buf, size_t len);

/* Scheduler parameters for a device, given a calibrated switch cost
 * (-1: none calibrated). */
void fikit_config_sched_params(const struct fikit_config *c, int64_t calibrated_cost_ns,
                               struct fikit_sched_params *p);
/* The parameters of the built-in defaults (no calibration): the table's,
 * for tests and tools that have no fikit.ini. */
void fikit_sched_params_default(struct fikit_sched_params *p);

/* spin_us = auto: what it means is core's (fikit_spin_auto_ns). */
#define FIKIT_SPIN_AUTO (UINT64_MAX - 1)

/* The spin_us in force for a device on a machine with online_cpus CPUs, in
 * ns (or FIKIT_SPIN_ALWAYS); device_on_host: the device computes on them. */
uint64_t fikit_config_spin_ns(const struct fikit_config *c, long online_cpus, bool device_on_host);

/* The highest level (lowest number) a user may claim under [limits]: the
 * strictest (numerically highest) of the rules that name the user, as
 * user.NAME or through a group.NAME the user is in; default for a user no
 * rule names. So a rule only ever lowers what its users may take.
 * in_group(group, arg) says whether the user is in the group: 1, 0, or
 * -errno (returned as is). user may be NULL (no name: no user rule applies). */
int fikit_config_limit_for(const struct fikit_config *c, const char *user,
                           int (*in_group)(const char *group, void *arg), void *arg);
/* The same for a peer's credentials, looked up in the user and group
 * databases (the group: primary gid, or a member listed there). Returns the
 * level, or -errno when a lookup failed: the caller refuses rather than
 * guesses. */
int fikit_config_max_priority(const struct fikit_config *c, uid_t uid, gid_t gid);

#endif
