#include "sim/gpu.h"

#include "sim/fifo.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ device file */

enum value_kind { WHOLE, MICROSECONDS, RATIO };

struct key_row {
    const char *key;
    enum value_kind kind; /* MICROSECONDS kept in ns, RATIO in parts per million */
    double lo, hi;
    size_t off;
    int width;         /* 4: uint32_t, 8: uint64_t */
    bool optional;     /* 0 when absent (keys added after the first device files) */
};

#define ROW(k, kind, lo, hi, field, opt)                                                                   \
    {k, kind, lo, hi, offsetof(struct fikit_sim_device, field), sizeof(((struct fikit_sim_device *)0)->field), \
     opt}

static const struct key_row rows[] = {
    ROW("sms", WHOLE, 1, 10000, sms, false),
    ROW("threads_per_sm", WHOLE, 32, 65536, threads_per_sm, false),
    ROW("blocks_per_sm", WHOLE, 1, 1024, blocks_per_sm, false),
    ROW("launch_us", MICROSECONDS, 0, 1e6, launch_ns, false),
    ROW("switch_us", MICROSECONDS, 0, 1e6, switch_ns, false),
    ROW("slice_us", MICROSECONDS, 1, 1e7, slice_ns, false),
    ROW("fikit_launch_us", MICROSECONDS, 0, 1e4, fikit_launch_ns, false),
    ROW("mps_launch_us", MICROSECONDS, 0, 1e4, mps_launch_ns, true),
    ROW("corun_slowdown", RATIO, 0, 100, corun_ppm, true),
};
#define NROWS (sizeof rows / sizeof rows[0])

int fikit_sim_device_parse(const char *text, const char *path, struct fikit_sim_device *d,
                           struct fikit_err *err)
{
    memset(d, 0, sizeof *d);
    bool seen[NROWS] = {0};
    bool in_device = false;
    int line = 0;
    for (const char *p = text; *p;) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        char buf[512];
        line++;
        if (len >= sizeof buf) {
            memset(d, 0, sizeof *d);
            return fikit_err_set(err, -EINVAL, "%s:%d: line longer than %zu bytes", path, line,
                                 sizeof buf - 1);
        }
        memcpy(buf, p, len);
        buf[len] = 0;
        p = nl ? nl + 1 : p + len;
        char *s = buf;
        while (isspace((unsigned char)*s))
            s++;
        char *e = s + strlen(s);
        while (e > s && isspace((unsigned char)e[-1]))
            *--e = 0;
        if (!*s || *s == '#' || *s == ';')
            continue;
        if (*s == '[') {
            in_device = strcmp(s, "[device]") == 0;
            if (!in_device) {
                memset(d, 0, sizeof *d);
                return fikit_err_set(err, -EINVAL, "%s:%d: section %s: accepted: [device]", path, line, s);
            }
            continue;
        }
        char *eq = strchr(s, '=');
        if (!eq || !in_device) {
            memset(d, 0, sizeof *d);
            return fikit_err_set(err, -EINVAL, "%s:%d: expected KEY = VALUE under [device], got '%s'",
                                 path, line, s);
        }
        char *k = s, *v = eq + 1;
        for (char *t = eq; t > k && isspace((unsigned char)t[-1]); t--)
            t[-1] = 0;
        *eq = 0;
        while (isspace((unsigned char)*v))
            v++;
        if (strcmp(k, "name") == 0 || strcmp(k, "about") == 0) {
            char *dst = strcmp(k, "name") == 0 ? d->name : d->about;
            size_t cap = strcmp(k, "name") == 0 ? sizeof d->name : sizeof d->about;
            if (!*v || strlen(v) >= cap) {
                memset(d, 0, sizeof *d);
                return fikit_err_set(err, -EINVAL, "%s:%d: %s = '%s': accepted: 1 to %zu bytes", path,
                                     line, k, v, cap - 1);
            }
            memcpy(dst, v, strlen(v) + 1);
            continue;
        }
        size_t i = 0;
        while (i < NROWS && strcmp(rows[i].key, k) != 0)
            i++;
        if (i == NROWS) {
            memset(d, 0, sizeof *d);
            return fikit_err_set(err, -EINVAL,
                                 "%s:%d: unknown key '%s': accepted: name, about, sms, threads_per_sm, "
                                 "blocks_per_sm, launch_us, switch_us, slice_us, fikit_launch_us, "
                                 "mps_launch_us, corun_slowdown",
                                 path, line, k);
        }
        char *end;
        double x = strtod(v, &end);
        if (!*v || *end || !(x >= rows[i].lo && x <= rows[i].hi) ||
            (rows[i].kind == WHOLE && x != (double)(uint64_t)x)) {
            static const char *const what[] = {"a whole number", "microseconds", "a ratio"};
            memset(d, 0, sizeof *d);
            return fikit_err_set(err, -EINVAL, "%s:%d: %s = '%s': accepted: %s from %g to %g", path, line,
                                 k, v, what[rows[i].kind], rows[i].lo, rows[i].hi);
        }
        static const double scale[] = {1.0, 1000.0, 1e6};
        uint64_t val = rows[i].kind == WHOLE ? (uint64_t)x : (uint64_t)(x * scale[rows[i].kind] + 0.5);
        char *field = (char *)d + rows[i].off;
        if (rows[i].width == 4) {
            uint32_t v32 = (uint32_t)val;
            memcpy(field, &v32, 4);
        } else {
            memcpy(field, &val, 8);
        }
        seen[i] = true;
    }
    if (!d->name[0]) {
        memset(d, 0, sizeof *d);
        return fikit_err_set(err, -EINVAL, "%s: no 'name' under [device]", path);
    }
    for (size_t i = 0; i < NROWS; i++) {
        if (!seen[i] && !rows[i].optional) {
            memset(d, 0, sizeof *d);
            return fikit_err_set(err, -EINVAL,
                                 "%s: no '%s' under [device] (every key but mps_launch_us and "
                                 "corun_slowdown is required)",
                                 path, rows[i].key);
        }
    }
    return 0;
}

int fikit_sim_device_load(const char *path, struct fikit_sim_device *d, struct fikit_err *err)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return fikit_err_set(err, -errno, "%s: %s", path, strerror(errno));
    char *text = malloc(65537);
    if (!text) {
        fclose(f);
        return fikit_err_set(err, -ENOMEM, "%s: out of memory", path);
    }
    size_t n = fread(text, 1, 65536, f);
    int bad = ferror(f) || !feof(f);
    fclose(f);
    if (bad) {
        free(text);
        return fikit_err_set(err, -EINVAL, "%s: unreadable or larger than 64 KiB", path);
    }
    text[n] = 0;
    int rc = fikit_sim_device_parse(text, path, d, err);
    free(text);
    return rc;
}

/* ----------------------------------------------------------------- model */

enum { EV_ARRIVE = FIKIT_SIM_GPU_EVENTS, EV_DONE, EV_SLICE, EV_SWITCHED, EV_BLOCKS };

struct kern {
    uint64_t cookie, dur, remaining, ready_ns, start_ns;
    bool started;
    uint32_t unit;          /* MPS: threads one block holds */
    uint64_t left_blocks;   /* MPS: not yet placed */
    uint64_t running_blocks;
    uint64_t block_ns;
    uint64_t cap_threads;   /* MPS: confined to this many threads; 0: the context's cap */
};

struct ctx {
    struct fikit_sim_fifo q; /* struct kern, in launch order */
    int prio;
    uint64_t cap_threads, used_threads;
};

struct fikit_sim_gpu {
    struct fikit_sim_device d;
    enum fikit_sim_substrate s;
    bool mps_priority;
    struct fikit_sim_evq *q;
    fikit_sim_done_fn done;
    void *user;
    uint32_t nctx;
    struct ctx *ctx;
    /* time-slicing */
    int resident, switch_to;
    bool running, switching, slice_armed;
    uint64_t gen, run_started, turn_start;
    /* MPS */
    uint64_t total_threads, used_threads;
    uint64_t switches, preemptions;
};

struct fikit_sim_gpu *fikit_sim_gpu_new(const struct fikit_sim_device *d, enum fikit_sim_substrate s,
                                        bool mps_priority, uint32_t contexts, struct fikit_sim_evq *q,
                                        fikit_sim_done_fn done, void *user)
{
    struct fikit_sim_gpu *g = calloc(1, sizeof *g);
    if (!g)
        return NULL;
    g->ctx = calloc(contexts ? contexts : 1, sizeof *g->ctx);
    if (!g->ctx) {
        free(g);
        return NULL;
    }
    g->d = *d;
    g->s = s;
    g->mps_priority = mps_priority;
    g->q = q;
    g->done = done;
    g->user = user;
    g->nctx = contexts;
    g->resident = -1;
    g->total_threads = (uint64_t)d->sms * d->threads_per_sm;
    for (uint32_t i = 0; i < contexts; i++) {
        g->ctx[i].cap_threads = g->total_threads;
        g->ctx[i].q.size = sizeof(struct kern);
    }
    return g;
}

void fikit_sim_gpu_free(struct fikit_sim_gpu *g)
{
    if (!g)
        return;
    for (uint32_t i = 0; i < g->nctx; i++)
        fikit_sim_fifo_free(&g->ctx[i].q);
    free(g->ctx);
    free(g);
}

void fikit_sim_gpu_context(struct fikit_sim_gpu *g, uint32_t ctx, int prio, uint32_t thread_pct)
{
    if (ctx >= g->nctx)
        return;
    g->ctx[ctx].prio = prio;
    if (thread_pct < 1 || thread_pct > 100)
        thread_pct = 100;
    g->ctx[ctx].cap_threads = g->total_threads * thread_pct / 100;
}

uint64_t fikit_sim_gpu_switches(const struct fikit_sim_gpu *g) { return g->switches; }
uint64_t fikit_sim_gpu_preemptions(const struct fikit_sim_gpu *g) { return g->preemptions; }

static struct kern *head(struct fikit_sim_gpu *g, uint32_t c)
{
    return fikit_sim_fifo_front(&g->ctx[c].q);
}

static bool has_work(struct fikit_sim_gpu *g, int c, uint64_t now)
{
    if (c < 0)
        return false;
    struct kern *k = head(g, (uint32_t)c);
    return k && k->ready_ns <= now;
}

static void pop(struct fikit_sim_gpu *g, uint32_t c, uint64_t now)
{
    struct kern k = *head(g, c);
    fikit_sim_fifo_pop(&g->ctx[c].q);
    g->done(g->user, c, k.cookie, k.start_ns, now);
}

/* The context, other than the resident one, whose visible work waited
 * longest; -1 if none. */
static int next_other(struct fikit_sim_gpu *g, uint64_t now)
{
    int best = -1;
    for (uint32_t c = 0; c < g->nctx; c++) {
        if ((int)c == g->resident || !has_work(g, (int)c, now))
            continue;
        if (best < 0 || head(g, c)->ready_ns < head(g, (uint32_t)best)->ready_ns)
            best = (int)c;
    }
    return best;
}

static void ts_switch(struct fikit_sim_gpu *g, uint64_t now, int to)
{
    g->switching = true;
    g->switch_to = to;
    g->slice_armed = false;
    g->gen++;
    g->switches++;
    fikit_sim_evq_push(g->q, now + g->d.switch_ns, EV_SWITCHED, 0, g->gen);
}

static void ts_arm_slice(struct fikit_sim_gpu *g, uint64_t now)
{
    if (g->slice_armed || next_other(g, now) < 0)
        return;
    g->slice_armed = true;
    uint64_t at = g->turn_start + g->d.slice_ns;
    fikit_sim_evq_push(g->q, at > now ? at : now, EV_SLICE, 0, g->gen);
}

static void ts_start(struct fikit_sim_gpu *g, uint64_t now)
{
    struct kern *k = head(g, (uint32_t)g->resident);
    if (!k->started) {
        k->started = true;
        k->start_ns = now;
    }
    g->running = true;
    g->run_started = now;
    fikit_sim_evq_push(g->q, now + k->remaining, EV_DONE, 0, g->gen);
}

static void ts_schedule(struct fikit_sim_gpu *g, uint64_t now)
{
    if (g->switching)
        return;
    if (!g->running) {
        if (has_work(g, g->resident, now)) {
            g->turn_start = now; /* from idle: a fresh turn */
            ts_start(g, now);
        } else {
            int c = next_other(g, now);
            if (c < 0)
                return;
            if (g->resident < 0) {
                g->resident = c; /* the first context ever pays no switch */
                g->turn_start = now;
                ts_start(g, now);
            } else {
                ts_switch(g, now, c);
                return;
            }
        }
    }
    ts_arm_slice(g, now);
}

static void ts_event(struct fikit_sim_gpu *g, const struct fikit_sim_event *e)
{
    uint64_t now = e->t;
    switch (e->type) {
    case EV_ARRIVE:
        ts_schedule(g, now);
        return;
    case EV_SWITCHED:
        if (e->b != g->gen)
            return;
        g->switching = false;
        g->resident = g->switch_to;
        g->turn_start = now;
        if (has_work(g, g->resident, now))
            ts_start(g, now);
        ts_schedule(g, now);
        return;
    case EV_DONE:
        if (e->b != g->gen || !g->running)
            return;
        g->running = false;
        pop(g, (uint32_t)g->resident, now);
        if (has_work(g, g->resident, now)) {
            int other = next_other(g, now);
            if (other >= 0 && now >= g->turn_start + g->d.slice_ns) {
                ts_switch(g, now, other);
                return;
            }
            ts_start(g, now);
            ts_arm_slice(g, now);
            return;
        }
        ts_schedule(g, now);
        return;
    case EV_SLICE:
        if (e->b != g->gen || !g->slice_armed)
            return;
        g->slice_armed = false;
        if (g->running) {
            int other = next_other(g, now);
            if (other < 0)
                return;
            struct kern *k = head(g, (uint32_t)g->resident);
            uint64_t ran = now - g->run_started;
            k->remaining = k->remaining > ran ? k->remaining - ran : 0;
            g->running = false;
            g->preemptions++;
            ts_switch(g, now, other);
            return;
        }
        ts_schedule(g, now);
        return;
    }
}

static void mps_dispatch(struct fikit_sim_gpu *g, uint64_t now)
{
    for (;;) {
        /* The next visible head with blocks to place, in queue order. */
        uint32_t order[64];
        uint32_t n = 0;
        for (uint32_t c = 0; c < g->nctx && n < 64; c++) {
            struct kern *k = head(g, c);
            if (k && k->ready_ns <= now && k->left_blocks)
                order[n++] = c;
        }
        /* Insertion sort: priority (with client priority), then arrival. */
        for (uint32_t i = 1; i < n; i++) {
            uint32_t c = order[i];
            uint32_t j = i;
            for (; j > 0; j--) {
                uint32_t b = order[j - 1];
                struct kern *kc = head(g, c), *kb = head(g, b);
                bool earlier = g->mps_priority && g->ctx[c].prio != g->ctx[b].prio
                                   ? g->ctx[c].prio < g->ctx[b].prio
                                   : kc->ready_ns < kb->ready_ns;
                if (!earlier)
                    break;
                order[j] = b;
            }
            order[j] = c;
        }
        bool placed = false;
        for (uint32_t i = 0; i < n; i++) {
            uint32_t c = order[i];
            struct ctx *x = &g->ctx[c];
            struct kern *k = head(g, c);
            uint64_t free_dev = g->total_threads - g->used_threads;
            /* A confined kernel: within its share as well as its context's
             * cap (the context's other kernels share that share with it). */
            uint64_t cap = k->cap_threads && k->cap_threads < x->cap_threads ? k->cap_threads : x->cap_threads;
            uint64_t free_ctx = cap > x->used_threads ? cap - x->used_threads : 0;
            uint64_t can = (free_dev < free_ctx ? free_dev : free_ctx) / k->unit;
            uint64_t m = can < k->left_blocks ? can : k->left_blocks;
            if (m) {
                if (!k->started) {
                    k->started = true;
                    k->start_ns = now;
                }
                /* What the other contexts hold now slows these blocks for
                 * their whole run (corun_slowdown; fixed at placement). */
                uint64_t others = g->used_threads - x->used_threads;
                uint64_t block_ns = k->block_ns;
                if (g->d.corun_ppm && others)
                    block_ns += (uint64_t)((double)k->block_ns * (g->d.corun_ppm / 1e6) *
                                           ((double)others / (double)g->total_threads));
                k->left_blocks -= m;
                k->running_blocks += m;
                g->used_threads += m * k->unit;
                x->used_threads += m * k->unit;
                fikit_sim_evq_push(g->q, now + block_ns, EV_BLOCKS, c, m);
                placed = true;
            }
            /* Held back by the device, not by its own cap: the kernels
             * behind it wait (blocks are placed in queue order). */
            if (k->left_blocks && free_dev / k->unit <= free_ctx / k->unit)
                break;
        }
        if (!placed)
            return;
    }
}

static void mps_event(struct fikit_sim_gpu *g, const struct fikit_sim_event *e)
{
    uint64_t now = e->t;
    if (e->type == EV_BLOCKS) {
        uint32_t c = e->a;
        struct kern *k = head(g, c);
        uint64_t m = e->b;
        g->used_threads -= m * k->unit;
        g->ctx[c].used_threads -= m * k->unit;
        k->running_blocks -= m;
        if (!k->left_blocks && !k->running_blocks)
            pop(g, c, now);
    }
    mps_dispatch(g, now);
}

int fikit_sim_gpu_launch(struct fikit_sim_gpu *g, uint64_t now, uint32_t c, uint64_t cookie,
                         uint64_t dur_ns, uint32_t blocks, uint32_t threads, uint32_t sm_pct)
{
    struct kern k = {.cookie = cookie, .dur = dur_ns ? dur_ns : 1, .ready_ns = now + g->d.launch_ns};
    if (sm_pct && sm_pct < 100)
        k.cap_threads = g->total_threads * sm_pct / 100;
    k.remaining = k.dur;
    uint64_t min_unit = g->d.threads_per_sm / g->d.blocks_per_sm;
    uint64_t unit = ((uint64_t)(threads ? threads : 1) + 31) / 32 * 32;
    if (unit < min_unit)
        unit = min_unit;
    if (unit > g->d.threads_per_sm)
        unit = g->d.threads_per_sm;
    k.unit = (uint32_t)unit;
    uint64_t per_wave = g->total_threads / unit;
    uint64_t nb = blocks ? blocks : 1;
    uint64_t waves = (nb + per_wave - 1) / per_wave;
    k.left_blocks = nb;
    k.block_ns = k.dur / waves ? k.dur / waves : 1;
    if (fikit_sim_fifo_push(&g->ctx[c].q, &k) != 0)
        return -ENOMEM;
    return fikit_sim_evq_push(g->q, k.ready_ns, EV_ARRIVE, c, 0);
}

void fikit_sim_gpu_event(struct fikit_sim_gpu *g, const struct fikit_sim_event *e)
{
    if (g->s == FIKIT_SIM_TIMESLICE)
        ts_event(g, e);
    else
        mps_event(g, e);
}
