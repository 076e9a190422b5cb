#include "core/admit.h"
#include "core/bursts.h"

#include <string.h>

const char *fikit_admit_kind_name(enum fikit_admit_kind k)
{
    static const char *const names[] = {"go", "fill", "pace", "recheck", "hold"};
    return (unsigned)k < 5 ? names[k] : "?";
}

uint64_t fikit_fill_place(uint64_t now, const struct fikit_fill_rooms *rooms, uint64_t overhead_ns,
                          uint64_t dur_ns, uint64_t fill_until_ns, uint64_t granted_until_ns,
                          uint64_t *until)
{
    fill_until_ns &= ~FIKIT_FILL_LOCK;
    uint64_t filled = fill_until_ns > granted_until_ns ? fill_until_ns : granted_until_ns;
    uint64_t start = filled > now ? filled : now;
    uint64_t end = fikit_fill_end(rooms, now, filled);
    if (!fikit_fill_fits(start, end, overhead_ns, dur_ns))
        return 0;
    /* Even, so the lock bit stays clear (1 ns later at most). */
    *until = (start + dur_ns + 1) & ~FIKIT_FILL_LOCK;
    return end - start;
}

/* A fill by the client itself: only a measured kernel, under fill, while
 * fikitd holds nothing (what it holds goes first) and is not deciding. */
static bool try_fill(const struct fikit_view *v, uint64_t now, uint64_t dur, struct fikit_admit *out)
{
    if (!out->rooms.room || !dur || v->policy != FIKIT_POLICY_FILL || v->queued ||
        (v->fill_until_ns & FIKIT_FILL_LOCK))
        return false;
    out->room_ns = fikit_fill_place(now, &out->rooms, v->fill_overhead_ns, dur, v->fill_until_ns,
                                    v->granted_until_ns, &out->fill_until_ns);
    if (!out->room_ns)
        return false;
    out->kind = FIKIT_ADMIT_FILL;
    return true;
}

void fikit_admit(const struct fikit_view *v, uint64_t now, uint64_t dur_ns, struct fikit_admit *out)
{
    memset(out, 0, sizeof *out);
    out->kind = FIKIT_ADMIT_GO;
    if (!v->running || v->policy == FIKIT_POLICY_PASSTHROUGH || v->level <= 0)
        return;
    if (fikit_admit_nothing_above(v->level_mask, v->level))
        return; /* no higher level has a task here */

    /* What the latency budget of a level above lets this task do while
     * that level is active (core/budget.h; FREE: as configured). */
    enum fikit_lower_mode mode = (enum fikit_lower_mode)v->knobs.mode;
    uint64_t queue_bound = v->max_queued_ns;
    if (mode == FIKIT_LOWER_GAPS || (mode == FIKIT_LOWER_BESIDE && v->beside))
        queue_bound = v->knobs.inflight_ns;
    bool beside = v->beside && (mode == FIKIT_LOWER_FREE || mode == FIKIT_LOWER_BESIDE);

    /* The highest active level above, its rooms, and (for beside) how much
     * slower than its profile it runs. */
    int top = FIKIT_LEVELS;
    uint32_t slowdown = 0;
    bool all_resting = true; /* every active task above is in a pause or between bursts */
    for (size_t i = 0; i < v->ntasks; i++) {
        const struct fikit_admit_task *t = &v->tasks[i];
        if (t->level >= v->level || t->level > top)
            continue;
        struct fikit_gap_pred gap = t->gap;
        uint64_t busy = t->busy_until_ns;
        if (t->unreadable) {
            /* Being written right now: active, busy, its gap unknown. */
            memset(&gap, 0, sizeof gap);
            busy = now + 1;
            all_resting = false;
        } else {
            uint64_t idle = fikit_idle_threshold(v->idle_learned, v->idle_after_ns, t->idle_after_ns);
            if (!fikit_task_is_active(t->launches, t->last_launch_ns, t->busy_until_ns, idle, now))
                continue;
            /* Paused: a short kernel goes as if the task were idle
             * (under fill; strict waits for idleness). */
            uint64_t pause = fikit_pause_threshold(v->idle_learned && v->pauses, &t->gap);
            bool paused = pause != UINT64_MAX &&
                          !fikit_task_is_active(t->launches, t->last_launch_ns, t->busy_until_ns, pause, now);
            if (v->policy == FIKIT_POLICY_FILL && paused && fikit_fits_pause(dur_ns))
                continue;
            /* Its program waited for its work, found it done and has
             * launched nothing since (for longer than a burst's join):
             * between requests, which its gaps hold as gaps. */
            bool between = t->waited_ns && t->waited_ns >= t->last_launch_ns &&
                           now >= t->waited_ns + FIKIT_BURST_JOIN_NS;
            if (!paused && !between)
                all_resting = false;
        }
        if (t->level < top) {
            fikit_fill_rooms_init(&out->rooms, beside ? v->max_queued_ns : queue_bound);
            slowdown = 0;
        }
        top = t->level;
        if (v->beside && t->slowdown_ppm > slowdown && t->slowdown_ns + FIKIT_SLOWDOWN_FRESH_NS > now)
            slowdown = t->slowdown_ppm;
        fikit_fill_rooms_add(&out->rooms, &gap, busy, now, v->gap_confidence);
    }

    /* Where fikit confines a beside task's launches itself (mps_lower_cap
     * = launches), a launch while a level above is in a request, a fill of
     * its gaps included, goes into the share the budget's step gives, else
     * the configured one; while every level above rests (idle, in a pause,
     * or between bursts) the whole device, unless the budget's step is
     * below its top: then its share there too, as under a thread cap. */
    uint32_t share = 0;
    bool whole_at_rest = mode == FIKIT_LOWER_FREE || (v->knobs.flags & FIKIT_KNOB_WHOLE_AT_REST);
    if (v->confine_pct) {
        uint32_t pct = v->knobs.sm_pct ? v->knobs.sm_pct : v->confine_pct;
        share = pct < 100 ? pct : 0;
    }
    if (top == FIKIT_LEVELS) {
        if (!whole_at_rest)
            out->sm_pct = share;
        /* Higher levels have tasks, none active: go, but keep the queued
         * work within max_queued_ns, since a GPU does not take back what it
         * was given and a high-priority launch would wait behind all of it.
         * A beside task is paced only while a budget above holds it below
         * its top step, and then to that step's queue bound (gaps or wait:
         * max_queued_ns): what it queued at rest is what the next request
         * finds running beside it, and on an H200 tens of milliseconds of
         * a training job's work queued between requests cost resnet50 2.5x
         * while the budget kept the job waiting during them. Otherwise the
         * thread cap keeps them apart. */
        uint64_t bound = v->max_queued_ns;
        if (v->beside)
            bound = whole_at_rest ? 0 : mode == FIKIT_LOWER_BESIDE ? v->knobs.inflight_ns : v->max_queued_ns;
        if (bound && v->own_busy_until_ns > now + bound) {
            out->kind = FIKIT_ADMIT_PACE;
            out->until_ns = v->own_busy_until_ns - bound;
        }
        return;
    }
    fikit_fill_rooms_done(&out->rooms);
    uint32_t confine = all_resting && whole_at_rest ? 0 : share;
    if (mode == FIKIT_LOWER_GAPS && !queue_bound) {
        /* The budget's lowest gap step: only the room the gap is near
         * certain to leave, whatever is queued. */
        if (out->rooms.room > out->rooms.sure)
            out->rooms.room = out->rooms.sure;
        if (out->rooms.starving > out->rooms.sure)
            out->rooms.starving = out->rooms.sure;
    }

    if (mode == FIKIT_LOWER_WAIT) {
        /* The budget above leaves it nothing while that level is active:
         * its pauses and idle still let it go (above). A gaps task is held
         * at fikitd, whose fits skip it (fikit_sched_set_knobs) but whose
         * max_wait_ms still bounds the wait; a beside task, never held,
         * looks again. */
        out->kind = v->beside ? FIKIT_ADMIT_RECHECK : FIKIT_ADMIT_HOLD;
        out->until_ns = v->beside ? now + FIKIT_BESIDE_RECHECK_NS : 0;
        return;
    }
    if (beside && mode == FIKIT_LOWER_BESIDE && v->own_busy_until_ns > now + queue_bound) {
        /* Beside, within the queue bound the budget sets: what a burst
         * above finds in flight at its start. */
        out->kind = FIKIT_ADMIT_PACE;
        out->until_ns = v->own_busy_until_ns - queue_bound;
        return;
    }
    if (beside) {
        /* The MPS thread cap, or fikit's confinement of each launch, keeps
         * a beside task off the SMs the higher levels need; while the level
         * above runs slower than beside_max_slowdown allows, it shares only
         * their gaps, looking again shortly rather than being held (fikitd
         * would keep it for a gap alone). */
        bool too_slow = v->beside_max_slowdown_ppm && slowdown > v->beside_max_slowdown_ppm;
        if (!too_slow || try_fill(v, now, dur_ns, out)) {
            out->sm_pct = confine;
            return;
        }
        out->kind = FIKIT_ADMIT_RECHECK;
        out->until_ns = now + FIKIT_BESIDE_RECHECK_NS;
        return;
    }
    if (try_fill(v, now, dur_ns, out)) {
        out->sm_pct = confine;
        return;
    }
    if (v->beside) {
        /* A beside task the budget keeps to gaps looks again, as beside a
         * slowed level: fikitd would keep it for a gap alone. */
        out->kind = FIKIT_ADMIT_RECHECK;
        out->until_ns = now + FIKIT_BESIDE_RECHECK_NS;
        return;
    }
    out->kind = FIKIT_ADMIT_HOLD;
}
