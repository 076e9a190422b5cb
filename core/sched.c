#include "core/sched.h"

#include "core/clock.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

const char *fikit_grant_reason_name(enum fikit_grant_reason r)
{
    static const char *const names[] = {"free", "fit", "passthrough", "release", "starved", "pause",
                                        "overdue"};
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

enum fikit_grant_count fikit_grant_count_of(enum fikit_grant_reason r)
{
    switch (r) {
    case FIKIT_GRANT_FREE: return FIKIT_GRANT_COUNT_FREE;
    case FIKIT_GRANT_FIT: return FIKIT_GRANT_COUNT_FIT;
    case FIKIT_GRANT_STARVED: return FIKIT_GRANT_COUNT_STARVED;
    case FIKIT_GRANT_PAUSE: return FIKIT_GRANT_COUNT_PAUSE;
    case FIKIT_GRANT_OVERDUE: return FIKIT_GRANT_COUNT_OVERDUE;
    default: return FIKIT_GRANT_COUNT_OTHER;
    }
}

const char *fikit_grant_count_name(enum fikit_grant_count c)
{
    static const char *const names[FIKIT_GRANT_COUNTS] = {"free", "fit", "starved", "pause", "overdue", "other"};
    return (unsigned)c < FIKIT_GRANT_COUNTS ? names[c] : "?";
}

void fikit_sched_init(struct fikit_sched *s, const struct fikit_sched_params *p)
{
    memset(s, 0, sizeof *s);
    s->p = *p;
}

struct fikit_task_state *fikit_sched_task(struct fikit_sched *s, uint32_t id)
{
    for (int i = 0; i < FIKIT_MAX_TASKS; i++)
        if (s->tasks[i].used && s->tasks[i].id == id)
            return &s->tasks[i];
    return NULL;
}

int fikit_sched_add_task(struct fikit_sched *s, uint32_t id, int32_t pid, const char *name,
                         int level)
{
    if (level < 0 || level >= FIKIT_LEVELS)
        return -EINVAL;
    if (fikit_sched_task(s, id))
        return -EEXIST;
    for (int i = 0; i < FIKIT_MAX_TASKS; i++) {
        struct fikit_task_state *t = &s->tasks[i];
        if (t->used)
            continue;
        memset(t, 0, sizeof *t);
        t->used = true;
        t->id = id;
        t->pid = pid;
        t->level = level;
        snprintf(t->name, sizeof t->name, "%s", name ? name : "");
        return 0;
    }
    return -ENOSPC;
}

static void drop_request(struct fikit_sched *s, size_t i)
{
    memmove(&s->req[i], &s->req[i + 1], (s->nreq - i - 1) * sizeof s->req[0]);
    s->nreq--;
}

static void drop_reservations(struct fikit_sched *s, uint32_t id)
{
    size_t k = 0;
    for (size_t i = 0; i < s->nresv; i++)
        if (s->resv[i].task_id != id)
            s->resv[k++] = s->resv[i];
    s->nresv = k;
}

uint64_t fikit_sched_reserved_until(struct fikit_sched *s, uint64_t now)
{
    uint64_t end = s->client_fill_until_ns > now ? s->client_fill_until_ns : now;
    size_t k = 0;
    for (size_t i = 0; i < s->nresv; i++) {
        if (s->resv[i].end_ns <= now)
            continue;
        if (s->resv[i].end_ns > end)
            end = s->resv[i].end_ns;
        s->resv[k++] = s->resv[i];
    }
    s->nresv = k;
    return end;
}

uint64_t fikit_sched_granted_until(const struct fikit_sched *s)
{
    uint64_t end = 0;
    for (size_t i = 0; i < s->nresv; i++)
        if (s->resv[i].end_ns > end)
            end = s->resv[i].end_ns;
    return end;
}

static void reserve(struct fikit_sched *s, uint32_t id, uint64_t end)
{
    if (s->nresv == FIKIT_MAX_RESERVATIONS) {
        /* Full: merge into the latest one, keeping the total end. */
        size_t last = 0;
        for (size_t i = 1; i < s->nresv; i++)
            if (s->resv[i].end_ns > s->resv[last].end_ns)
                last = i;
        if (end > s->resv[last].end_ns)
            s->resv[last].end_ns = end;
        return;
    }
    s->resv[s->nresv++] = (struct fikit_reservation){.task_id = id, .end_ns = end};
}

void fikit_sched_set_knobs(struct fikit_sched *s, uint32_t id, const struct fikit_lower_knobs *k)
{
    struct fikit_task_state *t = fikit_sched_task(s, id);
    if (t)
        t->knobs = *k;
    s->knobbed = false;
    for (int i = 0; i < FIKIT_MAX_TASKS; i++)
        if (s->tasks[i].used && s->tasks[i].knobs.mode != FIKIT_LOWER_FREE)
            s->knobbed = true;
}

int fikit_sched_remove_task(struct fikit_sched *s, uint32_t id)
{
    struct fikit_task_state *t = fikit_sched_task(s, id);
    if (!t)
        return 0;
    t->used = false;
    drop_reservations(s, id);
    int dropped = 0;
    for (size_t i = 0; i < s->nreq;) {
        if (s->req[i].task_id == id) {
            drop_request(s, i);
            dropped++;
        } else {
            i++;
        }
    }
    return dropped;
}

void fikit_sched_note_launch(struct fikit_sched *s, uint32_t id, uint64_t now,
                             uint64_t busy_until_ns, const struct fikit_gap_pred *gap)
{
    struct fikit_task_state *t = fikit_sched_task(s, id);
    if (!t)
        return;
    t->last_launch_ns = now;
    t->busy_until_ns = busy_until_ns;
    if (gap)
        t->gap = *gap;
    else
        memset(&t->gap, 0, sizeof t->gap);
    t->launches++;
}

bool fikit_launch_record_plausible(const struct fikit_launch_record *r, uint64_t prev_launches,
                                   uint64_t now)
{
    const uint64_t hour = 3600 * FIKIT_NS_PER_S;
    /* One less: the task took back a launch the runtime refused
     * (fikit_shm_withdraw_own), published before the call. */
    if (r->launches + 1 < prev_launches)
        return false;
    if (r->launches == 0)
        return true;
    if (r->last_launch_ns > now + FIKIT_NS_PER_S || r->busy_until_ns > now + hour || r->idle_after_ns > hour)
        return false;
    for (int i = 1; i < FIKIT_GAP_POINTS; i++)
        if (r->gap.q_ns[i] < r->gap.q_ns[i - 1])
            return false;
    return true;
}

int fikit_sched_note_record(struct fikit_sched *s, uint32_t id, uint64_t now,
                            const struct fikit_launch_record *r)
{
    struct fikit_task_state *t = fikit_sched_task(s, id);
    if (!t)
        return -ENOENT;
    if (!fikit_launch_record_plausible(r, t->launches, now))
        return -EINVAL;
    t->last_launch_ns = r->last_launch_ns;
    t->busy_until_ns = r->busy_until_ns;
    t->gap = r->gap;
    t->launches = r->launches;
    t->idle_after_ns = r->idle_after_ns;
    return 0;
}

static uint64_t idle_threshold(const struct fikit_sched *s, const struct fikit_task_state *t)
{
    return fikit_idle_threshold(fikit_params_idle_learned(&s->p), fikit_params_idle_after(&s->p), t->idle_after_ns);
}

/* The instant a task turns idle, if nothing more is launched. */
static uint64_t work_end(const struct fikit_task_state *t)
{
    return t->busy_until_ns > t->last_launch_ns ? t->busy_until_ns : t->last_launch_ns;
}

static uint64_t idle_deadline(const struct fikit_sched *s, const struct fikit_task_state *t)
{
    return work_end(t) + idle_threshold(s, t);
}

bool fikit_sched_task_active(const struct fikit_sched *s, const struct fikit_task_state *t,
                             uint64_t now)
{
    return t->used && fikit_task_is_active(t->launches, t->last_launch_ns, t->busy_until_ns,
                                           idle_threshold(s, t), now);
}

void fikit_sched_status(const struct fikit_sched *s, uint64_t now, struct fikit_sched_status *out)
{
    *out = (struct fikit_sched_status){
        .top_level = fikit_sched_top_level(s, now),
        .policy = s->p.policy,
        .substrate_cost_ns = s->p.substrate_cost_ns,
        .safety_margin_ns = s->p.safety_margin_ns,
        .held_now = (uint32_t)s->nreq,
    };
}

void fikit_sched_task_status(const struct fikit_sched *s, uint32_t id, uint64_t now,
                             struct fikit_sched_task_status *out)
{
    struct fikit_task_state *t = fikit_sched_task((struct fikit_sched *)s, id);
    memset(out, 0, sizeof *out);
    out->active = t && fikit_sched_task_active(s, t, now);
    out->launches = t ? t->launches : 0;
    for (size_t r = 0; r < s->nreq; r++) {
        const struct fikit_request *q = &s->req[r];
        if (q->task_id != id)
            continue;
        if (out->held_now++ == 0) { /* req[] is in posting order: the first waited longest */
            out->held_longest_ns = now > q->posted_ns ? now - q->posted_ns : 1;
            out->held_longest_dur_ns = q->dur_ns;
        }
    }
    out->idle_after_ns = fikit_idle_threshold(fikit_params_idle_learned(&s->p), fikit_params_idle_after(&s->p),
                                              t ? t->idle_after_ns : 0);
}

/* The instant an active task pauses, UINT64_MAX if it cannot (strict
 * waits for idleness). */
static uint64_t pause_deadline(const struct fikit_sched *s, const struct fikit_task_state *t)
{
    if (s->p.policy != FIKIT_POLICY_FILL)
        return UINT64_MAX;
    uint64_t th = fikit_pause_threshold(fikit_params_idle_learned(&s->p) && s->p.pauses, &t->gap);
    return th == UINT64_MAX || work_end(t) > UINT64_MAX - th ? UINT64_MAX : work_end(t) + th;
}

/* The highest level with an active task; with skip_paused, one that has
 * not paused. */
static int top_level(const struct fikit_sched *s, uint64_t now, bool skip_paused)
{
    int top = FIKIT_LEVELS;
    for (int i = 0; i < FIKIT_MAX_TASKS; i++) {
        const struct fikit_task_state *t = &s->tasks[i];
        if (t->level < top && fikit_sched_task_active(s, t, now) &&
            !(skip_paused && now >= pause_deadline(s, t)))
            top = t->level;
    }
    return top;
}

int fikit_sched_top_level(const struct fikit_sched *s, uint64_t now)
{
    return top_level(s, now, false);
}

int fikit_sched_post(struct fikit_sched *s, const struct fikit_request *r)
{
    struct fikit_task_state *t = fikit_sched_task(s, r->task_id);
    if (!t)
        return -ENOENT;
    if (s->nreq == FIKIT_MAX_REQUESTS)
        return -ENOSPC;
    struct fikit_request *q = &s->req[s->nreq++];
    *q = *r;
    q->seq = ++s->next_seq;
    q->level = t->level;
    q->passed_over = 0;
    t->holds++;
    return 0;
}

/* Only the oldest held request of a (task, stream) may be granted. */
static bool is_stream_head(const struct fikit_sched *s, size_t i)
{
    for (size_t j = 0; j < i; j++)
        if (s->req[j].task_id == s->req[i].task_id && s->req[j].stream == s->req[i].stream)
            return false;
    return true;
}

static void emit(struct fikit_sched *s, size_t i, enum fikit_grant_reason why, uint64_t now,
                 uint64_t room, struct fikit_grant *out)
{
    const struct fikit_request *r = &s->req[i];
    *out = (struct fikit_grant){.task_id = r->task_id,
                                .ticket = r->ticket,
                                .reason = why,
                                .key = r->key,
                                .dur_ns = r->dur_ns,
                                .room_ns = room,
                                .posted_ns = r->posted_ns,
                                .at_ns = now};
    struct fikit_task_state *t = fikit_sched_task(s, r->task_id);
    if (t)
        t->grants++;
    drop_request(s, i);
}

static uint64_t min64(uint64_t a, uint64_t b) { return a < b ? a : b; }

/* The predicted rooms left in the gap that the top level is in; with
 * several tasks on the top level, the gap is the one they all share. *wake
 * is lowered to when the answer changes by itself (a busy task's work ends,
 * a task turns idle). */
static void top_level_room(const struct fikit_sched *s, int top, uint64_t now, uint64_t *wake,
                           bool *busy, struct fikit_fill_rooms *rooms)
{
    fikit_fill_rooms_init(rooms, s->p.max_queued_ns);
    *busy = false;
    for (int i = 0; i < FIKIT_MAX_TASKS; i++) {
        const struct fikit_task_state *t = &s->tasks[i];
        if (t->level != top || !fikit_sched_task_active(s, t, now))
            continue;
        *wake = min64(*wake, idle_deadline(s, t));
        if (pause_deadline(s, t) > now)
            *wake = min64(*wake, pause_deadline(s, t));
        if (now < t->busy_until_ns) {
            *wake = min64(*wake, t->busy_until_ns);
            *busy = true;
        }
        fikit_fill_rooms_add(rooms, &t->gap, t->busy_until_ns, now, s->p.gap_confidence);
    }
    fikit_fill_rooms_done(rooms);
}

static bool starving(const struct fikit_sched *s, const struct fikit_request *r, uint64_t now)
{
    return s->p.starve_after_ns && now - r->posted_ns >= s->p.starve_after_ns;
}

/* The oldest stream head that is overdue at now, SIZE_MAX if none: held
 * max_wait_ns while the level above is between kernels (busy false), or
 * twice that whatever it does, since its predicted work can keep looking
 * busy for as long as it runs (predictions longer than the kernels). */
static size_t overdue(const struct fikit_sched *s, uint64_t now, bool busy)
{
    uint64_t after = busy ? 2 * s->p.max_wait_ns : s->p.max_wait_ns;
    for (size_t i = 0; s->p.max_wait_ns && i < s->nreq; i++)
        if (now >= s->req[i].posted_ns && now - s->req[i].posted_ns >= after && is_stream_head(s, i))
            return i;
    return SIZE_MAX;
}

/* The gap being filled: from start (where granted work is predicted to
 * end) to end, or to end_starving for a stream head held starve_after_ns;
 * overhead is the substrate cost and safety margin. */
struct fill_window {
    uint64_t start, end, end_starving, overhead;
    const struct fikit_fill_rooms *rooms;
    uint64_t now;
};

static void window_at(struct fill_window *w, const struct fikit_fill_rooms *rooms, uint64_t now,
                      uint64_t start)
{
    w->rooms = rooms;
    w->now = now;
    w->start = start;
    w->end = fikit_fill_end(rooms, now, start);
    w->end_starving = fikit_fill_end_of(rooms, now, start, rooms->starving);
}

/* The device time held request i would take in the window, 0 if it does
 * not fit: its predicted duration, or for a starving one with no
 * measurement the whole of the median room. *starved: fitted as starving. */
static uint64_t fit_len(const struct fikit_sched *s, size_t i, const struct fill_window *w,
                        uint64_t now, bool *starved)
{
    const struct fikit_request *r = &s->req[i];
    *starved = false;
    if (!is_stream_head(s, i))
        return 0;
    /* The budget's knobs for its task: the same rooms under its own queue
     * bound (fikit_admit's rule for the client's own fills). */
    const struct fikit_task_state *t = s->knobbed ? fikit_sched_task((struct fikit_sched *)s, r->task_id) : NULL;
    struct fill_window own;
    if (t && t->knobs.mode == FIKIT_LOWER_WAIT)
        return 0;
    if (t && (t->knobs.mode == FIKIT_LOWER_GAPS || t->knobs.mode == FIKIT_LOWER_BESIDE)) {
        struct fikit_fill_rooms rr = *w->rooms;
        rr.max_queued_ns = t->knobs.inflight_ns;
        if (t->knobs.mode == FIKIT_LOWER_GAPS && !t->knobs.inflight_ns) {
            rr.room = rr.room < rr.sure ? rr.room : rr.sure;
            rr.starving = rr.starving < rr.sure ? rr.starving : rr.sure;
        }
        own = *w;
        own.end = fikit_fill_end(&rr, w->now, w->start);
        own.end_starving = fikit_fill_end_of(&rr, w->now, w->start, rr.starving);
        w = &own;
    }
    if (fikit_fill_fits(w->start, w->end, w->overhead, r->dur_ns))
        return r->dur_ns;
    if (!starving(s, r, now))
        return 0;
    *starved = true;
    if (r->dur_ns)
        return fikit_fill_fits(w->start, w->end_starving, w->overhead, r->dur_ns) ? r->dur_ns : 0;
    return w->end_starving > w->start + w->overhead ? w->end_starving - w->start - w->overhead : 0;
}

/* One decision in the making: the grants written so far and what it found. */
struct decision {
    uint64_t now;
    struct fikit_grant *out;
    size_t n, max;
    uint64_t wake;            /* when to decide again without a new event */
    int top;                  /* the top active level */
    bool busy;                /* the top level's work is in flight */
    struct fikit_fill_rooms rooms;
    uint64_t reserved_until;  /* lower work granted ahead ends */
};

static bool full(const struct decision *d) { return d->n == d->max; }

static void grant(struct fikit_sched *s, struct decision *d, size_t i, enum fikit_grant_reason why,
                  uint64_t room)
{
    emit(s, i, why, d->now, room, &d->out[d->n++]);
}

/* Phase 1. Levels at or above the top active level run freely, and so does
 * a short kernel at or above the top level that has not paused. A request
 * is only ever held because a strictly higher level is active. */
static void grant_free_and_paused(struct fikit_sched *s, struct decision *d)
{
    d->top = fikit_sched_top_level(s, d->now);
    int top_unpaused = top_level(s, d->now, true);
    for (size_t i = 0; i < s->nreq && !full(d);) {
        const struct fikit_request *r = &s->req[i];
        if (r->level <= d->top)
            grant(s, d, i, FIKIT_GRANT_FREE, 0);
        else if (r->level <= top_unpaused && fikit_fits_pause(r->dur_ns) && is_stream_head(s, i))
            grant(s, d, i, FIKIT_GRANT_PAUSE, 0);
        else
            i++;
    }
}

/* Phase 2. A stream head held max_wait goes at the start of the next gap
 * of the levels above, one at a time: a kernel longer than every gap must
 * not wait for as long as they stay active. Then when the held ones next
 * fall due. */
static void grant_overdue(struct fikit_sched *s, struct decision *d)
{
    d->reserved_until = fikit_sched_reserved_until(s, d->now);
    if (!full(d) && d->reserved_until <= d->now) {
        size_t i = overdue(s, d->now, d->busy);
        if (i != SIZE_MAX) {
            uint32_t grantee = s->req[i].task_id;
            uint64_t dur = s->req[i].dur_ns;
            grant(s, d, i, FIKIT_GRANT_OVERDUE, 0);
            d->reserved_until = d->now + (dur ? dur : 1);
            reserve(s, grantee, d->reserved_until);
        }
    }
    for (size_t i = 0; s->p.max_wait_ns && i < s->nreq; i++) {
        uint64_t held = d->now > s->req[i].posted_ns ? d->now - s->req[i].posted_ns : 0;
        if (held < s->p.max_wait_ns) {
            d->wake = min64(d->wake, s->req[i].posted_ns + s->p.max_wait_ns);
            continue;
        }
        /* Overdue, behind lower work in flight (the one before it) or the
         * level above's kernel (top_level_room's wake): look again when
         * that ends, and at twice max_wait at the latest. */
        if (d->reserved_until > d->now)
            d->wake = min64(d->wake, d->reserved_until);
        if (held < 2 * s->p.max_wait_ns)
            d->wake = min64(d->wake, s->req[i].posted_ns + 2 * s->p.max_wait_ns);
    }
}

/* Phase 3, fill: BestPrioFit into the top level's gap, behind the lower
 * work in flight ahead (the live grantees' and the clients' fills). */
static void grant_fits(struct fikit_sched *s, struct decision *d)
{
    if (d->rooms.starving == 0) /* the median room is never the smaller */
        return;
    uint64_t now = d->now;
    struct fill_window w = {.overhead = s->p.substrate_cost_ns + s->p.safety_margin_ns};
    window_at(&w, &d->rooms, now, d->reserved_until);
    for (;;) {
        /* The first level (highest priority) that has a fitting stream
         * head; within it, the longest one, unless one that fitted was
         * passed over too often: then the oldest such (req[] is in posting
         * order, so the first found). */
        size_t best = SIZE_MAX, passed = SIZE_MAX;
        uint64_t best_len = 0;
        bool best_starving = false;
        int level = d->top + 1;
        for (; level < FIKIT_LEVELS && best == SIZE_MAX; level++) {
            for (size_t i = 0; i < s->nreq; i++) {
                bool st;
                uint64_t len = s->req[i].level == level ? fit_len(s, i, &w, now, &st) : 0;
                if (!len)
                    continue;
                if (best == SIZE_MAX || len > best_len) {
                    best = i;
                    best_len = len;
                    best_starving = st;
                }
                if (passed == SIZE_MAX && s->req[i].passed_over >= FIKIT_SCHED_MAX_PASSED_OVER)
                    passed = i;
            }
        }
        if (best == SIZE_MAX || full(d))
            break;
        if (passed != SIZE_MAX && passed != best) {
            best = passed;
            best_len = fit_len(s, best, &w, now, &best_starving);
        }
        for (size_t i = 0; i < s->nreq; i++) {
            bool st;
            if (i != best && s->req[i].level == level - 1 && fit_len(s, i, &w, now, &st))
                s->req[i].passed_over++;
        }
        uint32_t grantee = s->req[best].task_id;
        uint64_t end = best_starving ? w.end_starving : w.end;
        grant(s, d, best, best_starving ? FIKIT_GRANT_STARVED : FIKIT_GRANT_FIT,
              end > w.start ? end - w.start : 0);
        window_at(&w, &d->rooms, now, w.start + best_len);
        reserve(s, grantee, w.start);
        d->reserved_until = w.start;
    }
}

/* Phase 4, with launches still held: room grows when granted work ends,
 * and the remaining-gap estimate moves as the gap ages: look again; and
 * when a held launch starts to starve. */
static void wake_for_held(struct fikit_sched *s, struct decision *d)
{
    if (!s->nreq)
        return;
    s->watch_launches = !d->busy;
    if (d->reserved_until > d->now)
        d->wake = min64(d->wake, d->reserved_until);
    d->wake = min64(d->wake, d->now + s->p.recheck_ns);
    for (size_t i = 0; s->p.starve_after_ns && i < s->nreq; i++)
        if (!starving(s, &s->req[i], d->now))
            d->wake = min64(d->wake, s->req[i].posted_ns + s->p.starve_after_ns);
}

size_t fikit_sched_decide(struct fikit_sched *s, uint64_t now, struct fikit_grant *out,
                          size_t max, uint64_t *wake_ns)
{
    struct decision d = {.now = now, .out = out, .max = max, .wake = UINT64_MAX};
    s->watch_launches = false;
    if (s->p.policy == FIKIT_POLICY_PASSTHROUGH) {
        while (s->nreq && !full(&d))
            grant(s, &d, 0, FIKIT_GRANT_PASSTHROUGH, 0);
        *wake_ns = d.wake;
        return d.n;
    }
    grant_free_and_paused(s, &d);
    if (s->nreq == 0 || full(&d)) {
        *wake_ns = d.wake;
        return d.n;
    }
    top_level_room(s, d.top, now, &d.wake, &d.busy, &d.rooms);
    grant_overdue(s, &d);
    /* strict: only idleness matters: wake at the earliest idle deadline */
    if (s->p.policy != FIKIT_POLICY_STRICT && !full(&d)) {
        grant_fits(s, &d);
        wake_for_held(s, &d);
    }
    *wake_ns = d.wake;
    return d.n;
}

size_t fikit_sched_release_all(struct fikit_sched *s, uint64_t now, struct fikit_grant *out,
                               size_t max)
{
    size_t n = 0;
    while (s->nreq && n < max)
        emit(s, 0, FIKIT_GRANT_RELEASE, now, 0, &out[n++]);
    return n;
}
