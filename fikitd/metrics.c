/* See metrics.h. Names follow Prometheus's conventions: the fikit_ prefix,
 * counters end in _total, durations are in seconds. docs/cluster.md lists
 * every metric. */
#include "fikitd/metrics.h"

#include "core/clock.h"
#include "core/log.h"
#include "core/sketch.h"
#include "fikitd/attest.h"
#include "conf/config.h"
#include "fikitd/device.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

static struct {
    bool on;
    int timer_fd;
    char path[4096];
    char tmp[4096 + 32];
    char source[4096]; /* the configuration file, for fikit_daemon_info */
    pthread_t thread;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    char *pending; /* the newest snapshot the writer has not taken; an older one is dropped */
    size_t pending_len;
    bool quit;
    double start_time;
} m = {.timer_fd = -1, .lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER};

/* A label value: backslash, double quote and newline escaped. */
static void label(FILE *f, const char *s)
{
    for (; *s; s++) {
        if (*s == '\\' || *s == '"')
            fputc('\\', f);
        if (*s == '\n')
            fputs("\\n", f);
        else
            fputc(*s, f);
    }
}

static void head(FILE *f, const char *name, const char *type, const char *help)
{
    fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

static const double BUCKETS_S[] = {1e-6, 2.5e-6, 5e-6, 1e-5, 2.5e-5, 5e-5, 1e-4,
                                   2.5e-4, 5e-4, 1e-3, 2.5e-3, 5e-3, 1e-2, 1e-1};
#define NBUCKETS (sizeof BUCKETS_S / sizeof BUCKETS_S[0])

struct hist {
    uint64_t count, sum_ns;
    uint64_t le[NBUCKETS];
};

/* A histogram from a statistic's sketch: the count at or below each bound
 * (the sketch's resolution, a few percent of the value). */
static void hist_of(const struct fikit_stat *st, struct hist *h)
{
    h->count = st->count;
    h->sum_ns = st->sum;
    uint64_t prev = 0;
    for (size_t i = 0; i < NBUCKETS; i++) {
        uint64_t n = 0;
        if (st->count) {
            uint64_t bound = (uint64_t)(BUCKETS_S[i] * 1e9);
            n = bound >= st->max ? st->count
                                 : (bound < st->min ? 0
                                                    : (uint64_t)(fikit_sketch_cdf(&st->sketch, bound) *
                                                                 (double)st->count + 0.5));
        }
        if (n > st->count)
            n = st->count;
        if (n < prev)
            n = prev;
        h->le[i] = prev = n;
    }
}

static void hist_print(FILE *f, const char *name, int dev, const struct hist *h)
{
    for (size_t i = 0; i < NBUCKETS; i++)
        fprintf(f, "%s_bucket{device=\"%d\",le=\"%g\"} %llu\n", name, dev, BUCKETS_S[i],
                (unsigned long long)h->le[i]);
    fprintf(f, "%s_bucket{device=\"%d\",le=\"+Inf\"} %llu\n", name, dev, (unsigned long long)h->count);
    fprintf(f, "%s_sum{device=\"%d\"} %.9f\n", name, dev, h->sum_ns / 1e9);
    fprintf(f, "%s_count{device=\"%d\"} %llu\n", name, dev, (unsigned long long)h->count);
}

struct snap {
    struct fikit_msg_status_device md;
    struct fikit_msg_status_task tasks[FIKIT_SHM_SLOTS];
    int nt;
    struct hist pickup, pass;
};

/* One metric per task: name, type, help, and the value of each task. */
#define PER_TASK(metric, type, help, fmt, expr)                                                      \
    do {                                                                                           \
        head(f, metric, type, help);                                                                 \
        for (int i = 0; i < n; i++)                                                                \
            for (int k = 0; k < s[i].nt; k++) {                                                    \
                const struct fikit_msg_status_task *t = &s[i].tasks[k];                            \
                fprintf(f, "%s{device=\"%u\",slot=\"%u\",pid=\"%d\",task=\"%s\"} " fmt "\n", metric,   \
                        t->device_index, t->slot, t->pid, t->name, expr);                          \
            }                                                                                      \
    } while (0)

#define PER_DEVICE(metric, type, help, fmt, expr)                                                    \
    do {                                                                                           \
        head(f, metric, type, help);                                                                 \
        for (int i = 0; i < n; i++) {                                                              \
            const struct fikit_msg_status_device *d = &s[i].md;                                    \
            fprintf(f, "%s{device=\"%u\"} " fmt "\n", metric, d->index, expr);                         \
        }                                                                                          \
    } while (0)

static char *format(struct fikitd_device *const *devs, int n, size_t *len)
{
    static struct snap s[FIKITD_MAX_DEVICES]; /* the control plane is one thread */
    uint64_t now = fikit_now_ns();
    for (int i = 0; i < n; i++) {
        struct fikitd_device *dev = devs[i];
        s[i].nt = fikitd_status_device(dev, now, &s[i].md, s[i].tasks);
        pthread_mutex_lock(&dev->lock);
        hist_of(&dev->pickup, &s[i].pickup);
        hist_of(&dev->pass, &s[i].pass);
        pthread_mutex_unlock(&dev->lock);
    }
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    if (!f)
        return NULL;
    head(f, "fikit_daemon_info", "gauge", "fikitd's version and configuration (always 1).");
    fprintf(f, "fikit_daemon_info{version=\"%s\",config=\"", FIKIT_VERSION);
    label(f, m.source);
    fprintf(f, "\"} 1\n");
    head(f, "fikit_daemon_start_time_seconds", "gauge", "When fikitd started, in seconds since the epoch.");
    fprintf(f, "fikit_daemon_start_time_seconds %.3f\n", m.start_time);
    head(f, "fikit_devices", "gauge", "Devices fikitd schedules.");
    fprintf(f, "fikit_devices %d\n", n);
    head(f, "fikit_attested_processes", "gauge",
         "Live processes whose task and ceiling root recorded (the Slurm plugin).");
    fprintf(f, "fikit_attested_processes %d\n", fikitd_attest_count());

    head(f, "fikit_device_info", "gauge", "A device's key and model (always 1).");
    for (int i = 0; i < n; i++) {
        fprintf(f, "fikit_device_info{device=\"%u\",key=\"", s[i].md.index);
        label(f, s[i].md.key);
        fprintf(f, "\",model=\"");
        label(f, s[i].md.model);
        fprintf(f, "\"} 1\n");
    }
    PER_DEVICE("fikit_device_tasks", "gauge", "Tasks registered on the device.", "%u", d->ntasks);
    PER_DEVICE("fikit_device_active_level", "gauge",
               "The highest priority level with an active task; -1: none is active.", "%d",
               d->top_level >= FIKIT_LEVELS ? -1 : d->top_level);
    PER_DEVICE("fikit_device_held_launches", "gauge", "Launches held at fikitd now.", "%llu",
               (unsigned long long)d->held_now);
    head(f, "fikit_device_grants_total", "counter",
         "Held launches fikitd granted, by why: free (no higher level active), fit (into a gap), "
         "starved (the median room after starve_after_us), pause (a short kernel while the levels "
         "above paused), overdue (held max_wait_ms), other.");
    for (int i = 0; i < n; i++) {
        const struct fikit_msg_status_device *d = &s[i].md;
        for (int k = 0; k < FIKIT_GRANT_COUNTS; k++)
            fprintf(f, "fikit_device_grants_total{device=\"%u\",kind=\"%s\"} %llu\n", d->index,
                    fikit_grant_count_name((enum fikit_grant_count)k), (unsigned long long)d->grants[k]);
    }
    PER_DEVICE("fikit_device_nudges_total", "counter", "Held threads woken ahead of a decision.", "%llu",
               (unsigned long long)d->nudges);
    PER_DEVICE("fikit_device_substrate_cost_seconds", "gauge",
               "The switch cost between contexts the scheduler uses.", "%.9f", d->substrate_cost_ns / 1e9);
    PER_DEVICE("fikit_device_safety_margin_seconds", "gauge", "The safety margin added to each fit.",
               "%.9f", d->safety_margin_ns / 1e9);
    PER_DEVICE("fikit_device_trace_events_lost_total", "counter",
               "Trace events the tasks' rings lost since tracing started.", "%llu",
               (unsigned long long)d->trace_lost);
    head(f, "fikit_decision_pickup_seconds", "histogram",
         "From a launch being held to fikitd's arbiter queueing it.");
    for (int i = 0; i < n; i++)
        hist_print(f, "fikit_decision_pickup_seconds", (int)s[i].md.index, &s[i].pickup);
    head(f, "fikit_decision_pass_seconds", "histogram",
         "One look of the arbiter at the slots and the scheduler.");
    for (int i = 0; i < n; i++)
        hist_print(f, "fikit_decision_pass_seconds", (int)s[i].md.index, &s[i].pass);

    PER_TASK("fikit_task_priority", "gauge", "The level the task runs at (0 highest, 9 lowest).", "%d",
             t->level);
    PER_TASK("fikit_task_requested_priority", "gauge", "The level the task asked for.", "%d",
             t->requested_level);
    PER_TASK("fikit_task_active", "gauge", "1 while the task counts as active.", "%u", t->active);
    PER_TASK("fikit_task_launches_total", "counter", "Kernel launches fikitd has seen.", "%llu",
             (unsigned long long)t->launches);
    PER_TASK("fikit_task_holds_total", "counter", "Launches held for fikitd.", "%llu",
             (unsigned long long)t->holds);
    PER_TASK("fikit_task_grants_total", "counter", "Held launches fikitd granted.", "%llu",
             (unsigned long long)t->grants);
    PER_TASK("fikit_task_fills_total", "counter", "Gaps the task filled by itself.", "%llu",
             (unsigned long long)t->fills);
    PER_TASK("fikit_task_paces_total", "counter", "Waits for the task's queued work to drain.", "%llu",
             (unsigned long long)t->paces);
    PER_TASK("fikit_task_held_launches", "gauge", "The task's launches held now.", "%llu",
             (unsigned long long)t->held_now);
    PER_TASK("fikit_task_held_longest_seconds", "gauge",
             "How long the task's longest-held launch has waited; 0: none held.", "%.6f",
             t->held_longest_ns / 1e9);
    PER_TASK("fikit_task_idle_after_seconds", "gauge", "After how long without launches the task is idle.",
             "%.6f", t->idle_after_ns / 1e9);
    PER_TASK("fikit_task_slowdown_ratio", "gauge",
             "Its kernels against its profile in the last second; 0: unknown.", "%.6f",
             t->slowdown_ppm / 1e6);
    PER_TASK("fikit_task_latency_budget_ratio", "gauge",
             "Its latency_budget: how much slower than alone its requests (latency_budget_of = requests) or "
             "its bursts may be at the p99; 0: none.", "%.6f",
             t->budget_ppm / 1e6);
    PER_TASK("fikit_task_budget_step", "gauge",
             "The budget controller's step for the tasks below it (0: they wait, 12: beside with 8 ms "
             "queued); -1: not steered (no budget, or nothing measured alone).",
             "%d", t->budget_step);
    PER_TASK("fikit_task_budget_unmeetable", "gauge", "1 while its budget broke even with the tasks below waiting.",
             "%u", t->budget_unmeetable);
    PER_TASK("fikit_task_budget_pace_ratio", "gauge",
             "Its pace now against its budget's reference, from bursts with nothing below it in flight "
             "(each burst is judged against reference x pace); 0: not steered.",
             "%.6f", t->budget_pace_ppm / 1e6);
    PER_TASK("fikit_task_budget_load_ratio", "gauge",
             "Its busy fraction over its last 128-256 bursts, as its budget's controller measured it; 0: not "
             "steered.",
             "%.6f", t->budget_load_ppm / 1e6);
    PER_TASK("fikit_task_budget_bursts_ratio", "gauge",
             "What each of its queued bursts may take against alone now: its latency_budget, less what its "
             "load queues up when the budget is on its requests; 0: not steered.",
             "%.6f", t->budget_bursts_ppm / 1e6);
    PER_TASK("fikit_task_budget_body_ratio", "gauge",
             "The mean of its bursts judged since the budget's last step against what their sizes took alone "
             "on average (x its pace); 0: not judged yet.",
             "%.6f", t->budget_body_ppm / 1e6);
    PER_TASK("fikit_task_budget_cuts_total", "counter", "Steps the budget controller went down.", "%u",
             t->budget_cuts);
    PER_TASK("fikit_task_budget_climbs_total", "counter", "Steps the budget controller went up.", "%u",
             t->budget_climbs);
    PER_TASK("fikit_task_bursts_total", "counter", "Bursts the task reported that fikitd read.", "%llu",
             (unsigned long long)t->bursts);
    PER_TASK("fikit_task_bursts_lost_total", "counter", "Bursts lost before fikitd read them, or refused.",
             "%llu", (unsigned long long)t->bursts_lost);
    PER_TASK("fikit_task_burst_slowdown_ratio", "gauge",
             "Its last burst judged, against the p99 of its size alone; 0: none yet.", "%.6f",
             t->burst_slowdown_ppm / 1e6);
    PER_TASK("fikit_task_steered_mode", "gauge",
             "What a budget above lets the task do while it is active: 0 as configured, 1 wait, 2 gaps, "
             "3 beside.", "%u", t->knob_mode);
    PER_TASK("fikit_task_steered_queue_seconds", "gauge",
             "Its work a budget above lets it queue ahead; 0 with mode 2: only where a gap is near certain.",
             "%.6f", t->knob_inflight_ns / 1e9);
    if (fclose(f) != 0) {
        free(buf);
        return NULL;
    }
    return buf;
}

static int write_file(const char *buf, size_t len)
{
    int fd = open(m.tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -errno;
    size_t off = 0;
    while (off < len) {
        ssize_t w = write(fd, buf + off, len - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            int e = w < 0 ? errno : EIO;
            close(fd);
            unlink(m.tmp);
            return -e;
        }
        off += (size_t)w;
    }
    if (close(fd) != 0 || rename(m.tmp, m.path) != 0) {
        int e = errno;
        unlink(m.tmp);
        return -e;
    }
    return 0;
}

static void *writer(void *arg)
{
    (void)arg;
    int last_err = 0;
    pthread_mutex_lock(&m.lock);
    for (;;) {
        while (!m.pending && !m.quit)
            pthread_cond_wait(&m.cond, &m.lock);
        if (m.quit)
            break;
        char *buf = m.pending;
        size_t len = m.pending_len;
        m.pending = NULL;
        pthread_mutex_unlock(&m.lock);
        int rc = write_file(buf, len);
        free(buf);
        if (rc && rc != last_err)
            fikit_warn("cannot write the metrics file %s ([daemon] metrics_file): %s", m.path, strerror(-rc));
        else if (!rc && last_err)
            fikit_info("the metrics file %s is written again", m.path);
        last_err = rc;
        pthread_mutex_lock(&m.lock);
    }
    pthread_mutex_unlock(&m.lock);
    return NULL;
}

void fikitd_metrics_tick(struct fikitd_device *const *devs, int ndevs)
{
    uint64_t expirations;
    if (m.timer_fd >= 0) {
        ssize_t r = read(m.timer_fd, &expirations, sizeof expirations);
        (void)r;
    }
    if (!m.on)
        return;
    size_t len = 0;
    char *buf = format(devs, ndevs, &len);
    if (!buf)
        return;
    pthread_mutex_lock(&m.lock);
    free(m.pending); /* the writer is behind: only the newest snapshot matters */
    m.pending = buf;
    m.pending_len = len;
    pthread_cond_signal(&m.cond);
    pthread_mutex_unlock(&m.lock);
}

int fikitd_metrics_start(const struct fikit_config *cfg, struct fikitd_device *const *devs, int ndevs)
{
    if (!cfg->metrics_file[0])
        return -1;
    snprintf(m.path, sizeof m.path, "%s", cfg->metrics_file);
    snprintf(m.source, sizeof m.source, "%s", cfg->source[0] ? cfg->source : "(built-in defaults)");
    /* Beside the target, so the rename is atomic; a name node-exporter
     * skips (it reads only *.prom). */
    snprintf(m.tmp, sizeof m.tmp, "%s.%d.tmp", m.path, (int)getpid());
    struct timespec rt;
    clock_gettime(CLOCK_REALTIME, &rt);
    m.start_time = (double)rt.tv_sec + rt.tv_nsec / 1e9;
    m.timer_fd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (m.timer_fd < 0)
        return -errno;
    uint64_t ns = cfg->metrics_interval_ns;
    struct itimerspec its = {.it_interval = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)},
                             .it_value = {(time_t)(ns / 1000000000u), (long)(ns % 1000000000u)}};
    timerfd_settime(m.timer_fd, 0, &its, NULL);
    int rc = pthread_create(&m.thread, NULL, writer, NULL);
    if (rc) {
        close(m.timer_fd);
        m.timer_fd = -1;
        return -rc;
    }
    m.on = true;
    fikit_info("metrics: writing %s every %llu ms", m.path, (unsigned long long)(ns / 1000000));
    fikitd_metrics_tick(devs, ndevs);
    return m.timer_fd;
}

void fikitd_metrics_stop(void)
{
    if (!m.on)
        return;
    pthread_mutex_lock(&m.lock);
    m.quit = true;
    pthread_cond_signal(&m.cond);
    pthread_mutex_unlock(&m.lock);
    pthread_join(m.thread, NULL);
    free(m.pending);
    m.pending = NULL;
    unlink(m.path);
    close(m.timer_fd);
    m.timer_fd = -1;
    m.on = false;
}
