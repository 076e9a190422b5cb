#include "core/sched.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static const char *const policy_names[] = {"fill", "strict", "passthrough"};

const char *fikit_policy_name(enum fikit_policy p)
{
    return (unsigned)p < 3 ? policy_names[p] : "?";
}

int fikit_policy_parse(const char *name, enum fikit_policy *out)
{
    for (int i = 0; i < 3; i++) {
        if (strcmp(name, policy_names[i]) == 0) {
            *out = (enum fikit_policy)i;
            return 0;
        }
    }
    return -EINVAL;
}

const char *fikit_grant_reason_name(enum fikit_grant_reason r)
{
    static const char *const names[] = {"free", "fit", "passthrough", "release"};
    return (unsigned)r < 4 ? names[r] : "?";
}

void fikit_sched_params_default(struct fikit_sched_params *p)
{
    p->policy = FIKIT_POLICY_FILL;
    p->substrate_cost_ns = 0;
    p->safety_margin_ns = 20 * 1000;
    p->gap_confidence = 0.1;
    p->idle_after_ns = 20 * 1000 * 1000;
    p->idle_learned = true;
    p->recheck_ns = 1000 * 1000;
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
    uint64_t end = now;
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

uint64_t fikit_idle_threshold(bool learned, uint64_t idle_after_ns, uint64_t learned_ns)
{
    if (!learned)
        return idle_after_ns;
    uint64_t twice = learned_ns > UINT64_MAX / 2 ? UINT64_MAX : 2 * learned_ns;
    return twice > idle_after_ns ? twice : idle_after_ns;
}

static uint64_t idle_threshold(const struct fikit_sched *s, const struct fikit_task_state *t)
{
    return fikit_idle_threshold(s->p.idle_learned, s->p.idle_after_ns, t->idle_after_ns);
}

/* The instant a task turns idle, if nothing more is launched. */
static uint64_t idle_deadline(const struct fikit_sched *s, const struct fikit_task_state *t)
{
    uint64_t end = t->busy_until_ns > t->last_launch_ns ? t->busy_until_ns : t->last_launch_ns;
    return end + idle_threshold(s, t);
}

bool fikit_task_is_active(uint64_t launches, uint64_t last_ns, uint64_t busy_until_ns,
                          uint64_t idle_after_ns, uint64_t now)
{
    uint64_t end = busy_until_ns > last_ns ? busy_until_ns : last_ns;
    return launches != 0 && now < end + idle_after_ns;
}

bool fikit_sched_task_active(const struct fikit_sched *s, const struct fikit_task_state *t,
                             uint64_t now)
{
    return t->used && fikit_task_is_active(t->launches, t->last_launch_ns, t->busy_until_ns,
                                           idle_threshold(s, t), now);
}

int fikit_sched_top_level(const struct fikit_sched *s, uint64_t now)
{
    int top = FIKIT_LEVELS;
    for (int i = 0; i < FIKIT_MAX_TASKS; i++) {
        const struct fikit_task_state *t = &s->tasks[i];
        if (t->level < top && fikit_sched_task_active(s, t, now))
            top = t->level;
    }
    return top;
}

bool fikit_sched_must_hold(const struct fikit_sched *s, int level, uint64_t now)
{
    return s->p.policy != FIKIT_POLICY_PASSTHROUGH && fikit_sched_top_level(s, now) < level;
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

/* Whether held request i, of the given level, may fill budget ns of room. */
static bool fits(const struct fikit_sched *s, size_t i, int level, uint64_t budget)
{
    const struct fikit_request *r = &s->req[i];
    return r->level == level && r->dur_ns != 0 && r->dur_ns <= budget && is_stream_head(s, i);
}

/* The predicted room left in the gap that the top level is in: 0 while any
 * of its tasks is busy or its gap is unknown; with several tasks on the top
 * level, the gap is the one they all share. *wake is lowered to when the
 * answer changes by itself (a busy task's work ends, a task turns idle). */
static uint64_t top_level_room(const struct fikit_sched *s, int top, uint64_t now,
                               uint64_t *wake, bool *busy)
{
    uint64_t room = UINT64_MAX;
    *busy = false;
    for (int i = 0; i < FIKIT_MAX_TASKS; i++) {
        const struct fikit_task_state *t = &s->tasks[i];
        if (t->level != top || !fikit_sched_task_active(s, t, now))
            continue;
        *wake = min64(*wake, idle_deadline(s, t));
        if (now < t->busy_until_ns) {
            *wake = min64(*wake, t->busy_until_ns);
            room = 0;
            *busy = true;
        } else {
            room = min64(room, fikit_gap_remaining(&t->gap, now - t->busy_until_ns,
                                                   s->p.gap_confidence));
        }
    }
    return room == UINT64_MAX ? 0 : room;
}

size_t fikit_sched_decide(struct fikit_sched *s, uint64_t now, struct fikit_grant *out,
                          size_t max, uint64_t *wake_ns)
{
    size_t n = 0;
    bool busy;
    *wake_ns = UINT64_MAX;
    s->watch_launches = false;
    if (s->p.policy == FIKIT_POLICY_PASSTHROUGH) {
        while (s->nreq && n < max)
            emit(s, 0, FIKIT_GRANT_PASSTHROUGH, now, 0, &out[n++]);
        return n;
    }

    /* Levels at or above the top active level run freely. A request is
     * only ever held because a strictly higher level is active. */
    int top = fikit_sched_top_level(s, now);
    for (size_t i = 0; i < s->nreq && n < max;) {
        if (s->req[i].level <= top)
            emit(s, i, FIKIT_GRANT_FREE, now, 0, &out[n++]);
        else
            i++;
    }
    if (s->nreq == 0 || n == max)
        return n;

    if (s->p.policy == FIKIT_POLICY_STRICT) {
        /* Only idleness matters: wake at the earliest idle deadline (a
         * launch meanwhile only moves it later). */
        (void)top_level_room(s, top, now, wake_ns, &busy);
        return n;
    }

    uint64_t room = top_level_room(s, top, now, wake_ns, &busy);
    uint64_t reserved_until = fikit_sched_reserved_until(s, now);
    if (room > 0) {
        uint64_t start = reserved_until;
        uint64_t end = now + room;
        uint64_t overhead = s->p.substrate_cost_ns + s->p.safety_margin_ns;
        uint64_t budget = end > start + overhead ? end - start - overhead : 0;
        for (;;) {
            /* BestPrioFit: the first level (highest priority) that has a
             * fitting stream head; within it, the longest one, unless one
             * that fitted was passed over too often: then the oldest such
             * (req[] is in posting order, so the first found). */
            size_t best = SIZE_MAX, starved = SIZE_MAX;
            int level = top + 1;
            for (; level < FIKIT_LEVELS && best == SIZE_MAX; level++) {
                for (size_t i = 0; i < s->nreq; i++) {
                    const struct fikit_request *r = &s->req[i];
                    if (!fits(s, i, level, budget))
                        continue;
                    if (best == SIZE_MAX || r->dur_ns > s->req[best].dur_ns)
                        best = i;
                    if (starved == SIZE_MAX && r->passed_over >= FIKIT_SCHED_MAX_PASSED_OVER)
                        starved = i;
                }
            }
            if (best == SIZE_MAX || n == max)
                break;
            if (starved != SIZE_MAX)
                best = starved;
            for (size_t i = 0; i < s->nreq; i++)
                if (i != best && fits(s, i, level - 1, budget))
                    s->req[i].passed_over++;
            uint64_t d = s->req[best].dur_ns;
            uint32_t grantee = s->req[best].task_id;
            emit(s, best, FIKIT_GRANT_FIT, now, end > start ? end - start : 0, &out[n++]);
            budget -= d;
            start += d;
            reserve(s, grantee, start);
            reserved_until = start;
        }
    }
    if (s->nreq) {
        s->watch_launches = !busy;
        /* Room grows when granted work ends, and the remaining-gap estimate
         * moves as the gap ages: look again. */
        if (reserved_until > now)
            *wake_ns = min64(*wake_ns, reserved_until);
        *wake_ns = min64(*wake_ns, now + s->p.recheck_ns);
    }
    return n;
}

size_t fikit_sched_release_all(struct fikit_sched *s, uint64_t now, struct fikit_grant *out,
                               size_t max)
{
    size_t n = 0;
    while (s->nreq && n < max)
        emit(s, 0, FIKIT_GRANT_RELEASE, now, 0, &out[n++]);
    return n;
}
