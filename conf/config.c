#include "conf/config.h"

#include "core/shm.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <ini.h>
#include <math.h>
#include <stdarg.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------ enum names */

static const char *const backend_choice_names[] = {"auto", "cuda", "hip", "opencl"};
static const char *const substrate_names[] = {"timeslice", "mps"};
static const char *const share_names[] = {"gaps", "beside"};
static const char *const on_missing_names[] = {"passthrough", "fail"};

static int parse_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(s, names[i]) == 0)
            return i;
    return -1;
}

const char *fikit_backend_choice_name(enum fikit_backend_choice b)
{
    return (unsigned)b < 4 ? backend_choice_names[b] : "?";
}

int fikit_backend_choice_parse(const char *s, enum fikit_backend_choice *out)
{
    int i = parse_name(s, backend_choice_names, 4);
    if (i < 0)
        return -EINVAL;
    *out = (enum fikit_backend_choice)i;
    return 0;
}

const char *fikit_substrate_name(enum fikit_substrate s)
{
    return (unsigned)s < 2 ? substrate_names[s] : "?";
}

const char *fikit_share_name(enum fikit_share s)
{
    return (unsigned)s < 2 ? share_names[s] : "?";
}

uint64_t fikit_substrate_default_cost_ns(enum fikit_substrate s)
{
    /* DESIGN.md: ~250 us per switch back under time-slicing on an H200;
     * MPS does not switch contexts. */
    return s == FIKIT_SUBSTRATE_MPS ? 5 * 1000 : 250 * 1000;
}

/* -------------------------------------------------------------- defaults */

void fikit_config_defaults(struct fikit_config *c)
{
    memset(c, 0, sizeof *c);
    c->backend = FIKIT_BACKEND_CHOICE_AUTO;
    c->log_level = FIKIT_LOG_WARN;
    struct fikit_sched_params p;
    fikit_sched_params_default(&p);
    c->policy = p.policy;
    c->substrate = FIKIT_SUBSTRATE_TIMESLICE;
    c->substrate_cost_ns = -1;
    c->safety_margin_ns = p.safety_margin_ns;
    c->gap_confidence = p.gap_confidence;
    c->idle_after_ns = 0;
    c->recheck_ns = p.recheck_ns;
    c->starve_after_ns = p.starve_after_ns;
    c->max_queued_ns = p.max_queued_ns;
    c->beside_max_slowdown = p.beside_max_slowdown;
    c->poll_ns = 50 * 1000;
    c->spin_ns = FIKIT_SPIN_AUTO;
    c->trace_events = 65536;
    c->warn_held_ns = 10ull * 1000 * 1000 * 1000;
    c->metrics_interval_ns = 5ull * 1000 * 1000 * 1000;
    c->on_daemon_missing = FIKIT_ON_MISSING_PASSTHROUGH;
    c->sample_rate = 0.02;
    c->default_priority = 5;
    c->limit_default = 0;
}

bool fikit_task_name_valid(const char *name)
{
    size_t n = strlen(name);
    if (n == 0 || n >= FIKIT_NAME_MAX)
        return false;
    for (const char *p = name; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '_' && *p != '-' && *p != '.')
            return false;
    return true;
}

/* --------------------------------------------------------------- parsing */

enum section_kind { SEC_NONE, SEC_FIKIT, SEC_SCHEDULER, SEC_DAEMON, SEC_CLIENT, SEC_TASK, SEC_LIMITS };

#define MAX_SEEN 512

struct parse_ctx {
    const char *path;
    FILE *fp;
    int line;           /* the line the reader handed over last */
    bool in_key;        /* the previous content line was a key (for continuation checks) */
    struct fikit_config *c;
    struct fikit_err *err;
    int rc;             /* first error */
    uint64_t seen[MAX_SEEN]; /* hashes of "section\nkey" already set */
    int nseen;
};

__attribute__((format(printf, 2, 3))) static int fail(struct parse_ctx *x, const char *fmt, ...)
{
    if (x->rc)
        return 0; /* keep the first error only */
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    x->rc = fikit_err_set(x->err, -EINVAL, "%s:%d: %s", x->path, x->line, what);
    return 0;
}

#define BAD(x, sec, key, val, why, accepted)                                                       \
    fail((x), "[%s] %s = %s: %s (accepted: %s)", (sec), (key), (val), (why), (accepted))

static enum section_kind classify(const char *section)
{
    if (strcmp(section, "fikit") == 0)
        return SEC_FIKIT;
    if (strcmp(section, "scheduler") == 0)
        return SEC_SCHEDULER;
    if (strcmp(section, "daemon") == 0)
        return SEC_DAEMON;
    if (strcmp(section, "client") == 0)
        return SEC_CLIENT;
    if (strcmp(section, "limits") == 0)
        return SEC_LIMITS;
    if (strncmp(section, "task.", 5) == 0)
        return SEC_TASK;
    return SEC_NONE;
}

#define SECTION_NAMES "[fikit], [scheduler], [daemon], [client], [task.NAME], [limits]"

/* Parses a whole unsigned integer. */
static int to_u64(const char *s, uint64_t *out)
{
    if (!*s || !isdigit((unsigned char)*s))
        return -EINVAL;
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end)
        return -EINVAL;
    *out = v;
    return 0;
}

static bool get_uint(struct parse_ctx *x, const char *sec, const char *key, const char *val,
                     uint64_t min, uint64_t max, uint64_t *out)
{
    uint64_t v;
    char accepted[96];
    snprintf(accepted, sizeof accepted, "an integer from %llu to %llu", (unsigned long long)min,
             (unsigned long long)max);
    if (to_u64(val, &v)) {
        BAD(x, sec, key, val, "not a whole number", accepted);
        return false;
    }
    if (v < min || v > max) {
        BAD(x, sec, key, val, "out of range", accepted);
        return false;
    }
    *out = v;
    return true;
}

static bool get_double(struct parse_ctx *x, const char *sec, const char *key, const char *val,
                       double min, double max, double *out)
{
    char accepted[96], *end;
    snprintf(accepted, sizeof accepted, "a number from %g to %g", min, max);
    errno = 0;
    double v = strtod(val, &end);
    if (!*val || errno || *end || !isfinite(v)) {
        BAD(x, sec, key, val, "not a number", accepted);
        return false;
    }
    if (v < min || v > max) {
        BAD(x, sec, key, val, "out of range", accepted);
        return false;
    }
    *out = v;
    return true;
}

static bool get_enum(struct parse_ctx *x, const char *sec, const char *key, const char *val,
                     const char *const *names, int n, const char *accepted, int *out)
{
    int i = parse_name(val, names, n);
    if (i < 0) {
        BAD(x, sec, key, val, "unknown value", accepted);
        return false;
    }
    *out = i;
    return true;
}

static bool get_path(struct parse_ctx *x, const char *sec, const char *key, const char *val,
                     char *out, size_t len)
{
    if (strcmp(val, "auto") == 0) {
        out[0] = '\0';
        return true;
    }
    if (val[0] != '/') {
        BAD(x, sec, key, val, "not an absolute path", "auto or an absolute path");
        return false;
    }
    if (strlen(val) >= len) {
        BAD(x, sec, key, val, "path too long", "auto or an absolute path");
        return false;
    }
    strcpy(out, val);
    return true;
}

/* microseconds, stored as ns; "auto" allowed where auto_ns is not NULL */
static bool get_us(struct parse_ctx *x, const char *sec, const char *key, const char *val,
                   uint64_t min_us, uint64_t max_us, uint64_t *out_ns)
{
    uint64_t us;
    if (!get_uint(x, sec, key, val, min_us, max_us, &us))
        return false;
    *out_ns = us * 1000;
    return true;
}

static uint64_t hash_str(const char *a, const char *b)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (const char *s = a; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    h = (h ^ '\n') * 0x100000001b3ull;
    for (const char *s = b; *s; s++)
        h = (h ^ (unsigned char)*s) * 0x100000001b3ull;
    return h;
}

static struct fikit_task_conf *task_conf_for(struct fikit_config *c, const char *name, int line)
{
    for (int i = 0; i < c->ntasks; i++)
        if (strcmp(c->tasks[i].name, name) == 0)
            return &c->tasks[i];
    if (c->ntasks == FIKIT_MAX_TASK_CONFS)
        return NULL;
    struct fikit_task_conf *t = &c->tasks[c->ntasks++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    t->priority = -1; /* must be set */
    t->line = line;
    return t;
}

static int handler(void *user, const char *section, const char *key, const char *val)
{
    struct parse_ctx *x = user;
    struct fikit_config *c = x->c;
    if (x->rc)
        return 1;
    enum section_kind kind = classify(section);
    if (kind == SEC_NONE) {
        if (!*section)
            fail(x, "%s = %s: key outside any section (sections: " SECTION_NAMES ")", key, val);
        /* an unknown named section was reported by the reader already */
        return 1;
    }
    uint64_t h = hash_str(section, key);
    for (int i = 0; i < x->nseen; i++) {
        if (x->seen[i] == h) {
            fail(x, "[%s] %s: set twice (a key may be set once per section)", section, key);
            return 1;
        }
    }
    if (x->nseen < MAX_SEEN)
        x->seen[x->nseen++] = h;

    uint64_t u;
    int e;
    switch (kind) {
    case SEC_FIKIT:
        if (strcmp(key, "backend") == 0) {
            if (get_enum(x, section, key, val, backend_choice_names, 4, FIKIT_BACKEND_CHOICE_NAMES, &e))
                c->backend = (enum fikit_backend_choice)e;
        } else if (strcmp(key, "log_level") == 0) {
            enum fikit_log_level l;
            if (fikit_log_parse_level(val, &l))
                BAD(x, section, key, val, "unknown value", FIKIT_LOG_LEVEL_NAMES);
            else
                c->log_level = l;
        } else {
            fail(x, "[%s] %s: unknown key (accepted: backend, log_level)", section, key);
        }
        break;
    case SEC_SCHEDULER:
        if (strcmp(key, "policy") == 0) {
            enum fikit_policy p;
            if (fikit_policy_parse(val, &p))
                BAD(x, section, key, val, "unknown value", FIKIT_POLICY_NAMES);
            else
                c->policy = p;
        } else if (strcmp(key, "substrate") == 0) {
            if (get_enum(x, section, key, val, substrate_names, 2, FIKIT_SUBSTRATE_NAMES, &e))
                c->substrate = (enum fikit_substrate)e;
        } else if (strcmp(key, "substrate_cost_us") == 0) {
            if (strcmp(val, "auto") == 0)
                c->substrate_cost_ns = -1;
            else if (to_u64(val, &u) || u > 1000000)
                BAD(x, section, key, val, "not auto or a whole number in range",
                    "auto or an integer from 0 to 1000000");
            else
                c->substrate_cost_ns = (int64_t)u * 1000;
        } else if (strcmp(key, "safety_margin_us") == 0) {
            get_us(x, section, key, val, 0, 1000000, &c->safety_margin_ns);
        } else if (strcmp(key, "gap_confidence") == 0) {
            get_double(x, section, key, val, 0.0, 0.5, &c->gap_confidence);
        } else if (strcmp(key, "idle_after_us") == 0) {
            if (strcmp(val, "auto") == 0)
                c->idle_after_ns = 0;
            else if (to_u64(val, &u) || u < 1 || u > 60000000)
                BAD(x, section, key, val, "not auto or a whole number in range",
                    "auto or an integer from 1 to 60000000");
            else
                c->idle_after_ns = u * 1000;
        } else if (strcmp(key, "recheck_us") == 0) {
            get_us(x, section, key, val, 10, 1000000, &c->recheck_ns);
        } else if (strcmp(key, "starve_after_us") == 0) {
            get_us(x, section, key, val, 0, 60000000, &c->starve_after_ns);
        } else if (strcmp(key, "max_queued_us") == 0) {
            get_us(x, section, key, val, 0, 1000000, &c->max_queued_ns);
        } else if (strcmp(key, "beside_max_slowdown") == 0) {
            double v;
            if (get_double(x, section, key, val, 0.0, 10.0, &v)) {
                if (v != 0 && v < 1.0)
                    BAD(x, section, key, val, "below 1 (a slowdown)", "0 (off) or a number from 1 to 10");
                else
                    c->beside_max_slowdown = v;
            }
        } else if (strcmp(key, "poll_us") == 0) {
            get_us(x, section, key, val, 0, 100000, &c->poll_ns);
        } else if (strcmp(key, "spin_us") == 0) {
            if (strcmp(val, "always") == 0)
                c->spin_ns = FIKIT_SPIN_ALWAYS;
            else if (strcmp(val, "auto") == 0)
                c->spin_ns = FIKIT_SPIN_AUTO;
            else if (to_u64(val, &u) || u > 10000)
                BAD(x, section, key, val, "not auto, always or a whole number in range",
                    "auto, always or an integer from 0 to 10000");
            else
                c->spin_ns = u * 1000;
        } else {
            fail(x, "[%s] %s: unknown key (accepted: policy, substrate, substrate_cost_us, "
                    "safety_margin_us, gap_confidence, idle_after_us, recheck_us, starve_after_us, "
                    "max_queued_us, beside_max_slowdown, poll_us, spin_us)",
                 section, key);
        }
        break;
    case SEC_DAEMON:
        if (strcmp(key, "socket") == 0) {
            get_path(x, section, key, val, c->socket_path, sizeof c->socket_path);
        } else if (strcmp(key, "socket_group") == 0) {
            if (strcmp(val, "auto") == 0)
                c->socket_group[0] = '\0';
            else if (!*val || strlen(val) >= sizeof c->socket_group)
                BAD(x, section, key, val, "not a group name", "auto or a group name");
            else
                snprintf(c->socket_group, sizeof c->socket_group, "%s", val);
        } else if (strcmp(key, "state_dir") == 0) {
            get_path(x, section, key, val, c->state_dir, sizeof c->state_dir);
        } else if (strcmp(key, "trace_events") == 0) {
            if (get_uint(x, section, key, val, 1024, 16777216, &u))
                c->trace_events = (uint32_t)u;
        } else if (strcmp(key, "warn_held_after_ms") == 0) {
            if (get_uint(x, section, key, val, 0, 3600000, &u))
                c->warn_held_ns = u * 1000 * 1000;
        } else if (strcmp(key, "metrics_file") == 0) {
            if (strcmp(val, "off") == 0)
                c->metrics_file[0] = '\0';
            else if (val[0] != '/' || strlen(val) >= sizeof c->metrics_file)
                BAD(x, section, key, val, "not off or an absolute path", "off or an absolute path");
            else
                snprintf(c->metrics_file, sizeof c->metrics_file, "%s", val);
        } else if (strcmp(key, "metrics_interval_ms") == 0) {
            if (get_uint(x, section, key, val, 100, 3600000, &u))
                c->metrics_interval_ns = u * 1000 * 1000;
        } else {
            fail(x, "[%s] %s: unknown key (accepted: socket, socket_group, state_dir, trace_events, "
                    "warn_held_after_ms, metrics_file, metrics_interval_ms)",
                 section, key);
        }
        break;
    case SEC_CLIENT:
        if (strcmp(key, "on_daemon_missing") == 0) {
            if (get_enum(x, section, key, val, on_missing_names, 2, "passthrough, fail", &e))
                c->on_daemon_missing = (enum fikit_on_missing)e;
        } else if (strcmp(key, "sample_rate") == 0) {
            get_double(x, section, key, val, 0.0, 1.0, &c->sample_rate);
        } else if (strcmp(key, "profile_dir") == 0) {
            get_path(x, section, key, val, c->profile_dir, sizeof c->profile_dir);
        } else if (strcmp(key, "default_priority") == 0) {
            if (get_uint(x, section, key, val, 0, FIKIT_LEVELS - 1, &u))
                c->default_priority = (int)u;
        } else {
            fail(x, "[%s] %s: unknown key (accepted: on_daemon_missing, sample_rate, profile_dir, "
                    "default_priority)",
                 section, key);
        }
        break;
    case SEC_TASK: {
        struct fikit_task_conf *t = task_conf_for(c, section + 5, x->line);
        if (!t) {
            fail(x, "[%s]: too many tasks (at most %d)", section, FIKIT_MAX_TASK_CONFS);
            break;
        }
        if (strcmp(key, "priority") == 0) {
            if (get_uint(x, section, key, val, 0, FIKIT_LEVELS - 1, &u))
                t->priority = (int)u;
        } else if (strcmp(key, "mps_thread_percentage") == 0) {
            if (get_uint(x, section, key, val, 1, 100, &u))
                t->mps_thread_percentage = (int)u;
        } else if (strcmp(key, "share") == 0) {
            if (get_enum(x, section, key, val, share_names, 2, FIKIT_SHARE_NAMES, &e)) {
                t->share = (enum fikit_share)e;
                t->share_line = x->line;
            }
        } else {
            fail(x, "[%s] %s: unknown key (accepted: priority, mps_thread_percentage, share)", section,
                 key);
        }
        break;
    }
    case SEC_LIMITS: {
        if (strcmp(key, "default") == 0) {
            if (get_uint(x, section, key, val, 0, FIKIT_LEVELS - 1, &u))
                c->limit_default = (int)u;
            break;
        }
        bool is_group = strncmp(key, "group.", 6) == 0;
        if (!is_group && strncmp(key, "user.", 5) != 0) {
            fail(x, "[%s] %s: unknown key (accepted: default, user.NAME, group.NAME)", section, key);
            break;
        }
        const char *who = key + (is_group ? 6 : 5);
        if (!*who || strlen(who) >= FIKIT_NAME_MAX) {
            fail(x, "[%s] %s: missing or too long user or group name", section, key);
            break;
        }
        if (c->nlimits == FIKIT_MAX_LIMITS) {
            fail(x, "[%s] %s: too many limits (at most %d)", section, key, FIKIT_MAX_LIMITS);
            break;
        }
        if (get_uint(x, section, key, val, 0, FIKIT_LEVELS - 1, &u)) {
            struct fikit_limit *l = &c->limits[c->nlimits++];
            l->is_group = is_group;
            snprintf(l->name, sizeof l->name, "%s", who);
            l->max_priority = (int)u;
        }
        break;
    }
    case SEC_NONE:
        break;
    }
    return 1;
}

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

/* inih calls this for every line; counting here gives the handler the line
 * number (Debian's inih is built without INI_HANDLER_LINENO), and section
 * headers are checked here, since inih reports only keys. */
static char *reader(char *buf, int size, void *stream)
{
    struct parse_ctx *x = stream;
    /* One line, byte by byte: fgets would end a line's text at a NUL byte
     * and leave the rest for a "line too long". */
    int n = 0, ch = EOF, nul_at = 0;
    bool too_long = false;
    while ((ch = fgetc(x->fp)) != EOF) {
        if (ch == '\0' && !nul_at)
            nul_at = n + 1;
        if (n < size - 1)
            buf[n++] = ch == '\0' ? ' ' : (char)ch;
        else if (ch != '\n')
            too_long = true;
        if (ch == '\n')
            break;
    }
    if (n == 0 && ch == EOF)
        return NULL;
    buf[n] = '\0';
    x->line++;
    if (nul_at || too_long) {
        if (nul_at)
            fail(x, "NUL byte at column %d (a configuration is text)", nul_at);
        else
            fail(x, "line longer than %d characters", size - 3);
        strcpy(buf, ";\n");
        return buf;
    }
    char copy[512];
    snprintf(copy, sizeof copy, "%s", buf);
    bool indented = isspace((unsigned char)copy[0]) && copy[0] != '\n';
    char *t = trim(copy);
    if (*t == '\0' || *t == ';' || *t == '#')
        return buf;
    if (indented && x->in_key) {
        /* inih would append this to the previous value; refuse instead. */
        fail(x, "indented line '%s': continuation lines are not accepted", t);
        strcpy(buf, ";\n");
        return buf;
    }
    if (*t == '[') {
        x->in_key = false;
        char *end = strchr(t, ']');
        if (!end) {
            fail(x, "'%s': section header without ']'", t);
            return buf;
        }
        *end = '\0';
        const char *name = t + 1;
        enum section_kind k = classify(name);
        if (k == SEC_NONE)
            fail(x, "[%s]: unknown section (accepted: " SECTION_NAMES ")", name);
        else if (k == SEC_TASK && !fikit_task_name_valid(name + 5))
            fail(x, "[%s]: bad task name '%s' (accepted: 1 to 63 of A-Z a-z 0-9 _ . -)", name,
                 name + 5);
        else if (k == SEC_TASK && !task_conf_for(x->c, name + 5, x->line))
            fail(x, "[%s]: too many tasks (at most %d)", name, FIKIT_MAX_TASK_CONFS);
        return buf;
    }
    x->in_key = true;
    return buf;
}

int fikit_config_load_file(const char *path, struct fikit_config *c, struct fikit_err *err)
{
    FILE *fp = fopen(path, "re");
    if (!fp) {
        int e = errno;
        return fikit_err_set(err, -e, "%s: cannot read the configuration: %s", path, strerror(e));
    }
    /* A directory opens, reads as empty and would give the built-in
     * defaults ([limits] default = 0 included) as if they were the file. */
    struct stat sb;
    if (fstat(fileno(fp), &sb) != 0) {
        int e = errno;
        fclose(fp);
        return fikit_err_set(err, -e, "%s: cannot read the configuration: %s", path, strerror(e));
    }
    if (!S_ISREG(sb.st_mode)) {
        fclose(fp);
        return fikit_err_set(err, -EINVAL, "%s: not a regular file (%s); the configuration is a text file",
                             path, S_ISDIR(sb.st_mode) ? "a directory" : S_ISFIFO(sb.st_mode) ? "a pipe"
                             : S_ISCHR(sb.st_mode) ? "a character device" : S_ISSOCK(sb.st_mode) ? "a socket"
                             : "not a file");
    }
    struct parse_ctx x = {.path = path, .fp = fp, .c = c, .err = err};
    int r = ini_parse_stream(reader, &x, handler, &x);
    fclose(fp);
    if (x.rc)
        return x.rc;
    if (r > 0) {
        x.line = r;
        fail(&x, "not a section header, key = value, or comment");
        return x.rc;
    }
    if (r < 0)
        return fikit_err_set(err, -EIO, "%s: cannot parse the configuration", path);
    for (int i = 0; i < c->ntasks; i++) {
        if (c->tasks[i].priority < 0) {
            x.line = c->tasks[i].line;
            fail(&x, "[task.%s]: priority is not set (accepted: an integer from 0 to 9)",
                 c->tasks[i].name);
            return x.rc;
        }
        /* Beside higher levels is safe only where the hardware keeps the
         * task off part of the SMs: MPS with a thread cap below 100. */
        const struct fikit_task_conf *t = &c->tasks[i];
        if (t->share == FIKIT_SHARE_BESIDE &&
            (c->substrate != FIKIT_SUBSTRATE_MPS || !t->mps_thread_percentage ||
             t->mps_thread_percentage >= 100)) {
            x.line = t->share_line;
            fail(&x, "[task.%s] share = beside: needs [scheduler] substrate = mps and "
                     "mps_thread_percentage from 1 to 99 for the task (substrate is %s, "
                     "mps_thread_percentage %d)",
                 t->name, fikit_substrate_name(c->substrate), t->mps_thread_percentage);
            return x.rc;
        }
    }
    snprintf(c->source, sizeof c->source, "%s", path);
    return 0;
}

int fikit_config_load(const char *explicit_path, struct fikit_config *c, struct fikit_err *err)
{
    fikit_config_defaults(c);
    if (explicit_path && *explicit_path)
        return fikit_config_load_file(explicit_path, c, err);
    const char *env = getenv("FIKIT_CONFIG");
    if (env && *env)
        return fikit_config_load_file(env, c, err);
    char path[PATH_MAX];
    const char *xdg = getenv("XDG_CONFIG_HOME");
    const char *home = getenv("HOME");
    int n = -1;
    if (xdg && *xdg)
        n = snprintf(path, sizeof path, "%s/fikit/fikit.ini", xdg);
    else if (home && *home)
        n = snprintf(path, sizeof path, "%s/.config/fikit/fikit.ini", home);
    if (n > 0 && (size_t)n < sizeof path && access(path, F_OK) == 0)
        return fikit_config_load_file(path, c, err);
    if (access("/etc/fikit/fikit.ini", F_OK) == 0)
        return fikit_config_load_file("/etc/fikit/fikit.ini", c, err);
    return 0; /* built-in defaults */
}

const struct fikit_task_conf *fikit_config_task(const struct fikit_config *c, const char *name)
{
    for (int i = 0; i < c->ntasks; i++)
        if (strcmp(c->tasks[i].name, name) == 0)
            return &c->tasks[i];
    return NULL;
}

void fikit_config_task_list(const struct fikit_config *c, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    if (c->ntasks == 0) {
        snprintf(buf, len, "(none)");
        return;
    }
    for (int i = 0; i < c->ntasks && used < len; i++) {
        int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", c->tasks[i].name);
        if (n < 0)
            break;
        used += (size_t)n;
    }
}

/* ---------------------------------------------------------------- paths */

static int put(size_t len, int n)
{
    return (n < 0 || (size_t)n >= len) ? -ENAMETOOLONG : 0;
}

int fikit_config_socket_path(const struct fikit_config *c, char *buf, size_t len)
{
    if (c->socket_path[0])
        return put(len, snprintf(buf, len, "%s", c->socket_path));
    const char *rt = getenv("XDG_RUNTIME_DIR");
    if (geteuid() != 0 && rt && *rt)
        return put(len, snprintf(buf, len, "%s/fikit/fikitd.sock", rt));
    if (geteuid() == 0)
        return put(len, snprintf(buf, len, "/run/fikit/fikitd.sock"));
    /* No runtime directory: a per-user path under /tmp. */
    return put(len, snprintf(buf, len, "/tmp/fikit-%u/fikitd.sock", (unsigned)geteuid()));
}

int fikit_config_state_dir(const struct fikit_config *c, char *buf, size_t len)
{
    if (c->state_dir[0])
        return put(len, snprintf(buf, len, "%s", c->state_dir));
    if (geteuid() == 0)
        return put(len, snprintf(buf, len, "/var/lib/fikit"));
    const char *xdg = getenv("XDG_STATE_HOME");
    if (xdg && *xdg)
        return put(len, snprintf(buf, len, "%s/fikit", xdg));
    const char *home = getenv("HOME");
    return put(len, snprintf(buf, len, "%s/.local/state/fikit", home && *home ? home : "/tmp"));
}

int fikit_config_profile_dir(const struct fikit_config *c, char *buf, size_t len)
{
    if (c->profile_dir[0])
        return put(len, snprintf(buf, len, "%s", c->profile_dir));
    char state[PATH_MAX];
    int rc = fikit_config_state_dir(c, state, sizeof state);
    if (rc)
        return rc;
    return put(len, snprintf(buf, len, "%s/profiles", state));
}

uint64_t fikit_config_spin_ns(const struct fikit_config *c, long online_cpus, bool device_on_host)
{
    if (c->spin_ns != FIKIT_SPIN_AUTO)
        return c->spin_ns;
    return fikit_spin_auto_ns(online_cpus, device_on_host);
}

void fikit_config_sched_params(const struct fikit_config *c, int64_t calibrated_cost_ns,
                               struct fikit_sched_params *p)
{
    fikit_sched_params_default(p);
    p->policy = c->policy;
    if (c->substrate_cost_ns >= 0)
        p->substrate_cost_ns = (uint64_t)c->substrate_cost_ns;
    else if (calibrated_cost_ns >= 0)
        p->substrate_cost_ns = (uint64_t)calibrated_cost_ns;
    else
        p->substrate_cost_ns = fikit_substrate_default_cost_ns(c->substrate);
    p->safety_margin_ns = c->safety_margin_ns;
    p->gap_confidence = c->gap_confidence;
    if (c->idle_after_ns)
        p->idle_after_ns = c->idle_after_ns;
    p->idle_learned = c->idle_after_ns == 0;
    p->recheck_ns = c->recheck_ns;
    p->starve_after_ns = c->starve_after_ns;
    p->max_queued_ns = c->max_queued_ns;
    p->beside_max_slowdown = c->beside_max_slowdown;
}

int fikit_config_limit_for(const struct fikit_config *c, const char *user,
                           int (*in_group)(const char *group, void *arg), void *arg)
{
    /* Every rule that names the user, by name or by a group, is a ceiling:
     * the strictest of them binds (a rule only ever lowers what a user may
     * take). default is the ceiling of users that no rule names. */
    int limit = -1;
    for (int i = 0; i < c->nlimits; i++) {
        const struct fikit_limit *l = &c->limits[i];
        int applies;
        if (!l->is_group)
            applies = user && strcmp(user, l->name) == 0;
        else if ((applies = in_group(l->name, arg)) < 0)
            return applies;
        if (applies && l->max_priority > limit)
            limit = l->max_priority;
    }
    return limit >= 0 ? limit : c->limit_default;
}

struct peer_ids {
    const char *user; /* NULL: the uid has no passwd entry */
    gid_t gid;
};

/* Whether the peer is in the group: its primary group (from the kernel) or
 * a member in the group database. 1, 0, or -errno when the lookup failed
 * (no descriptor left, a network directory down): a guess would be wrong
 * either way, so the caller refuses. */
static int peer_in_group(const char *name, void *arg)
{
    const struct peer_ids *p = arg;
    size_t len = 8192;
    for (;;) {
        char *buf = malloc(len);
        if (!buf)
            return -ENOMEM;
        struct group gr, *grp = NULL;
        int rc = getgrnam_r(name, &gr, buf, len, &grp);
        if (rc == ERANGE && len < (1u << 24)) {
            free(buf);
            len *= 4;
            continue;
        }
        int in = 0;
        if (rc == 0 && grp) {
            in = grp->gr_gid == p->gid;
            for (char **m = grp->gr_mem; !in && p->user && *m; m++)
                in = strcmp(*m, p->user) == 0;
        } else if (rc != 0 && rc != ENOENT && rc != ESRCH) {
            in = -rc;
        }
        free(buf);
        return in;
    }
}

int fikit_config_max_priority(const struct fikit_config *c, uid_t uid, gid_t gid)
{
    if (c->nlimits == 0)
        return c->limit_default; /* no rule to look up */
    /* glibc reports a user database it could not open (no descriptor left)
     * as "no such user" when a later source (systemd) answers no: that
     * would silently give the default. Refuse instead when no descriptor is
     * free; with one, the files backend can read. */
    int probe = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (probe < 0)
        return -errno;
    close(probe);
    size_t len = 4096;
    for (;;) {
        char *buf = malloc(len);
        if (!buf)
            return -ENOMEM;
        struct passwd pw, *pwp = NULL;
        int rc = getpwuid_r(uid, &pw, buf, len, &pwp);
        if (rc == ERANGE && len < (1u << 24)) {
            free(buf);
            len *= 4;
            continue;
        }
        if (rc != 0 && rc != ENOENT && rc != ESRCH) {
            free(buf);
            return -rc;
        }
        struct peer_ids ids = {.user = rc == 0 && pwp ? pwp->pw_name : NULL, .gid = gid};
        int limit = fikit_config_limit_for(c, ids.user, peer_in_group, &ids);
        free(buf);
        return limit;
    }
}
