#include "core/replay.h"

#include "core/admit.h"
#include "core/kernel_id.h"
#include "core/measure.h"
#include "core/arbiter.h"
#include "core/shm.h"

#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- parse */

int fikit_replay_parse(FILE *in, const char *path, struct fikit_replay_launch **out, size_t *n,
                       struct fikit_err *err)
{
    char *line = NULL;
    size_t cap = 0, count = 0, alloc = 0;
    struct fikit_replay_launch *arr = NULL;
    int lineno = 0, rc = 0;
    while (getline(&line, &cap, in) != -1) {
        lineno++;
        char *hash = strchr(line, '#');
        if (hash)
            *hash = '\0';
        char task[64], kernel[128], extra[8];
        double t_us, d_us;
        int prio;
        unsigned long long stream = 0;
        int f = sscanf(line, "%lf %63s %d %127s %lf %llu %7s", &t_us, task, &prio, kernel, &d_us,
                       &stream, extra);
        if (f <= 0 && strspn(line, " \t\r\n") == strlen(line))
            continue; /* blank */
        if (f < 5 || f > 6) {
            rc = fikit_err_set(err, -EINVAL,
                               "%s:%d: expected 'TIME_US TASK PRIORITY KERNEL DURATION_US [STREAM]'",
                               path, lineno);
            break;
        }
        if (t_us < 0 || d_us < 0 || t_us > 1e12 || d_us > 1e12) {
            rc = fikit_err_set(err, -EINVAL, "%s:%d: times must be between 0 and 1e12 us", path,
                               lineno);
            break;
        }
        if (prio < 0 || prio >= FIKIT_LEVELS) {
            rc = fikit_err_set(err, -EINVAL, "%s:%d: priority %d out of range (accepted: 0 to 9)",
                               path, lineno, prio);
            break;
        }
        if (count == alloc) {
            alloc = alloc ? alloc * 2 : 64;
            struct fikit_replay_launch *na = realloc(arr, alloc * sizeof *arr);
            if (!na) {
                rc = fikit_err_set(err, -ENOMEM, "%s: out of memory", path);
                break;
            }
            arr = na;
        }
        struct fikit_replay_launch *L = &arr[count++];
        memset(L, 0, sizeof *L);
        L->t_ns = (uint64_t)(t_us * 1000.0 + 0.5);
        L->dur_ns = (uint64_t)(d_us * 1000.0 + 0.5);
        snprintf(L->task, sizeof L->task, "%s", task);
        snprintf(L->kernel, sizeof L->kernel, "%s", kernel);
        L->priority = prio;
        L->stream = stream;
        L->line = lineno;
    }
    free(line);
    if (rc) {
        free(arr);
        return rc;
    }
    *out = arr;
    *n = count;
    return 0;
}

/* ----------------------------------------------------------------- tasks */

struct rtask {
    char name[64];
    int priority;
    size_t *idx;      /* indices of its launches, in issue order */
    size_t n, next;   /* next launch to issue */
    uint64_t shift;   /* accumulated hold delay */
    bool blocked;     /* waiting for a grant */
    uint64_t prev_key;
    uint64_t busy_until; /* as the client predicts it */
    uint64_t seen;        /* the seqlock number of its record fikitd last took */
    uint64_t paced_since; /* paced or looking again since then; 0: not */
    uint64_t held_at;     /* when its held launch was posted */
    struct fikit_measure_store store;
    uint64_t *alone_end;  /* per launch, end time when alone */
};

static uint64_t launch_key(const struct fikit_replay_launch *l)
{
    struct fikit_kernel_desc d = {.backend = FIKIT_BACKEND_NONE, .name = l->kernel};
    return fikit_kernel_key(&d);
}

static int build_tasks(struct fikit_replay_launch *l, size_t n, struct rtask *tasks,
                       size_t *ntasks, struct fikit_err *err)
{
    *ntasks = 0;
    for (size_t i = 0; i < n; i++) {
        size_t t;
        for (t = 0; t < *ntasks; t++)
            if (strcmp(tasks[t].name, l[i].task) == 0)
                break;
        if (t == *ntasks) {
            if (t == FIKIT_MAX_TASKS)
                return fikit_err_set(err, -ENOSPC, "line %d: more than %d tasks", l[i].line,
                                     FIKIT_MAX_TASKS);
            memset(&tasks[t], 0, sizeof tasks[t]);
            snprintf(tasks[t].name, sizeof tasks[t].name, "%s", l[i].task);
            tasks[t].priority = l[i].priority;
            if (fikit_measure_init(&tasks[t].store))
                return fikit_err_set(err, -ENOMEM, "out of memory");
            (*ntasks)++;
        }
        if (tasks[t].priority != l[i].priority)
            return fikit_err_set(err, -EINVAL, "line %d: task %s has priority %d here, %d before",
                                 l[i].line, l[i].task, l[i].priority, tasks[t].priority);
        size_t *ni = realloc(tasks[t].idx, (tasks[t].n + 1) * sizeof *ni);
        if (!ni)
            return fikit_err_set(err, -ENOMEM, "out of memory");
        tasks[t].idx = ni;
        tasks[t].idx[tasks[t].n++] = i;
    }
    /* Launches of one task must be listed in time order. */
    for (size_t t = 0; t < *ntasks; t++)
        for (size_t k = 1; k < tasks[t].n; k++)
            if (l[tasks[t].idx[k]].t_ns < l[tasks[t].idx[k - 1]].t_ns)
                return fikit_err_set(err, -EINVAL, "line %d: task %s goes back in time",
                                     l[tasks[t].idx[k]].line, tasks[t].name);
    return 0;
}

/* Measures one task alone: durations, and the idle gap after each kernel
 * until its next kernel starts, keyed by (previous, current) kernel. */
static void measure_alone(struct rtask *t, const struct fikit_replay_launch *l)
{
    uint64_t free_at = 0, prev = FIKIT_KEY_NONE, prev_prev = FIKIT_KEY_NONE, prev_end = 0;
    t->alone_end = calloc(t->n ? t->n : 1, sizeof *t->alone_end);
    for (size_t k = 0; k < t->n; k++) {
        const struct fikit_replay_launch *L = &l[t->idx[k]];
        uint64_t key = launch_key(L);
        struct fikit_kernel_desc d = {.backend = FIKIT_BACKEND_NONE, .name = L->kernel};
        fikit_measure_add_kernel(&t->store, key, &d);
        fikit_measure_add_duration(&t->store, key, L->dur_ns);
        uint64_t start = L->t_ns > free_at ? L->t_ns : free_at;
        if (k > 0)
            fikit_measure_add_gap(&t->store, prev_prev, prev, start - prev_end);
        free_at = start + L->dur_ns;
        if (t->alone_end)
            t->alone_end[k] = free_at;
        prev_prev = prev;
        prev = key;
        prev_end = free_at;
    }
}

/* ------------------------------------------------------------ simulation */

struct device {
    uint64_t free_at;
    int last_task; /* -1 none */
    uint64_t switch_cost;
};

static void submit(struct device *dev, struct fikit_replay_launch *L, int task, uint64_t now)
{
    uint64_t start = now > dev->free_at ? now : dev->free_at;
    if (dev->last_task >= 0 && dev->last_task != task)
        start += dev->switch_cost;
    L->submit_ns = now;
    L->start_ns = start;
    L->end_ns = start + L->dur_ns;
    dev->free_at = L->end_ns;
    dev->last_task = task;
}

static uint64_t predicted_dur(const struct rtask *t, uint64_t key)
{
    const struct fikit_kernel_stats *ks = fikit_measure_kernel(&t->store, key);
    return ks ? fikit_stat_quantile(&ks->duration, 0.9) : 0;
}

/* The launch is on the device: the client publishes its record into its
 * slot, and fikitd takes it into the scheduler (fikit_shm_take_record), as
 * in a program and in fikit sim. */
static void note(struct fikit_shm *seg, struct fikit_sched *s, struct rtask *t, int ti, uint64_t key,
                 uint64_t now)
{
    struct fikit_gap_pred gap;
    fikit_gap_pred_from_stat(&gap, NULL);
    const struct fikit_gap_stats *gs = fikit_measure_gap(&t->store, t->prev_key, key);
    if (gs)
        fikit_gap_pred_from_stat(&gap, &gs->gap);
    t->busy_until = fikit_shm_publish_launch(seg->slots[ti], now, predicted_dur(t, key), key, &gap,
                                             fikit_measure_max_gap(&t->store));
    (void)fikit_shm_take_record(seg->slots[ti], s, (uint32_t)ti, now, &t->seen);
    t->prev_key = key;
}

static double us(uint64_t ns);

/* fikitd's grants, as its arbiter applies them: each held launch goes on
 * the device and its task issues on. */
struct replay_run {
    struct fikit_shm *seg;
    struct fikit_sched *s;
    struct rtask *tasks;
    struct fikit_replay_launch *l;
    struct device *dev;
    FILE *log;
    uint64_t now;
};

static void apply_grants(void *user, const struct fikit_grant *grants, size_t ng)
{
    struct replay_run *x = user;
    uint64_t now = x->now;
    for (size_t g = 0; g < ng; g++) {
        struct rtask *T = &x->tasks[grants[g].task_id];
        struct fikit_replay_launch *L = &x->l[T->idx[grants[g].ticket]];
        submit(x->dev, L, (int)grants[g].task_id, now);
        L->how = FIKIT_REPLAY_GRANTED;
        L->reason = grants[g].reason;
        note(x->seg, x->s, T, (int)grants[g].task_id, grants[g].key, now);
        T->shift += now - T->held_at;
        T->blocked = false;
        T->next++;
        if (x->log)
            fprintf(x->log, "%12.1f %-10s %-16s grant %s (predicted %.1f us, room %.1f us, "
                            "held %.1f us)\n",
                    us(now), T->name, L->kernel, fikit_grant_reason_name(grants[g].reason),
                    us(grants[g].dur_ns), us(grants[g].room_ns), us(now - L->issue_ns));
    }
}

static double us(uint64_t ns) { return (double)ns / 1000.0; }

int fikit_replay_run(struct fikit_replay_launch *l, size_t n, const struct fikit_sched_params *p,
                     FILE *log, struct fikit_replay_result *res, struct fikit_err *err)
{
    struct rtask *tasks = calloc(FIKIT_MAX_TASKS, sizeof *tasks);
    struct fikit_sched *s = malloc(sizeof *s);
    struct fikit_shm *seg = NULL;
    size_t nt = 0;
    int rc = 0;
    if (!tasks || !s || fikit_shm_local(&seg) != 0) {
        rc = fikit_err_set(err, -ENOMEM, "out of memory");
        goto out;
    }
    if ((rc = build_tasks(l, n, tasks, &nt, err)))
        goto out;
    if (nt > FIKIT_SHM_SLOTS) {
        rc = fikit_err_set(err, -EINVAL, "%zu tasks: a device has %d slots", nt, FIKIT_SHM_SLOTS);
        goto out;
    }
    /* The segment as fikitd publishes it, task t in slot t: the clients'
     * view comes from it, as in a program and in fikit sim. */
    fikit_sched_init(s, p);
    fikit_shm_publish_params(&seg->hdr->params, p, 0);
    for (size_t t = 0; t < nt; t++) {
        measure_alone(&tasks[t], l);
        fikit_sched_add_task(s, (uint32_t)t, (int32_t)t + 1, tasks[t].name, tasks[t].priority);
        fikit_shm_local_register(seg, (int)t, tasks[t].priority);
    }
    if (log)
        fprintf(log, "# policy %s, substrate cost %.1f us, safety margin %.1f us, gap confidence %.2f\n"
                     "# decisions: TIME_US TASK KERNEL run|hold|grant [reason, predicted duration, room]\n",
                fikit_policy_name(p->policy), us(p->substrate_cost_ns), us(p->safety_margin_ns),
                p->gap_confidence);

    struct device dev = {.free_at = 0, .last_task = -1, .switch_cost = p->substrate_cost_ns};
    uint64_t now = 0, wake = UINT64_MAX;
    struct replay_run x = {.seg = seg, .s = s, .tasks = tasks, .l = l, .dev = &dev, .log = log};
    for (;;) {
        /* The next event: a task issuing its next launch, or a scheduler wake. */
        uint64_t next = wake;
        int who = -1;
        for (size_t t = 0; t < nt; t++) {
            struct rtask *T = &tasks[t];
            if (T->blocked || T->next == T->n)
                continue;
            uint64_t when = l[T->idx[T->next]].t_ns + T->shift;
            if (when < next || (when == next && who < 0)) {
                next = when;
                who = (int)t;
            }
        }
        if (next == UINT64_MAX)
            break;
        now = next > now ? next : now;
        if (who >= 0) {
            struct rtask *T = &tasks[who];
            struct fikit_replay_launch *L = &l[T->idx[T->next]];
            uint64_t key = launch_key(L);
            if (!T->paced_since)
                L->issue_ns = now;
            uint64_t dur = predicted_dur(T, key);
            struct fikit_admit_task vt[FIKIT_SHM_SLOTS];
            struct fikit_view v;
            struct fikit_admit a;
            fikit_shm_view(seg, who, T->priority, false, &v, vt, NULL);
            v.own_busy_until_ns = T->busy_until; /* its own queue as it knows it (interpose/gate.c) */
            fikit_admit(&v, now, dur, &a);
            if (a.kind == FIKIT_ADMIT_PACE || a.kind == FIKIT_ADMIT_RECHECK) {
                /* The client sleeps and looks again: the launch is issued later. */
                if (!T->paced_since)
                    T->paced_since = now;
                uint64_t until = a.until_ns > now ? a.until_ns : now + 1;
                T->shift += until - now;
                if (log)
                    fprintf(log, "%12.1f %-10s %-16s %s until %.1f\n", us(now), T->name, L->kernel,
                            fikit_admit_kind_name(a.kind), us(until));
            } else if (a.kind == FIKIT_ADMIT_HOLD) {
                T->paced_since = 0;
                struct fikit_request r = {.task_id = (uint32_t)who,
                                          .ticket = (uint32_t)T->next,
                                          .stream = L->stream,
                                          .key = key,
                                          .dur_ns = dur,
                                          .posted_ns = L->issue_ns};
                if ((rc = fikit_sched_post(s, &r))) {
                    fikit_err_set(err, rc, "line %d: scheduler queue full", L->line);
                    goto out;
                }
                T->blocked = true;
                T->held_at = now;
                if (log)
                    fprintf(log, "%12.1f %-10s %-16s hold (predicted %.1f us)\n", us(now), T->name,
                            L->kernel, us(r.dur_ns));
            } else {
                T->paced_since = 0;
                /* As gate.c takes a gap; one task at a time here, so it succeeds. */
                if (a.kind == FIKIT_ADMIT_FILL && !fikit_shm_fill_commit(seg, v.fill_until_ns, a.fill_until_ns))
                    abort();
                submit(&dev, L, who, now);
                L->how = a.kind == FIKIT_ADMIT_FILL ? FIKIT_REPLAY_FILLED : FIKIT_REPLAY_RAN;
                note(seg, s, T, who, key, now);
                T->next++;
                if (log) {
                    if (a.kind == FIKIT_ADMIT_FILL)
                        fprintf(log, "%12.1f %-10s %-16s fill (predicted %.1f us, room %.1f us)\n", us(now),
                                T->name, L->kernel, us(dur), us(a.room_ns));
                    else
                        fprintf(log, "%12.1f %-10s %-16s run\n", us(now), T->name, L->kernel);
                }
            }
        }
        /* fikitd decides with the clients' fills counted as taken; its next
         * pass comes no sooner than a pass takes (FIKIT_MODEL_PASS_NS). */
        x.now = now;
        fikit_shm_decide(seg, s, now, apply_grants, &x, &wake);
        if (wake != UINT64_MAX && wake < now + FIKIT_MODEL_PASS_NS)
            wake = now + FIKIT_MODEL_PASS_NS;
    }

    /* Results. */
    memset(res, 0, sizeof *res);
    res->ntasks = nt;
    for (size_t t = 0; t < nt; t++) {
        struct rtask *T = &tasks[t];
        struct fikit_replay_task_result *R = &res->tasks[t];
        snprintf(R->task, sizeof R->task, "%s", T->name);
        R->priority = T->priority;
        R->launches = T->n;
        if (T->n == 0)
            continue;
        uint64_t first = l[T->idx[0]].t_ns;
        R->alone_makespan_ns = T->alone_end[T->n - 1] - first;
        R->shared_makespan_ns = l[T->idx[T->n - 1]].end_ns - first;
        for (size_t k = 0; k < T->n; k++) {
            const struct fikit_replay_launch *L = &l[T->idx[k]];
            if (L->issue_ns != L->submit_ns)
                R->held++;
            if (L->how == FIKIT_REPLAY_GRANTED && L->reason == FIKIT_GRANT_FIT)
                R->granted_fit++;
            if (L->how == FIKIT_REPLAY_GRANTED && L->reason == FIKIT_GRANT_FREE)
                R->granted_free++;
            if (L->how == FIKIT_REPLAY_FILLED)
                R->filled++;
            if (L->end_ns > T->alone_end[k])
                R->delay_ns += L->end_ns - T->alone_end[k];
        }
    }
    if (log) {
        fprintf(log, "\n# device timeline: START_US END_US TASK KERNEL (delay against alone)\n");
        /* Print in start order. */
        size_t *order = malloc((n ? n : 1) * sizeof *order);
        if (order) {
            for (size_t i = 0; i < n; i++)
                order[i] = i;
            for (size_t i = 1; i < n; i++) {
                size_t v = order[i], j = i;
                while (j > 0 && l[order[j - 1]].start_ns > l[v].start_ns) {
                    order[j] = order[j - 1];
                    j--;
                }
                order[j] = v;
            }
            for (size_t i = 0; i < n; i++) {
                const struct fikit_replay_launch *L = &l[order[i]];
                size_t t;
                for (t = 0; t < nt; t++)
                    if (strcmp(tasks[t].name, L->task) == 0)
                        break;
                size_t k = 0;
                while (k < tasks[t].n && tasks[t].idx[k] != order[i])
                    k++;
                int64_t delay = (int64_t)L->end_ns - (int64_t)tasks[t].alone_end[k];
                fprintf(log, "%12.1f %12.1f %-10s %-16s %+.1f us\n", us(L->start_ns),
                        us(L->end_ns), L->task, L->kernel, (double)delay / 1000.0);
            }
            free(order);
        }
        fprintf(log, "\n# per task: TASK PRIORITY LAUNCHES HELD FIT FREE MAKESPAN_ALONE_US "
                     "MAKESPAN_SHARED_US RATIO\n");
        for (size_t t = 0; t < nt; t++) {
            const struct fikit_replay_task_result *R = &res->tasks[t];
            fprintf(log, "%-10s %d %zu %zu %zu %zu %.1f %.1f %.3f\n", R->task, R->priority,
                    R->launches, R->held, R->granted_fit, R->granted_free,
                    us(R->alone_makespan_ns), us(R->shared_makespan_ns),
                    R->alone_makespan_ns ? (double)R->shared_makespan_ns / (double)R->alone_makespan_ns
                                         : 1.0);
        }
    }
out:
    if (tasks) {
        for (size_t t = 0; t < nt; t++) {
            free(tasks[t].idx);
            free(tasks[t].alone_end);
            fikit_measure_destroy(&tasks[t].store);
        }
    }
    free(tasks);
    free(s);
    fikit_shm_unmap(seg);
    return rc;
}
