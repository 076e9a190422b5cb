#include "core/budget.h"

#include "core/bursts.h"
#include "core/clock.h"
#include "core/measure.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>

void fikit_budget_step_knobs(int step, uint64_t max_queued_ns, uint32_t sm_pct, struct fikit_lower_knobs *out)
{
    /* The queue bound of the gap steps, in quarters of max_queued_us; of the
     * beside steps, in microseconds, with the share of the configured SMs
     * in eighths. Beside starts above where gaps end: 4 x max_queued_us
     * (400 us by default) against 250 us, but beside with the SMs halved. */
    static const uint32_t gaps_quarters[FIKIT_BUDGET_GAPS_TOP + 1] = {0, 0, 1, 2, 4, 8, 16};
    static const uint32_t beside_us[FIKIT_BUDGET_STEPS - FIKIT_BUDGET_GAPS_TOP - 1] = {250, 500, 1000,
                                                                                      2000, 4000, 8000, 8000};
    static const uint32_t beside_sm_eighths[FIKIT_BUDGET_STEPS - FIKIT_BUDGET_GAPS_TOP - 1] = {4, 4, 6,
                                                                                              8, 8, 8, 8};
    if (step < 0)
        step = 0;
    if (step > FIKIT_BUDGET_TOP)
        step = FIKIT_BUDGET_TOP;
    uint64_t q = max_queued_ns ? max_queued_ns : 100000ull;
    memset(out, 0, sizeof *out);
    if (step == 0) {
        out->mode = FIKIT_LOWER_WAIT;
        return;
    }
    if (step <= FIKIT_BUDGET_GAPS_TOP) {
        out->mode = FIKIT_LOWER_GAPS;
        out->inflight_ns = q * gaps_quarters[step] / 4;
        return;
    }
    int k = step - FIKIT_BUDGET_GAPS_TOP - 1;
    uint32_t cap = sm_pct && sm_pct < 100 ? sm_pct : 100;
    out->mode = FIKIT_LOWER_BESIDE;
    out->inflight_ns = beside_us[k] * FIKIT_NS_PER_US;
    out->sm_pct = cap * beside_sm_eighths[k] / 8;
    if (!out->sm_pct)
        out->sm_pct = 1;
    if (step == FIKIT_BUDGET_TOP)
        out->flags = FIKIT_KNOB_WHOLE_AT_REST;
}

/* One burst alone, and a size of burst with what it is judged by. */
struct burst {
    uint32_t launches;
    uint64_t len_ns;
};
struct size_ref {
    uint32_t launches;
    size_t count;
    uint64_t p99_ns, mean_ns;
};

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return (x > y) - (x < y);
}

/* The nearest rank of the p99 among n sorted values, as an index. */
static size_t p99_index(size_t n)
{
    size_t rank = (size_t)ceil(0.99 * (double)n - 1e-9);
    return rank ? rank - 1 : 0;
}

static int by_size_then_length(const void *a, const void *b)
{
    const struct burst *x = a, *y = b;
    if (x->launches != y->launches)
        return x->launches < y->launches ? -1 : 1;
    return x->len_ns < y->len_ns ? -1 : x->len_ns > y->len_ns;
}

static int by_count_descending(const void *a, const void *b)
{
    const struct size_ref *x = a, *y = b;
    if (x->count != y->count)
        return x->count > y->count ? -1 : 1;
    return x->launches < y->launches ? -1 : x->launches > y->launches;
}

static int by_launches(const void *a, const void *b)
{
    const struct size_ref *x = a, *y = b;
    return x->launches < y->launches ? -1 : x->launches > y->launches;
}

/* The most frequent sizes that fit into ref, by launch count for the lookup. */
static void keep_sizes(struct fikit_budget_ref *ref, struct size_ref *sizes, size_t nsizes)
{
    qsort(sizes, nsizes, sizeof *sizes, by_count_descending);
    if (nsizes > FIKIT_BUDGET_REF_SIZES)
        nsizes = FIKIT_BUDGET_REF_SIZES;
    qsort(sizes, nsizes, sizeof *sizes, by_launches);
    for (size_t k = 0; k < nsizes; k++) {
        ref->launches[k] = sizes[k].launches;
        ref->p99_ns[k] = sizes[k].p99_ns;
        ref->mean_ns[k] = sizes[k].mean_ns;
    }
    ref->n = (uint32_t)nsizes;
}

void fikit_budget_ref_build(struct fikit_budget_ref *ref, const uint32_t *launches, const uint64_t *len_ns, size_t n)
{
    memset(ref, 0, sizeof *ref);
    struct burst *bursts = malloc((n ? n : 1) * sizeof *bursts);
    struct size_ref *sizes = malloc((n ? n : 1) * sizeof *sizes);
    if (!bursts || !sizes) {
        free(bursts);
        free(sizes);
        return;
    }
    for (size_t i = 0; i < n; i++)
        bursts[i] = (struct burst){launches[i], len_ns[i]};
    /* Each size's bursts in a run, shortest first: its p99 at the nearest rank. */
    qsort(bursts, n, sizeof *bursts, by_size_then_length);
    size_t nsizes = 0;
    for (size_t a = 0, b; a < n; a = b) {
        for (b = a; b < n && bursts[b].launches == bursts[a].launches; b++)
            ;
        size_t m = b - a;
        if (m < FIKIT_BUDGET_REF_MIN)
            continue;
        double sum = 0;
        for (size_t i = a; i < b; i++)
            sum += (double)bursts[i].len_ns;
        sizes[nsizes++] = (struct size_ref){bursts[a].launches, m, bursts[a + p99_index(m)].len_ns,
                                            (uint64_t)(sum / (double)m + 0.5)};
    }
    keep_sizes(ref, sizes, nsizes);
    /* Every size together: the p99 at the nearest rank of all its bursts. */
    uint64_t *all = malloc((n ? n : 1) * sizeof *all);
    if (all && n) {
        for (size_t i = 0; i < n; i++)
            all[i] = bursts[i].len_ns;
        qsort(all, n, sizeof *all, cmp_u64);
        ref->all_p99_ns = all[p99_index(n)];
    }
    free(all);
    free(bursts);
    free(sizes);
}

void fikit_budget_ref_from_store(struct fikit_budget_ref *ref, const struct fikit_measure_store *st)
{
    memset(ref, 0, sizeof *ref);
    size_t n = 0, nsizes = 0;
    const struct fikit_burst_stats **bs = fikit_measure_sorted_bursts(st, &n);
    struct size_ref *sizes = malloc((n ? n : 1) * sizeof *sizes);
    if (!bs || !sizes) {
        free(bs);
        free(sizes);
        return;
    }
    /* Every size together: their statistics merged (a size whose merge runs
     * out of memory leaves the tail unknown). */
    struct fikit_stat all;
    fikit_stat_init(&all);
    bool whole = true;
    for (size_t i = 0; i < n; i++) {
        if (bs[i]->len.count >= FIKIT_BUDGET_REF_MIN)
            sizes[nsizes++] = (struct size_ref){bs[i]->launches, bs[i]->len.count,
                                                fikit_stat_quantile(&bs[i]->len, 0.99),
                                                fikit_stat_mean(&bs[i]->len)};
        if (whole && fikit_stat_merge(&all, &bs[i]->len) != 0)
            whole = false;
    }
    keep_sizes(ref, sizes, nsizes);
    if (whole && all.count)
        ref->all_p99_ns = fikit_stat_quantile(&all, 0.99);
    fikit_stat_destroy(&all);
    free(bs);
    free(sizes);
}

static ssize_t ref_index(const struct fikit_budget_ref *ref, uint32_t launches)
{
    size_t lo = 0, hi = ref->n;
    while (lo < hi) {
        size_t mid = (lo + hi) / 2;
        if (ref->launches[mid] < launches)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo < ref->n && ref->launches[lo] == launches ? (ssize_t)lo : -1;
}

/* Parts of known sizes summed: the means add, and the excesses of their
 * p99s over their means add as independent parts do (in quadrature). */
static uint64_t joined_p99(double mean, double excess_sq, uint64_t *mean_ns)
{
    if (mean_ns)
        *mean_ns = (uint64_t)(mean + 0.5);
    return (uint64_t)(mean + sqrt(excess_sq) + 0.5);
}

uint64_t fikit_budget_ref_find(const struct fikit_budget_ref *ref, uint32_t launches, uint64_t *mean_ns)
{
    if (mean_ns)
        *mean_ns = 0;
    ssize_t i = ref_index(ref, launches);
    if (i >= 0) {
        if (mean_ns)
            *mean_ns = ref->mean_ns[i];
        return ref->p99_ns[i];
    }
    /* Requests that joined: k of one size seen alone, the largest size
     * that divides it first (the fewest parts), else one each of two. */
    for (size_t a = ref->n; a-- > 0;) {
        uint32_t n = ref->launches[a], k = launches / n;
        if (!ref->mean_ns[a] || launches % n || k < 2 || k > FIKIT_BUDGET_JOINED_MAX)
            continue;
        double excess = (double)ref->p99_ns[a] - (double)ref->mean_ns[a];
        return joined_p99((double)k * (double)ref->mean_ns[a], (double)k * excess * excess, mean_ns);
    }
    for (size_t a = 0; a < ref->n; a++) {
        if (!ref->mean_ns[a] || ref->launches[a] >= launches)
            continue;
        ssize_t b = ref_index(ref, launches - ref->launches[a]);
        if (b < 0 || (size_t)b == a || !ref->mean_ns[b])
            continue;
        double ea = (double)ref->p99_ns[a] - (double)ref->mean_ns[a];
        double eb = (double)ref->p99_ns[b] - (double)ref->mean_ns[b];
        return joined_p99((double)ref->mean_ns[a] + (double)ref->mean_ns[b], ea * ea + eb * eb, mean_ns);
    }
    return 0;
}

_Static_assert(FIKIT_BUDGET_QUEUED_NS == 2 * FIKIT_BURST_JOIN_NS, "a queued burst: within two joins of the last");

double fikit_budget_of_heads(double budget, double load)
{
    if (load < 0)
        load = 0;
    if (load > FIKIT_BUDGET_HEAD_LOAD_MAX)
        load = FIKIT_BUDGET_HEAD_LOAD_MAX;
    return 1.0 + (budget - 1.0) / (1.0 - load);
}

double fikit_budget_of_bursts(double budget, double load)
{
    if (load < 0)
        load = 0;
    if (load > 1)
        load = 1;
    return 1.0 + (budget - 1.0) * (1.0 - load);
}

void fikit_budget_init(struct fikit_budget *b, double budget, bool of_requests, int top)
{
    memset(b, 0, sizeof *b);
    if (budget < 1.0)
        budget = 1.0;
    if (budget > 10.0)
        budget = 10.0;
    b->budget_ppm = (uint32_t)(budget * 1e6 + 0.5);
    b->burst_budget_ppm = b->budget_ppm;
    b->head_budget_ppm = b->budget_ppm;
    b->of_requests = of_requests;
    b->pace_ppm = 1000000;
    b->top = top < 0 ? 0 : top > FIKIT_BUDGET_TOP ? FIKIT_BUDGET_TOP : top;
    b->step = fikit_budget_start_step(b->top > FIKIT_BUDGET_GAPS_TOP);
    if (b->step > b->top)
        b->step = b->top;
}

static void forget(struct fikit_budget *b)
{
    memset(b->broke, 0, sizeof b->broke);
    memset(b->came_near, 0, sizeof b->came_near);
    b->judged = 0;
    b->breaks = 0;
    b->near = 0;
    memset(&b->body, 0, sizeof b->body);
    b->body_ppm = 0;
    b->body_se_ppm = 0;
}

static uint32_t ppm(double x) { return x * 1e6 > 4e9 ? 4000000000u : x <= 0 ? 0 : (uint32_t)(x * 1e6 + 0.5); }

static void window_add(struct fikit_budget_window *w, uint64_t now_ns, double a, double b)
{
    if (w->n == 0)
        w->start_ns[1] = now_ns;
    w->sum[1][0] += a;
    w->sum[1][1] += b;
    w->n++;
}

/* The values in both buckets (bucket a bucket's size), when the first
 * came, and the two sums. */
static uint32_t window_totals(const struct fikit_budget_window *w, uint32_t bucket, uint64_t *start_ns, double *a,
                              double *b)
{
    *start_ns = w->full ? w->start_ns[0] : w->start_ns[1];
    *a = w->sum[1][0] + (w->full ? w->sum[0][0] : 0);
    *b = w->sum[1][1] + (w->full ? w->sum[0][1] : 0);
    return w->n + (w->full ? bucket : 0);
}

/* A full bucket becomes the one before, and a new one starts. */
static void window_turn(struct fikit_budget_window *w, uint32_t bucket)
{
    if (w->n < bucket)
        return;
    w->start_ns[0] = w->start_ns[1];
    w->sum[0][0] = w->sum[1][0];
    w->sum[0][1] = w->sum[1][1];
    w->sum[1][0] = w->sum[1][1] = 0;
    w->n = 0;
    w->full = true;
}

/* A judged burst's ratio to alone's mean into the body: their mean
 * and its standard error once FIKIT_BUDGET_BODY_BURSTS were judged. */
static void note_body(struct fikit_budget *b, uint64_t now_ns, double ratio)
{
    window_add(&b->body, now_ns, ratio, ratio * ratio);
    uint64_t since;
    double sum, sq;
    uint32_t count = window_totals(&b->body, FIKIT_BUDGET_BODY_BURSTS, &since, &sum, &sq);
    if (count >= FIKIT_BUDGET_BODY_BURSTS) {
        double n = (double)count, mean = sum / n, var = (sq - sum * mean) / (n - 1);
        b->body_ppm = ppm(mean);
        b->body_se_ppm = ppm(var > 0 ? sqrt(var / n) : 0);
    }
    window_turn(&b->body, FIKIT_BUDGET_BODY_BURSTS);
}

/* Puts a bit into a window ring at position pos, returning the bit it replaced. */
static bool ring_put(uint64_t *ring, uint64_t pos, bool bit)
{
    uint64_t i = pos % FIKIT_BUDGET_WINDOW;
    uint64_t mask = 1ull << (i % 64);
    bool old = ring[i / 64] & mask;
    if (bit)
        ring[i / 64] |= mask;
    else
        ring[i / 64] &= ~mask;
    return old;
}

/* The step changes at now: bursts that start before what the old step let
 * be queued has drained saw the old one. */
static void change(struct fikit_budget *b, int step, uint64_t now, uint64_t max_queued_ns)
{
    struct fikit_lower_knobs old;
    fikit_budget_step_knobs(b->step, max_queued_ns, 0, &old);
    uint64_t settle = old.inflight_ns > FIKIT_BUDGET_SETTLE_MIN_NS ? old.inflight_ns : FIKIT_BUDGET_SETTLE_MIN_NS;
    b->step = step;
    b->settled_ns = now + settle;
    forget(b);
}

static int cmp_u32(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

/* A quiet burst's ratio to the reference goes into the ring; the pace is
 * the p99 of the ring, once it holds enough, every so many. */
static void note_quiet(struct fikit_budget *b, double ratio)
{
    b->quiet_ppm[b->quiet % FIKIT_BUDGET_QUIET] = ratio * 1e6 > 4e9 ? 4000000000u : (uint32_t)(ratio * 1e6);
    b->quiet++;
    if (b->quiet < FIKIT_BUDGET_QUIET_MIN || b->quiet % FIKIT_BUDGET_QUIET_EVERY)
        return;
    uint32_t n = b->quiet < FIKIT_BUDGET_QUIET ? (uint32_t)b->quiet : FIKIT_BUDGET_QUIET;
    uint32_t v[FIKIT_BUDGET_QUIET];
    memcpy(v, b->quiet_ppm, n * sizeof v[0]);
    qsort(v, n, sizeof v[0], cmp_u32);
    /* The p99 by the nearest rank, as the reference's own. */
    uint32_t rank = (uint32_t)((uint64_t)n * 99 / 100);
    double pace = v[rank < n ? rank : n - 1] / 1e6;
    if (pace > FIKIT_BUDGET_PACE_MAX)
        pace = FIKIT_BUDGET_PACE_MAX;
    if (pace < 1.0)
        pace = 1.0;
    b->pace_ppm = (uint32_t)(pace * 1e6 + 0.5);
}

/* Every burst counts into the task's load, its busy time over the wall
 * time since its window's first burst began; the burst budgets follow it. */
static void note_load(struct fikit_budget *b, uint64_t start_ns, uint64_t end_ns)
{
    window_add(&b->load, start_ns, (double)(end_ns - start_ns), 0);
    uint64_t since;
    double busy, unused;
    uint32_t seen = window_totals(&b->load, FIKIT_BUDGET_LOAD_BURSTS, &since, &busy, &unused);
    if (seen >= FIKIT_BUDGET_LOAD_MIN && end_ns > since) {
        double load = busy / (double)(end_ns - since);
        b->load_ppm = load >= 1.0 ? 1000000u : (uint32_t)(load * 1e6 + 0.5);
    }
    window_turn(&b->load, FIKIT_BUDGET_LOAD_BURSTS);
    double budget = b->budget_ppm / 1e6, load = b->load_ppm / 1e6;
    b->burst_budget_ppm = b->of_requests ? ppm(fikit_budget_of_bursts(budget, load)) : b->budget_ppm;
    b->head_budget_ppm = b->of_requests ? ppm(fikit_budget_of_heads(budget, load)) : b->budget_ppm;
}

enum fikit_budget_action fikit_budget_note_burst(struct fikit_budget *b, uint64_t start_ns, uint64_t end_ns,
                                                 uint64_t ref_ns, uint64_t ref_mean_ns, uint64_t max_queued_ns,
                                                 bool quiet)
{
    if (end_ns < start_ns)
        return FIKIT_BUDGET_IGNORED;
    note_load(b, start_ns, end_ns);
    /* Its request waited for the one before (FIKIT_BUDGET_QUEUED_NS). */
    bool queued = !b->of_requests || (b->last_end_ns && start_ns < b->last_end_ns + FIKIT_BUDGET_QUEUED_NS);
    b->last_end_ns = end_ns;
    if (!ref_ns)
        return FIKIT_BUDGET_IGNORED;
    uint64_t len = end_ns - start_ns;
    if (quiet)
        note_quiet(b, (double)len / (double)ref_ns);
    double ratio = (double)len / (double)ref_ns / (b->pace_ppm ? b->pace_ppm / 1e6 : 1.0);
    b->bursts++;
    b->last_slowdown_ppm = ratio * 1e6 > 4e9 ? 4000000000u : (uint32_t)(ratio * 1e6);
    /* A queued burst's tail is judged by the burst budget, but as a head's
     * where busy periods are short and the body is surely inside the
     * climbing line (FIKIT_BUDGET_QUEUED_AS_HEAD_LOAD). */
    double line = 1.0 + FIKIT_BUDGET_HYSTERESIS * (b->burst_budget_ppm / 1e6 - 1.0);
    bool as_head = b->load_ppm <= FIKIT_BUDGET_QUEUED_AS_HEAD_LOAD * 1e6 && b->body_ppm &&
                   (b->body_ppm + FIKIT_BUDGET_BODY_SE * b->body_se_ppm) / 1e6 <= line;
    /* A burst's excess is held to a share of the requests' p99, which is
     * the tail of every size: a short request may be delayed by as much as
     * a long one (fikit_budget_of_bursts, fikit_budget_of_heads). */
    double tail = b->tail_ns > ref_ns ? (double)b->tail_ns / (double)ref_ns : 1.0;
    double share = (queued && !as_head ? b->burst_budget_ppm : b->head_budget_ppm) / 1e6 - 1.0;
    double budget = 1.0 + share * tail;
    bool broke = ratio > budget;
    bool near = ratio > 1.0 + FIKIT_BUDGET_HYSTERESIS * (budget - 1.0);
    if (broke)
        b->broken++;
    if (start_ns < b->settled_ns)
        return FIKIT_BUDGET_IGNORED;

    if (ring_put(b->broke, b->judged, broke))
        b->breaks--;
    if (ring_put(b->came_near, b->judged, near))
        b->near--;
    b->breaks += broke;
    b->near += near;
    b->judged++;
    double pace = b->pace_ppm ? b->pace_ppm / 1e6 : 1.0;
    /* Every burst's mean slowdown lengthens the task's busy time, which the
     * requests queued behind pay at the queue's rate: the body holds them
     * all and is judged by the burst budget. */
    if (ref_mean_ns)
        note_body(b, end_ns, (double)len / ((double)ref_mean_ns * pace));
    double body = b->body_ppm / 1e6, burst_budget = b->burst_budget_ppm / 1e6;
    bool body_over = body - FIKIT_BUDGET_BODY_SE * b->body_se_ppm / 1e6 > burst_budget;

    if (b->breaks >= FIKIT_BUDGET_CUT_BREAKS || body_over) {
        /* The p99 is likely over the budget: halve the step, fast; from the
         * top, one step (it differs only in the whole device at rest,
         * which a task that is not confined never had). */
        if (b->step == 0) {
            b->unmeetable = true;
            forget(b);
            return FIKIT_BUDGET_KEEP;
        }
        if (b->cuts_from[b->step] < UINT32_MAX)
            b->cuts_from[b->step]++;
        b->cuts++;
        change(b, b->step == FIKIT_BUDGET_TOP ? b->step - 1 : b->step / 2, end_ns, max_queued_ns);
        return FIKIT_BUDGET_CUT;
    }
    if (b->step >= b->top || b->near > FIKIT_BUDGET_NEAR_MAX || body > line)
        return FIKIT_BUDGET_KEEP;
    uint32_t k = b->cuts_from[b->step + 1];
    uint64_t need = (uint64_t)FIKIT_BUDGET_GROW << (k < FIKIT_BUDGET_BACKOFF_MAX ? k : FIKIT_BUDGET_BACKOFF_MAX);
    if (b->judged < need)
        return FIKIT_BUDGET_KEEP;
    /* Well inside the budget for long enough: one step up. */
    b->climbs++;
    b->unmeetable = false;
    change(b, b->step + 1, end_ns, max_queued_ns);
    return FIKIT_BUDGET_CLIMB;
}

void fikit_budget_set_init(struct fikit_budget_set *set) { memset(set, 0, sizeof *set); }

/* Whether a task below level may run beside it: how far the controller of
 * a budgeted task at level may climb. */
static bool beside_below(const struct fikit_budget_set *set, int level)
{
    for (uint64_t u = set->used; u; u &= u - 1) {
        int l = __builtin_ctzll(u);
        if (set->level[l] > level && set->beside[l])
            return true;
    }
    return false;
}

/* After a task came or left: each controller as configured for what is
 * below it now (a task beside that came starts where beside starts; one
 * that left takes the gaps' top). */
static void retop(struct fikit_budget_set *set)
{
    for (uint64_t m = set->steered; m; m &= m - 1) {
        int s = __builtin_ctzll(m);
        struct fikit_budget *b = &set->b[s];
        bool beside = beside_below(set, set->level[s]);
        if (fikit_budget_top_step(beside) == b->top)
            continue;
        b->top = fikit_budget_top_step(beside);
        b->step = fikit_budget_start_step(beside);
    }
}

void fikit_budget_set_add(struct fikit_budget_set *set, int slot, int level, bool beside, double budget,
                          bool of_requests, const struct fikit_budget_ref *ref)
{
    if (slot < 0 || slot >= FIKIT_BUDGET_SLOTS)
        return;
    uint64_t bit = 1ull << slot;
    set->used |= bit;
    set->steered &= ~bit;
    set->level[slot] = level;
    set->beside[slot] = beside;
    memset(&set->b[slot], 0, sizeof set->b[slot]);
    memset(&set->ref[slot], 0, sizeof set->ref[slot]);
    if (budget > 0 && ref && ref->n) {
        set->ref[slot] = *ref;
        fikit_budget_init(&set->b[slot], budget, of_requests, fikit_budget_top_step(beside_below(set, level)));
        set->b[slot].tail_ns = ref->all_p99_ns;
        set->steered |= bit;
    }
    retop(set);
}

void fikit_budget_set_beside(struct fikit_budget_set *set, int slot, bool beside)
{
    if (slot < 0 || slot >= FIKIT_BUDGET_SLOTS || !(set->used & (1ull << slot)) || set->beside[slot] == beside)
        return;
    set->beside[slot] = beside;
    retop(set);
}

void fikit_budget_set_drop(struct fikit_budget_set *set, int slot)
{
    if (slot < 0 || slot >= FIKIT_BUDGET_SLOTS)
        return;
    set->used &= ~(1ull << slot);
    set->steered &= ~(1ull << slot);
    retop(set);
}

void fikit_budget_set_ref(struct fikit_budget_set *set, int slot, double budget, bool of_requests,
                          const struct fikit_budget_ref *ref)
{
    if (slot < 0 || slot >= FIKIT_BUDGET_SLOTS || !(set->used & (1ull << slot)))
        return;
    if ((set->steered & (1ull << slot)) && ref && ref->n) {
        set->ref[slot] = *ref;
        set->b[slot].tail_ns = ref->all_p99_ns;
        return;
    }
    fikit_budget_set_add(set, slot, set->level[slot], set->beside[slot], budget, of_requests, ref);
}

enum fikit_budget_action fikit_budget_set_burst(struct fikit_budget_set *set, int slot, uint64_t start_ns,
                                                uint64_t end_ns, uint32_t launches, uint64_t max_queued_ns,
                                                bool quiet)
{
    if (slot < 0 || slot >= FIKIT_BUDGET_SLOTS || !(set->steered & (1ull << slot)))
        return FIKIT_BUDGET_IGNORED;
    uint64_t mean = 0;
    uint64_t p99 = fikit_budget_ref_find(&set->ref[slot], launches, &mean);
    return fikit_budget_note_burst(&set->b[slot], start_ns, end_ns, p99, mean, max_queued_ns, quiet);
}

void fikit_budget_set_knobs(const struct fikit_budget_set *set, int slot, uint64_t max_queued_ns, uint32_t sm_pct,
                            struct fikit_lower_knobs *out)
{
    memset(out, 0, sizeof *out);
    if (slot < 0 || slot >= FIKIT_BUDGET_SLOTS || !(set->used & (1ull << slot)))
        return;
    int step = FIKIT_BUDGET_STEPS;
    for (uint64_t m = set->steered & ~(1ull << slot); m; m &= m - 1) {
        int s = __builtin_ctzll(m);
        if (set->level[s] < set->level[slot] && set->b[s].step < step)
            step = set->b[s].step;
    }
    if (step == FIKIT_BUDGET_STEPS)
        return;
    if (!set->beside[slot] && step > FIKIT_BUDGET_GAPS_TOP)
        step = FIKIT_BUDGET_GAPS_TOP;
    fikit_budget_step_knobs(step, max_queued_ns, sm_pct, out);
}
