#include "conf/config.h"

#include "core/clock.h"
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
static const char *const lower_cap_names[] = {"threads", "launches"};
static const char *const budget_of_names[] = {"requests", "bursts"};

const char *fikit_backend_choice_name(enum fikit_backend_choice b)
{
    return (unsigned)b < 4 ? backend_choice_names[b] : "?";
}

static const struct fikit_conf_key *key_of(const char *section, const char *key);
static int enum_index(const struct fikit_conf_key *k, const char *name);

/* FIKIT_BACKEND and fikit-launch --backend: what [fikit] backend accepts. */
int fikit_backend_choice_parse(const char *s, enum fikit_backend_choice *out)
{
    int i = enum_index(key_of("fikit", "backend"), s);
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

const char *fikit_budget_of_name(enum fikit_budget_of b)
{
    return (unsigned)b < 2 ? budget_of_names[b] : "?";
}

const char *fikit_lower_cap_name(enum fikit_lower_cap c)
{
    return (unsigned)c < 2 ? lower_cap_names[c] : "?";
}

static const char *on_missing_name(int i)
{
    return (unsigned)i < 2 ? on_missing_names[i] : "?";
}

/* The table's enum rows name their values through these. */
static const char *backend_name(int i) { return fikit_backend_choice_name((enum fikit_backend_choice)i); }
static const char *log_level_name(int i) { return fikit_log_level_name((enum fikit_log_level)i); }
static const char *policy_name(int i) { return fikit_policy_name((enum fikit_policy)i); }
static const char *substrate_name(int i) { return fikit_substrate_name((enum fikit_substrate)i); }
static const char *share_name(int i) { return fikit_share_name((enum fikit_share)i); }
static const char *lower_cap_name(int i) { return fikit_lower_cap_name((enum fikit_lower_cap)i); }
static const char *budget_of_name(int i) { return fikit_budget_of_name((enum fikit_budget_of)i); }
static const char *off_on_name(int i) { return i == 0 ? "off" : i == 1 ? "on" : "?"; }

uint64_t fikit_substrate_default_cost_ns(enum fikit_substrate s)
{
    /* DESIGN.md: ~250 us per switch back under time-slicing on an H200;
     * MPS does not switch contexts. */
    return s == FIKIT_SUBSTRATE_MPS ? 5 * 1000 : 250 * 1000;
}

/* ------------------------------------------------------------- the table */

#define FIELD(type, member) .off = offsetof(type, member), .size = sizeof(((type *)0)->member)
#define CFG(member) FIELD(struct fikit_config, member)
#define TASK(member) FIELD(struct fikit_task_conf, member)
#define ENUM(fn, n) .type = FIKIT_CONF_ENUM, .name = (fn), .nnames = (n)
#define UINT(lo, hi, unit) .type = FIKIT_CONF_UINT, .min = (lo), .max = (hi), .scale = (unit)
#define DOUBLE(lo, hi) .type = FIKIT_CONF_DOUBLE, .dmin = (lo), .dmax = (hi)
#define COUNT 1
#define US FIKIT_NS_PER_US
#define MS FIKIT_NS_PER_MS
#define LEVEL UINT(0, FIKIT_LEVELS - 1, COUNT)

const char *const fikit_conf_sections[] = {"fikit", "scheduler", "daemon", "client", "task.NAME", "limits"};
const size_t fikit_conf_nsections = sizeof fikit_conf_sections / sizeof fikit_conf_sections[0];

/* One row a key, in the order of conf/fikit.ini and of "unknown key" lists:
 * its default is the only one (core has none), and the policy's keys are
 * bound to the one parameter record, c->sched. */
const struct fikit_conf_key fikit_conf_keys[] = {
    {"fikit", "backend", ENUM(backend_name, 4), .def = "auto", CFG(backend)},
    {"fikit", "log_level", ENUM(log_level_name, 5), .words = {{"warning", FIKIT_LOG_WARN}}, .def = "warn",
     CFG(log_level)},

    {"scheduler", "policy", ENUM(policy_name, 3), .def = "fill", CFG(sched.policy)},
    {"scheduler", "substrate", ENUM(substrate_name, 2), .def = "timeslice", CFG(substrate)},
    {"scheduler", "substrate_cost_us", UINT(0, 1000000, US), .words = {{"auto", (uint64_t)-1}},
     .def = "auto", CFG(substrate_cost_ns)},
    {"scheduler", "safety_margin_us", UINT(0, 1000000, US), .def = "20", CFG(sched.safety_margin_ns)},
    {"scheduler", "gap_confidence", DOUBLE(0.0, 0.5), .def = "0.3", CFG(sched.gap_confidence)},
    {"scheduler", "idle_after_us", UINT(1, 60000000, US), .words = {{"auto", 0}}, .def = "auto",
     CFG(sched.idle_after_ns)},
    {"scheduler", "idle_floor_us", UINT(1, 60000000, US), .def = "20000", CFG(sched.idle_floor_ns)},
    {"scheduler", "pauses", ENUM(off_on_name, 2), .def = "on", CFG(sched.pauses)},
    {"scheduler", "recheck_us", UINT(10, 1000000, US), .def = "1000", CFG(sched.recheck_ns)},
    {"scheduler", "starve_after_us", UINT(0, 60000000, US), .def = "2000", CFG(sched.starve_after_ns)},
    {"scheduler", "max_queued_us", UINT(0, 1000000, US), .def = "100", CFG(sched.max_queued_ns)},
    {"scheduler", "max_wait_ms", UINT(0, 3600000, MS), .def = "1000", CFG(sched.max_wait_ns)},
    {"scheduler", "mps_lower_share", ENUM(share_name, 2), .def = "beside", CFG(mps_lower_share)},
    {"scheduler", "mps_lower_thread_percentage", UINT(1, 99, COUNT), .def = "70", CFG(mps_lower_thread_pct)},
    {"scheduler", "mps_lower_cap", ENUM(lower_cap_name, 2), .def = "threads", CFG(mps_lower_cap)},
    {"scheduler", "beside_max_slowdown", DOUBLE(1.0, 10.0), .zero_off = true, .def = "0",
     CFG(sched.beside_max_slowdown)},
    {"scheduler", "latency_budget", DOUBLE(1.0, 10.0), .zero_off = true, .def = "1.1", CFG(latency_budget)},
    {"scheduler", "latency_budget_of", ENUM(budget_of_name, 2), .def = "requests", CFG(latency_budget_of)},
    {"scheduler", "poll_us", UINT(0, 100000, US), .def = "50", CFG(poll_ns)},
    {"scheduler", "spin_us", UINT(0, 10000, US),
     .words = {{"auto", FIKIT_SPIN_AUTO}, {"always", FIKIT_SPIN_ALWAYS}}, .def = "auto", CFG(spin_ns)},

    {"daemon", "socket", .type = FIKIT_CONF_PATH, .words = {{"auto", 0}}, .def = "auto", CFG(socket_path)},
    {"daemon", "socket_group", .type = FIKIT_CONF_GROUP, .words = {{"auto", 0}}, .def = "auto",
     CFG(socket_group)},
    {"daemon", "state_dir", .type = FIKIT_CONF_PATH, .words = {{"auto", 0}}, .def = "auto", CFG(state_dir)},
    {"daemon", "trace_events", UINT(1024, 16777216, COUNT), .def = "65536", CFG(trace_events)},
    {"daemon", "warn_held_after_ms", UINT(0, 3600000, MS), .def = "10000", CFG(warn_held_ns)},
    {"daemon", "metrics_file", .type = FIKIT_CONF_PATH, .words = {{"off", 0}}, .def = "off",
     CFG(metrics_file)},
    {"daemon", "metrics_interval_ms", UINT(100, 3600000, MS), .def = "5000", CFG(metrics_interval_ns)},

    {"client", "on_daemon_missing", ENUM(on_missing_name, 2), .def = "passthrough", CFG(on_daemon_missing)},
    {"client", "sample_rate", DOUBLE(0.0, 1.0), .def = "0.02", CFG(sample_rate)},
    {"client", "profile_dir", .type = FIKIT_CONF_PATH, .words = {{"auto", 0}}, .def = "auto",
     CFG(profile_dir)},
    {"client", "default_priority", LEVEL, .def = "5", CFG(default_priority)},

    /* A task's keys have no default: priority must be set, the others are
     * off until set (task_conf_for). */
    {"task.NAME", "priority", LEVEL, TASK(priority)},
    {"task.NAME", "mps_thread_percentage", UINT(1, 100, COUNT), TASK(mps_thread_percentage)},
    {"task.NAME", "share", ENUM(share_name, 2), TASK(share),
     .line_off = offsetof(struct fikit_task_conf, share_line) + 1},
    {"task.NAME", "latency_budget", DOUBLE(1.0, 10.0), .zero_off = true, TASK(latency_budget)},
    {"task.NAME", "latency_budget_of", ENUM(budget_of_name, 2), TASK(latency_budget_of),
     .line_off = offsetof(struct fikit_task_conf, budget_of_line) + 1},

    {"limits", "default", LEVEL, .def = "0", CFG(limit_default)},
    /* A rule: a level for one user or group, kept in c->limits. */
    {"limits", "user.NAME", LEVEL, FIELD(struct fikit_limit, max_priority)},
    {"limits", "group.NAME", LEVEL, FIELD(struct fikit_limit, max_priority)},
};
const size_t fikit_conf_nkeys = sizeof fikit_conf_keys / sizeof fikit_conf_keys[0];

bool fikit_conf_name_matches(const char *pattern, const char *name)
{
    size_t n = strlen(pattern);
    if (n > 5 && strcmp(pattern + n - 5, ".NAME") == 0)
        return strncmp(pattern, name, n - 4) == 0;
    return strcmp(pattern, name) == 0;
}

static const char *section_of(const char *name)
{
    for (size_t i = 0; i < fikit_conf_nsections; i++)
        if (fikit_conf_name_matches(fikit_conf_sections[i], name))
            return fikit_conf_sections[i];
    return NULL;
}

static const struct fikit_conf_key *key_of(const char *section, const char *key)
{
    for (size_t i = 0; i < fikit_conf_nkeys; i++)
        if (strcmp(fikit_conf_keys[i].section, section) == 0 &&
            fikit_conf_name_matches(fikit_conf_keys[i].key, key))
            return &fikit_conf_keys[i];
    return NULL;
}

/* The value an enum row names name, or -1. */
static int enum_index(const struct fikit_conf_key *k, const char *name)
{
    for (int i = 0; i < k->nnames; i++)
        if (strcmp(name, k->name(i)) == 0)
            return i;
    return -1;
}

/* "a, b, c" of a section's keys, or (section NULL) "[a], [b]" of the sections. */
static void list_names(const char *section, char *buf, size_t len)
{
    size_t used = 0;
    buf[0] = '\0';
    size_t n = section ? fikit_conf_nkeys : fikit_conf_nsections;
    for (size_t i = 0; i < n && used < len; i++) {
        if (section && strcmp(fikit_conf_keys[i].section, section) != 0)
            continue;
        int w = section ? snprintf(buf + used, len - used, "%s%s", used ? ", " : "", fikit_conf_keys[i].key)
                        : snprintf(buf + used, len - used, "%s[%s]", used ? ", " : "", fikit_conf_sections[i]);
        if (w < 0)
            break;
        used += (size_t)w;
    }
}

/* "auto, always" of a row's words; "" without. */
static int words_of(const struct fikit_conf_key *k, char *buf, size_t len)
{
    int n = 0;
    buf[0] = '\0';
    for (int i = 0; i < 2 && k->words[i].word; i++)
        n += snprintf(buf + n, len - (size_t)n, "%s%s", i ? ", " : "", k->words[i].word);
    return n;
}

void fikit_conf_accepted(const struct fikit_conf_key *k, bool ini, char *buf, size_t len)
{
    char w[64];
    const char *or = words_of(k, w, sizeof w) ? " or " : "";
    switch (k->type) {
    case FIKIT_CONF_ENUM: {
        size_t used = 0;
        buf[0] = '\0';
        for (int i = 0; i < k->nnames && used < len; i++) {
            int n = snprintf(buf + used, len - used, "%s%s", i ? ", " : "", k->name(i));
            if (n < 0)
                break;
            used += (size_t)n;
        }
        break;
    }
    case FIKIT_CONF_UINT:
        snprintf(buf, len, ini ? "%s%s%llu..%llu" : "%s%san integer from %llu to %llu", w, or,
                 (unsigned long long)k->min, (unsigned long long)k->max);
        break;
    case FIKIT_CONF_DOUBLE:
        snprintf(buf, len, ini ? "%s%g..%g" : "%sa number from %g to %g", k->zero_off ? "0 (off) or " : "",
                 k->dmin, k->dmax);
        break;
    case FIKIT_CONF_PATH:
        snprintf(buf, len, "%s or an absolute path", w);
        break;
    case FIKIT_CONF_GROUP:
        snprintf(buf, len, "%s or a group name", w);
        break;
    }
}

void fikit_conf_value(const struct fikit_conf_key *k, const void *base, char *buf, size_t len)
{
    const char *p = (const char *)base + k->off;
    uint64_t v = 0;
    if (k->type == FIKIT_CONF_ENUM || k->type == FIKIT_CONF_UINT) {
        uint32_t v32;
        if (k->size == sizeof(bool))
            v = *(const bool *)p;
        else if (k->size == sizeof v32)
            memcpy(&v32, p, sizeof v32), v = v32;
        else
            memcpy(&v, p, sizeof v);
    }
    switch (k->type) {
    case FIKIT_CONF_ENUM: /* its words are other spellings: the name is the value */
        snprintf(buf, len, "%s", v < (uint64_t)k->nnames ? k->name((int)v) : "?");
        return;
    case FIKIT_CONF_UINT:
        for (int i = 0; i < 2 && k->words[i].word; i++) {
            if (v == k->words[i].value) {
                snprintf(buf, len, "%s", k->words[i].word);
                return;
            }
        }
        snprintf(buf, len, "%llu", (unsigned long long)(v / k->scale));
        return;
    case FIKIT_CONF_DOUBLE: {
        double d;
        memcpy(&d, p, sizeof d);
        snprintf(buf, len, "%g", d);
        return;
    }
    case FIKIT_CONF_PATH:
    case FIKIT_CONF_GROUP:
        snprintf(buf, len, "%s", p[0] ? p : k->words[0].word);
        return;
    }
}

/* -------------------------------------------------------------- defaults */

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

#define MAX_SEEN 512

struct parse_ctx {
    const char *path;
    FILE *fp;
    int line;           /* the line the reader handed over last */
    bool in_key;        /* the previous content line was a key (for continuation checks) */
    struct fikit_config *c;
    struct fikit_err *err;
    int rc;             /* first error */
    int nerrors;        /* every error, of which msg holds as many as fit */
    int shown;          /* errors in msg */
    const char *section; /* the handler's, while it handles a key */
    uint64_t bad[MAX_SEEN]; /* hashes of the sections with an error in a key */
    int nbad;
    uint64_t seen[MAX_SEEN]; /* hashes of "section\nkey" already set */
    int nseen;
};

static uint64_t hash_str(const char *a, const char *b);

/* Records an error at the current line. Every error of a file is found in
 * one read: the first is the message (one line, as every caller prints
 * it), the others follow it on lines of their own as far as they fit, and
 * a last line counts the rest. */
__attribute__((format(printf, 2, 3))) static int fail(struct parse_ctx *x, const char *fmt, ...)
{
    char what[600];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    x->nerrors++;
    if (x->section && x->nbad < MAX_SEEN)
        x->bad[x->nbad++] = hash_str(x->section, "");
    if (!x->rc) {
        x->rc = fikit_err_set(x->err, -EINVAL, "%s:%d: %s", x->path, x->line, what);
        x->shown = 1;
        return 0;
    }
    if (!x->err)
        return 0;
    size_t used = strlen(x->err->msg), room = sizeof x->err->msg - used;
    char line[sizeof x->err->msg];
    int n = snprintf(line, sizeof line, "\n%s:%d: %s", x->path, x->line, what);
    /* Keep room for the count of those that do not fit. */
    if (n > 0 && (size_t)n + 48 < room) {
        memcpy(x->err->msg + used, line, (size_t)n + 1);
        x->shown++;
    }
    return 0;
}

/* The count of the errors the message could not hold, at its end. */
static void count_the_rest(struct parse_ctx *x)
{
    if (!x->err || x->nerrors <= x->shown)
        return;
    size_t used = strlen(x->err->msg);
    snprintf(x->err->msg + used, sizeof x->err->msg - used, "\n(and %d more errors)", x->nerrors - x->shown);
}

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

static void store(void *base, const struct fikit_conf_key *k, uint64_t v)
{
    char *p = (char *)base + k->off;
    if (k->size == sizeof(bool)) { /* an off/on row */
        *(bool *)p = v != 0;
    } else if (k->size == sizeof(uint32_t)) {
        uint32_t v32 = (uint32_t)v;
        memcpy(p, &v32, sizeof v32);
    } else {
        memcpy(p, &v, sizeof v);
    }
}

/* Sets k's field in base (a struct fikit_config, fikit_task_conf or
 * fikit_limit) from val, or fails with the row's accepted list. */
static bool set_key(struct parse_ctx *x, const char *sec, const char *key, const char *val,
                    const struct fikit_conf_key *k, void *base)
{
    char accepted[160], w[64];
    fikit_conf_accepted(k, false, accepted, sizeof accepted);
    const char *why = NULL;
    for (int i = 0; i < 2 && k->words[i].word; i++) {
        if (strcmp(val, k->words[i].word) == 0) {
            if (k->type == FIKIT_CONF_PATH || k->type == FIKIT_CONF_GROUP)
                ((char *)base + k->off)[0] = '\0';
            else
                store(base, k, k->words[i].value);
            goto set;
        }
    }
    switch (k->type) {
    case FIKIT_CONF_ENUM: {
        int i = enum_index(k, val);
        if (i >= 0) {
            store(base, k, (uint64_t)i);
            goto set;
        }
        why = "unknown value";
        break;
    }
    case FIKIT_CONF_UINT: {
        uint64_t v;
        bool number = to_u64(val, &v) == 0;
        if (number && v >= k->min && v <= k->max) {
            store(base, k, v * k->scale);
            goto set;
        }
        if (words_of(k, w, sizeof w)) {
            char why_buf[96];
            snprintf(why_buf, sizeof why_buf, "not %s or a whole number in range", w);
            fail(x, "[%s] %s = %s: %s (accepted: %s)", sec, key, val, why_buf, accepted);
            return false;
        }
        why = number ? "out of range" : "not a whole number";
        break;
    }
    case FIKIT_CONF_DOUBLE: {
        char *end;
        errno = 0;
        double v = strtod(val, &end);
        if (!*val || errno || *end || !isfinite(v))
            why = "not a number";
        else if ((v < k->dmin || v > k->dmax) && !(k->zero_off && v == 0))
            why = "out of range";
        else {
            memcpy((char *)base + k->off, &v, sizeof v);
            goto set;
        }
        break;
    }
    case FIKIT_CONF_PATH:
        if (val[0] != '/')
            why = "not an absolute path";
        else if (strlen(val) >= k->size)
            why = "path too long";
        break;
    case FIKIT_CONF_GROUP:
        if (!*val || strlen(val) >= k->size)
            why = "not a group name";
        break;
    }
    if (why) {
        fail(x, "[%s] %s = %s: %s (accepted: %s)", sec, key, val, why, accepted);
        return false;
    }
    snprintf((char *)base + k->off, k->size, "%s", val);
set:
    if (k->line_off)
        memcpy((char *)base + k->line_off - 1, &x->line, sizeof x->line);
    return true;
}

void fikit_config_defaults(struct fikit_config *c)
{
    memset(c, 0, sizeof *c);
    struct fikit_err err;
    struct parse_ctx x = {.path = "(built-in defaults)", .c = c, .err = &err};
    for (size_t i = 0; i < fikit_conf_nkeys; i++) {
        const struct fikit_conf_key *k = &fikit_conf_keys[i];
        if (k->def && !set_key(&x, k->section, k->key, k->def, k, c))
            fikit_log(FIKIT_LOG_ERROR, "%s", err.msg); /* a wrong row: unit.config fails on it */
    }
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

/* A [limits] rule: user.NAME or group.NAME, appended to c->limits once its
 * level parsed. */
static void set_limit(struct parse_ctx *x, const char *section, const char *key, const char *val,
                      const struct fikit_conf_key *k)
{
    struct fikit_config *c = x->c;
    bool is_group = strncmp(key, "group.", 6) == 0;
    const char *who = strchr(key, '.') + 1;
    if (!*who || strlen(who) >= FIKIT_NAME_MAX) {
        fail(x, "[%s] %s: missing or too long user or group name", section, key);
        return;
    }
    if (c->nlimits == FIKIT_MAX_LIMITS) {
        fail(x, "[%s] %s: too many limits (at most %d)", section, key, FIKIT_MAX_LIMITS);
        return;
    }
    struct fikit_limit l = {.is_group = is_group};
    snprintf(l.name, sizeof l.name, "%s", who);
    if (set_key(x, section, key, val, k, &l))
        c->limits[c->nlimits++] = l;
}

static int handle_key(struct parse_ctx *x, const char *section, const char *key, const char *val)
{
    struct fikit_config *c = x->c;
    const char *sec = section_of(section);
    if (!sec) {
        if (!*section) {
            char sections[160];
            list_names(NULL, sections, sizeof sections);
            fail(x, "%s = %s: key outside any section (sections: %s)", key, val, sections);
        }
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

    void *base = c;
    if (strcmp(sec, "task.NAME") == 0 && !(base = task_conf_for(c, section + 5, x->line))) {
        fail(x, "[%s]: too many tasks (at most %d)", section, FIKIT_MAX_TASK_CONFS);
        return 1;
    }
    const struct fikit_conf_key *k = key_of(sec, key);
    if (!k) {
        char keys[400];
        list_names(sec, keys, sizeof keys);
        fail(x, "[%s] %s: unknown key (accepted: %s)", section, key, keys);
    } else if (strcmp(sec, "limits") == 0 && !k->def) {
        set_limit(x, section, key, val, k);
    } else {
        set_key(x, section, key, val, k, base);
    }
    return 1;
}

/* inih's handler: the errors of a key are the section's (fail). */
static int handler(void *user, const char *section, const char *key, const char *val)
{
    struct parse_ctx *x = user;
    x->section = section;
    int r = handle_key(x, section, key, val);
    x->section = NULL;
    return r;
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
        const char *sec = section_of(name);
        bool task = sec && strcmp(sec, "task.NAME") == 0;
        char sections[160];
        list_names(NULL, sections, sizeof sections);
        if (!sec)
            fail(x, "[%s]: unknown section (accepted: %s)", name, sections);
        else if (task && !fikit_task_name_valid(name + 5))
            fail(x, "[%s]: bad task name '%s' (accepted: 1 to 63 of A-Z a-z 0-9 _ . -)", name,
                 name + 5);
        else if (task && !task_conf_for(x->c, name + 5, x->line))
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
    if (r < 0)
        return fikit_err_set(err, -EIO, "%s: cannot parse the configuration", path);
    if (r > 0 && !x.rc) {
        x.line = r;
        fail(&x, "not a section header, key = value, or comment");
    }
    for (int i = 0; i < c->ntasks; i++) {
        /* A task whose section had an error (its priority out of range, say)
         * is not reported again for what that error left unset. */
        char sec[FIKIT_NAME_MAX + 8];
        snprintf(sec, sizeof sec, "task.%s", c->tasks[i].name);
        bool bad = false;
        for (int k = 0; k < x.nbad && !bad; k++)
            bad = x.bad[k] == hash_str(sec, "");
        if (bad)
            continue;
        if (c->tasks[i].priority < 0) {
            x.line = c->tasks[i].line;
            char accepted[160];
            fikit_conf_accepted(key_of("task.NAME", "priority"), false, accepted, sizeof accepted);
            fail(&x, "[task.%s]: priority is not set (accepted: %s)", c->tasks[i].name, accepted);
            continue;
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
        }
    }
    if (x.rc) {
        count_the_rest(&x);
        return x.rc;
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

void fikit_config_task_sharing(const struct fikit_config *c, const struct fikit_task_conf *tc,
                               int priority, struct fikit_task_sharing *out)
{
    *out = (struct fikit_task_sharing){.share = FIKIT_SHARE_GAPS};
    if (c->substrate != FIKIT_SUBSTRATE_MPS)
        return; /* beside needs MPS's thread cap (checked at load for [task] sections) */
    out->thread_pct = tc ? tc->mps_thread_percentage : 0;
    if (tc && tc->share_line) {
        out->share = tc->share;
    } else if (priority >= 1 && c->mps_lower_share == FIKIT_SHARE_BESIDE) {
        if (!out->thread_pct)
            out->thread_pct = c->mps_lower_thread_pct;
        /* A cap of 100 keeps nothing free for the higher levels. */
        out->share = out->thread_pct < 100 ? FIKIT_SHARE_BESIDE : FIKIT_SHARE_GAPS;
    }
    out->low_client_priority = priority >= 1;
    if (out->share == FIKIT_SHARE_BESIDE && c->mps_lower_cap == FIKIT_CAP_LAUNCHES) {
        /* An uncapped MPS client: a thread cap and a green context do not
         * combine (cuDevSmResourceSplitByCount refuses under one). */
        out->confine_pct = out->thread_pct;
        out->thread_pct = 0;
    }
}

double fikit_config_task_budget(const struct fikit_config *c, const struct fikit_task_conf *tc, int priority)
{
    if (tc && tc->latency_budget > 0)
        return tc->latency_budget;
    return priority == 0 ? c->latency_budget : 0;
}

bool fikit_config_task_budget_of_requests(const struct fikit_config *c, const struct fikit_task_conf *tc)
{
    enum fikit_budget_of of = tc && tc->budget_of_line ? tc->latency_budget_of : c->latency_budget_of;
    return of == FIKIT_BUDGET_OF_REQUESTS;
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
    *p = c->sched;
    p->switches_contexts = c->substrate == FIKIT_SUBSTRATE_TIMESLICE;
    if (c->substrate_cost_ns >= 0)
        p->substrate_cost_ns = (uint64_t)c->substrate_cost_ns;
    else if (calibrated_cost_ns >= 0)
        p->substrate_cost_ns = (uint64_t)calibrated_cost_ns;
    else
        p->substrate_cost_ns = fikit_substrate_default_cost_ns(c->substrate);
}

void fikit_sched_params_default(struct fikit_sched_params *p)
{
    struct fikit_config *c = malloc(sizeof *c);
    if (!c) {
        memset(p, 0, sizeof *p);
        return;
    }
    fikit_config_defaults(c);
    fikit_config_sched_params(c, -1, p);
    free(c);
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

/* A lookup in the user or group database (getpwuid_r, getgrnam_r): its
 * query, and where the answer goes. */
struct db_query {
    uid_t uid;
    const char *group;
    struct passwd pw, *pwp;
    struct group gr, *grp;
};

static int lookup_user(struct db_query *q, char *buf, size_t len)
{
    return getpwuid_r(q->uid, &q->pw, buf, len, &q->pwp);
}

static int lookup_group(struct db_query *q, char *buf, size_t len)
{
    return getgrnam_r(q->group, &q->gr, buf, len, &q->grp);
}

/* Runs lookup with a buffer that grows while the answer does not fit
 * (ERANGE) and hands the buffer back in *buf (the caller frees it): the
 * lookup's 0 or errno, or -ENOMEM. */
static int db_lookup(int (*lookup)(struct db_query *, char *, size_t), struct db_query *q, size_t len,
                     char **buf)
{
    for (;;) {
        if (!(*buf = malloc(len)))
            return -ENOMEM;
        int rc = lookup(q, *buf, len);
        if (rc != ERANGE || len >= (1u << 24))
            return rc;
        free(*buf);
        len *= 4;
    }
}

/* Whether the peer is in the group: its primary group (from the kernel) or
 * a member in the group database. 1, 0, or -errno when the lookup failed
 * (no descriptor left, a network directory down): a guess would be wrong
 * either way, so the caller refuses. */
static int peer_in_group(const char *name, void *arg)
{
    const struct peer_ids *p = arg;
    struct db_query q = {.group = name};
    char *buf;
    int rc = db_lookup(lookup_group, &q, 8192, &buf);
    if (rc == -ENOMEM)
        return rc;
    int in = 0;
    if (rc == 0 && q.grp) {
        in = q.grp->gr_gid == p->gid;
        for (char **m = q.grp->gr_mem; !in && p->user && *m; m++)
            in = strcmp(*m, p->user) == 0;
    } else if (rc != 0 && rc != ENOENT && rc != ESRCH) {
        in = -rc;
    }
    free(buf);
    return in;
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
    struct db_query q = {.uid = uid};
    char *buf;
    int rc = db_lookup(lookup_user, &q, 4096, &buf);
    if (rc == -ENOMEM)
        return rc;
    if (rc != 0 && rc != ENOENT && rc != ESRCH) {
        free(buf);
        return -rc;
    }
    struct peer_ids ids = {.user = rc == 0 && q.pwp ? q.pwp->pw_name : NULL, .gid = gid};
    int limit = fikit_config_limit_for(c, ids.user, peer_in_group, &ids);
    free(buf);
    return limit;
}
