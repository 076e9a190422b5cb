/* Owns: the layout of the shared memory of one device and the functions
 * that meet on it, one file a job: its creation (fikitd), mapping and
 * validation (clients) in shm.c; the seqlock through which a client
 * publishes its launches without a system call, and fikitd's reading of
 * them, in shm_publish.c; the held launches' waiter handshake in
 * shm_waiter.c; the trace ring in shm_trace.c; the parameters, the view a
 * launch admits itself by, the knobs and the fill word in shm_policy.c.
 *
 * A device's shared memory is several memfds, so that what others read is
 * written only by whoever it describes (docs/DESIGN.md "The segment"):
 *  - fikitd's header (struct fikit_shm_header): parameters, state, masks,
 *    each slot's owner (state, level, pid, generation, name). Sealed
 *    against writes after fikitd maps it; clients get a read-only fd and
 *    map it PROT_READ.
 *  - the commons (struct fikit_shm_commons): fikitd's bell and the word
 *    through which clients fill gaps by themselves, the only words every
 *    client of the device writes; fikitd bounds what it reads there.
 *  - one memfd per task (struct fikit_shm_slot), mode 0600: its launch
 *    publication, its held launches (waiters) and its trace ring. Writable
 *    by its task and fikitd; other tasks of the device get a read-only fd
 *    (FIKIT_MSG_SLOT) to read its publication.
 * fikitd validates everything it reads from a slot before use, and acts on
 * it for that task only. */
#ifndef FIKIT_CORE_SHM_H
#define FIKIT_CORE_SHM_H

#include "core/clock.h"
#include "core/admit.h"
#include "core/arbiter.h"
#include "core/bursts.h"
#include "core/gap.h"
#include "core/sched.h"
#include "core/trace.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FIKIT_SHM_MAGIC 0x314d53544b4946ull /* "FIKTSM1" */
/* 2: slots aligned to the cache line; 3: decision handshake; 4: clients fill
 * gaps themselves and pace their queue; 5: trace rings with back-pressure;
 * 6: each task's slowdown against its profile, and beside_max_slowdown */
/* 7: split into header, commons and one memfd per slot */
/* 8: the budget's knobs per slot owner */
/* 12: max_wait_ns, so a held client says fikitd's bound */
#define FIKIT_SHM_VERSION 16 /* 13: the published parameters one struct, with the substrate's switches;
                              * 14: a budget's reference holds each size's mean; 15: a slot's flags;
                              * 16: and the p99 of every size together */
#define FIKIT_SHM_SLOTS FIKIT_MAX_TASKS
#define FIKIT_SHM_WAITERS 32      /* launches of one task held at once */
#define FIKIT_SHM_TRACE 2048      /* trace ring entries per slot */

enum fikit_daemon_state {
    FIKIT_DAEMON_RUNNING = 1,
    FIKIT_DAEMON_STOPPED = 2, /* clients fall back to passthrough */
};

enum fikit_slot_state {
    FIKIT_SLOT_FREE = 0,
    FIKIT_SLOT_ACTIVE = 1,
};

enum fikit_waiter_state {
    FIKIT_WAITER_FREE = 0,
    FIKIT_WAITER_CLAIMED = 4, /* client: being filled in */
    FIKIT_WAITER_POSTED = 1,  /* client: please decide */
    FIKIT_WAITER_QUEUED = 2,  /* daemon: in the scheduler's queue */
    FIKIT_WAITER_GRANTED = 3, /* daemon: go */
};

struct fikit_shm_waiter {
    _Atomic uint32_t state;
    _Atomic uint32_t futex;   /* bumped by fikitd with a grant or a nudge, then woken */
    uint32_t grant_reason;
    _Atomic uint32_t sleeping; /* 1 while the held thread is in (or entering) futex_wait:
                                * fikitd makes the wake-up system call only then */
    _Atomic uint64_t sleep_until_ns; /* when the sleeping thread wakes by itself: fikitd
                                      * nudges it awake if a decision comes sooner */
    uint64_t stream;
    uint64_t key;
    uint64_t dur_ns;
    uint64_t posted_ns;
    uint64_t granted_ns;
};

/* What a client publishes about its last launch. Written under the slot's
 * seqlock by the client, read by fikitd and by other clients. */
struct fikit_shm_launch {
    uint64_t launches;
    uint64_t last_launch_ns;
    uint64_t busy_until_ns;
    uint64_t last_key;
    uint64_t idle_after_ns; /* the longest gap learned; 0 = unknown */
    struct fikit_gap_pred gap;
};

/* One task's memfd. Cache-line aligned, so a launch's publication
 * (pub_lock to pub) always spans the same two lines. */

/* A task registered as beside that shares only the gaps of higher levels
 * now: its launches could not be confined to its share (a green context or
 * a CU mask could not be made), so it behaves as share = gaps; fikit status
 * shows that, not what the task registered with. */
#define FIKIT_SLOT_GAPS_ONLY 1u

struct fikit_shm_slot {
    /* written by fikitd when it makes the memfd: whose it is */
    _Alignas(64) _Atomic uint64_t gen;
    uint32_t index;

    /* written by the client */
    _Alignas(64) _Atomic uint32_t pub_lock; /* between the client's own threads only */
    _Atomic uint64_t pub_seq;  /* seqlock: odd while a publication is written */
    struct fikit_shm_launch pub;
    _Atomic uint64_t holds;
    _Atomic uint64_t grants;
    _Atomic uint64_t waiters_posted; /* bumped on every post: fikitd's hint */
    _Atomic uint64_t fills;          /* launches that filled a gap by themselves */
    _Atomic uint64_t paces;          /* launches that waited for their queue to drain */
    /* How much slower the task's kernels run now than in its profile
     * (measured alone), from its learner's samples, and when that was last
     * measured: what share = beside tasks below it watch. 0: unknown. */
    _Atomic uint32_t slowdown_ppm;
    _Atomic uint64_t slowdown_ns;
    /* When the task's program last waited for its work and found it done
     * (interpose/burst.h: its burst ended); a launch since begins another.
     * What a confined task below tells the idle between requests by. */
    _Atomic uint64_t waited_ns;
    _Atomic uint32_t flags; /* FIKIT_SLOT_*: what the task says of itself */
    struct fikit_shm_waiter waiters[FIKIT_SHM_WAITERS];
    _Atomic uint64_t trace_head; /* total events written; ring index = head % size */
    _Atomic uint64_t trace_tail; /* events fikitd has read: a writer that finds the ring
                                  * half full rings fikitd's bell, so a burst of launches
                                  * is drained before it overruns the ring */
    struct fikit_trace_event trace[FIKIT_SHM_TRACE];
    /* The bursts the task measured, for fikitd's budget controller. */
    _Alignas(64) struct fikit_bursts bursts;
};

/* The scheduler's parameters that a client's launch path reads, as fikitd
 * publishes them (fikit_shm_publish_params) and every view of them takes
 * them (fikit_view_take_params): one struct, so a key a client needs is one
 * field here, one line in each of those two functions. */
#define FIKIT_SHM_IDLE_LEARNED 1u  /* idle_after_us = auto (fikit_idle_threshold) */
#define FIKIT_SHM_IDLE_PAUSES 2u   /* and pauses = on (fikit_pause_threshold) */
#define FIKIT_SHM_SWITCHES 4u      /* the substrate switches contexts (time-slicing) */
struct fikit_shm_params {
    _Atomic uint32_t policy;          /* enum fikit_policy */
    _Atomic uint32_t flags;           /* FIKIT_SHM_IDLE_LEARNED | _IDLE_PAUSES | _SWITCHES */
    _Atomic uint64_t idle_after_ns;   /* the idle threshold; when learned, its floor */
    _Atomic uint64_t spin_ns;         /* how long before a decision waiters spin, not sleep */
    _Atomic uint64_t fill_overhead_ns; /* substrate cost + safety margin */
    _Atomic uint32_t gap_confidence_ppm;
    _Atomic uint32_t beside_max_slowdown_ppm; /* share = beside tasks share only gaps above it; 0: never */
    _Atomic uint64_t max_queued_ns;   /* lower-level work queued ahead; 0: no bound */
    _Atomic uint64_t max_wait_ns;     /* a held launch goes at a gap after this; 0: never */
};

/* A slot's owner, as fikitd alone writes it. gen tells a reused slot from
 * its previous owner: a client reads another task's slot only through a
 * mapping made for the same gen. */
struct fikit_shm_owner {
    _Atomic uint32_t state;
    int32_t level;
    int32_t pid;
    uint32_t pad;
    _Atomic uint64_t gen;
    char name[64];
    /* What the latency budget of a level above lets this task do while
     * that level is active (core/budget.h), set by fikitd's controller:
     * zero, as configured. Relaxed words: a launch that reads a mix of an
     * old and a new step acts on either for one launch. */
    _Atomic uint32_t knob_mode;
    _Atomic uint32_t knob_sm_pct;
    _Atomic uint64_t knob_inflight_ns;
    _Atomic uint32_t knob_flags;
    uint32_t pad2;
};

/* fikitd's memfd: clients map it read-only. */
struct fikit_shm_header {
    uint64_t magic;
    uint32_t version;
    uint32_t nslots;
    uint64_t size;
    uint64_t generation;          /* fikitd's start time: a restarted daemon differs */
    _Atomic uint32_t daemon_state;
    _Atomic uint32_t level_mask;  /* bit L: a registered task has level L */
    _Atomic uint64_t slot_mask;   /* bit S: slot S holds a registered task */
    _Atomic uint32_t trace_on;    /* clients write their trace ring while set */
    struct fikit_shm_params params;
    _Atomic uint64_t next_decision_ns; /* when fikitd next decides for held launches; 0: none due */
    _Atomic uint64_t pass_begun;  /* the arbiter's passes over the slots: the number of the */
    _Atomic uint64_t pass_done;   /* last one started, and of the last one finished */
    /* A lower-level launch that finds the top level in a gap, and nothing
     * held in fikitd's queue, fills the gap by itself (no round trip):
     * under the same fit test as fikitd's (fikit_fill_fits, with the
     * published parameters) it advances fill_until_ns, the predicted end of the
     * lower-level work clients put into a gap, behind granted_until_ns,
     * that of the work fikitd granted (dropped when its grantee dies).
     * fikitd locks fill_until_ns (its low bit) while it decides, so the two
     * never give the same room twice. fill_until_ns is in the commons. */
    _Atomic uint32_t queued;           /* held launches in fikitd's queue after its last pass */
    _Atomic uint64_t granted_until_ns;
    char device_key[128];
    char device_model[128];
    struct fikit_shm_owner owner[FIKIT_SHM_SLOTS];
};

/* The words every client of the device writes: its own page. */
struct fikit_shm_commons {
    _Alignas(64) _Atomic uint32_t arbiter_futex; /* bumped and woken by a client that posts */
    _Alignas(64) _Atomic uint64_t fill_until_ns;
    /* For each level, when the work its tasks queued last ends, as they
     * predicted it (fikit_shm_note_level_busy): written by every launch of
     * a task with a level above it, never by the top level's path; what a
     * burst above is told quiet by (fikit_shm_quiet_since). */
    _Alignas(64) _Atomic uint64_t level_busy_until_ns[FIKIT_LEVELS];
};

#define FIKIT_SHM_SIZE sizeof(struct fikit_shm_header)
#define FIKIT_SHM_COMMONS_SIZE 4096ul
#define FIKIT_SHM_SLOT_SIZE ((sizeof(struct fikit_shm_slot) + 4095) & ~4095ul)
_Static_assert(sizeof(struct fikit_shm_commons) <= FIKIT_SHM_COMMONS_SIZE, "commons fit a page");

/* One process's view of a device's shared memory: the header, the commons,
 * and where each slot is mapped. slots[s] is fixed for the view's life (an
 * address range kept for it); what is mapped there is the memfd of owner
 * generation mapped[s] (0: nothing, and the range must not be read). */
struct fikit_shm {
    struct fikit_shm_header *hdr;
    struct fikit_shm_commons *com;
    struct fikit_shm_slot *slots[FIKIT_SHM_SLOTS];
    _Atomic uint64_t mapped[FIKIT_SHM_SLOTS];
    void *range;        /* slots' address range */
    bool local;         /* fikit_shm_local: plain memory, every slot there */
};

/* fikitd: the header's memfd, filled in, mapped read-write and then sealed
 * against any other write (F_SEAL_FUTURE_WRITE, mode 0400), with *hdr_ro a
 * read-only fd of it to hand to clients; the commons' memfd (*com_fd). */
int fikit_shm_create(const char *device_key, const char *device_model, uint64_t generation,
                     int *hdr_ro, int *com_fd, struct fikit_shm **out);
/* fikitd: a new memfd for slot s of owner generation gen (mode 0600),
 * mapped read-write at shm->slots[s], in *fd. The header's owner is not
 * touched (fikitd publishes it once the slot is set up). */
int fikit_shm_slot_create(struct fikit_shm *shm, int s, uint64_t gen, int *fd);
/* fikitd: unmaps slot s (its range kept for the next owner). */
void fikit_shm_slot_drop(struct fikit_shm *shm, int s);
/* A read-only fd of the memfd fd (reopened through /proc/self/fd). */
int fikit_shm_reopen_ro(int fd);
/* client: maps the header (read-only) and the commons received from fikitd
 * and checks the header. */
int fikit_shm_map(int hdr_fd, int com_fd, struct fikit_shm **out);
/* client: maps slot s of generation gen from fd at shm->slots[s], read-write
 * (its own) or read-only (another task's), replacing whatever was there. */
int fikit_shm_map_slot(struct fikit_shm *shm, int s, uint64_t gen, int fd, bool writable);
/* The same view in plain memory, every slot present (gen s + 1), header
 * filled in as fikit_shm_create does: for fikit sim and the tests. */
int fikit_shm_local(struct fikit_shm **out);
/* In a local segment, what fikitd's registration of a program writes: slot
 * s active for a task of level, its bits in slot_mask and level_mask, and
 * fikitd running (fikit sim, fikit replay and the tests). */
void fikit_shm_local_register(struct fikit_shm *shm, int s, int level);
void fikit_shm_unmap(struct fikit_shm *shm);

/* fikitd (and fikit sim): what the budget lets slot s do (core/budget.h). */
void fikit_shm_set_knobs(struct fikit_shm *shm, int s, const struct fikit_lower_knobs *k);
void fikit_shm_get_knobs(const struct fikit_shm *shm, int s, struct fikit_lower_knobs *k);

/* The launch path's publication (the client's threads serialise on the
 * slot's pub_lock; no system call): counts the launch,
 * extends the predicted busy time by dur_ns from now, and records what gap
 * is expected after it. Returns the new predicted end of the task's work. */
uint64_t fikit_shm_publish_launch(struct fikit_shm_slot *slot, uint64_t now, uint64_t dur_ns,
                                  uint64_t key, const struct fikit_gap_pred *gap,
                                  uint64_t idle_after_ns);
/* A client's own record of what it publishes, in its private memory: the
 * slot shows a copy. Only the task and fikitd write its slot now; the
 * record keeps the launch path from reading back its own slot (one cache
 * line fewer) and from trusting a slot fikitd may have reset. */
struct fikit_shm_own {
    _Atomic uint32_t lock;  /* between the task's own threads, as pub_lock was */
    uint64_t seq;           /* the seqlock number it last wrote */
    uint64_t launches;
    _Atomic uint64_t busy_until_ns; /* read by the task's pacing */
    _Atomic uint64_t published_ns;  /* when it last wrote the slot */
    /* What a launch the runtime refuses takes back (fikit_shm_withdraw_own):
     * the records it published, the last (rec[cur]) and the one before;
     * the count of its updates, a launch's ticket; and what the last update
     * found. */
    struct fikit_shm_launch rec[2];
    unsigned cur;
    uint64_t updates;
    uint64_t prev_busy_until_ns;
    bool last_published;
};
/* fikit_shm_publish_launch from the task's own record: the slot is only
 * written. Returns the new predicted end of the task's work; *ticket (if
 * not NULL) names this update for fikit_shm_withdraw_own. */
uint64_t fikit_shm_publish_own(struct fikit_shm_slot *slot, struct fikit_shm_own *own, uint64_t now,
                               uint64_t dur_ns, uint64_t key, const struct fikit_gap_pred *gap,
                               uint64_t idle_after_ns, uint64_t *ticket);
/* The launch counted in the task's own record only, the slot left as it
 * was: for a launch that no task reads for scheduling (no lower level on
 * the device, tracing off; gate.c decides), which then costs no predicted
 * gap and no shared cache line. Returns the new predicted end of its work. */
uint64_t fikit_shm_own_count(struct fikit_shm_own *own, uint64_t now, uint64_t dur_ns, uint64_t *ticket);
/* The task's program waited for its work and found it done (a wait that
 * ended its burst, interpose/burst.h): nothing of it is queued any more,
 * however long its kernels were predicted to run, so its pacing
 * (max_queued_us) stops waiting for that prediction. Only its own record:
 * what it published stays for the others until its next launch. */
void fikit_shm_own_drained(struct fikit_shm_own *own, uint64_t now);
/* The launch of update ticket was refused by the runtime: it is no launch.
 * Its count and its predicted work come off the task's record and, if it
 * was published, the record before it is published again (with the count
 * one less), so nobody waits on work that never ran. Only the task's latest
 * update can be taken back (another thread's launch since: false, and the
 * refused one stays counted). */
bool fikit_shm_withdraw_own(struct fikit_shm_slot *slot, struct fikit_shm_own *own, uint64_t ticket,
                            uint64_t now);
/* A launch of a task at level (with a level above it) whose queued work
 * now ends at busy_until_ns (its own record's): its level's word grows
 * to that at least. */
static inline void fikit_shm_note_level_busy(struct fikit_shm_commons *com, int level, uint64_t busy_until_ns)
{
    if (level < 0 || level >= FIKIT_LEVELS)
        return;
    _Atomic uint64_t *w = &com->level_busy_until_ns[level];
    uint64_t seen = atomic_load_explicit(w, memory_order_relaxed);
    while (seen < busy_until_ns &&
           !atomic_compare_exchange_weak_explicit(w, &seen, busy_until_ns, memory_order_relaxed,
                                                  memory_order_relaxed))
        ;
}

/* Whether a burst of a task at level was quiet: no task below it had work
 * queued or running since since_ns (fikit_quiet_since), as their launches
 * predicted it (a kernel that runs past its prediction is not seen). Asked
 * when the burst ends. */
static inline bool fikit_shm_quiet_since(const struct fikit_shm_commons *com, int level, uint64_t since_ns)
{
    for (int l = level + 1; l < FIKIT_LEVELS; l++)
        if (atomic_load_explicit(&com->level_busy_until_ns[l], memory_order_relaxed) >= since_ns)
            return false;
    return level >= 0;
}

/* How often a task whose launches nobody reads still publishes one, so
 * that fikit status and a lower task that registers later see it at most
 * this late. */
#define FIKIT_SHM_UNWATCHED_PUBLISH_NS (1 * FIKIT_NS_PER_MS)
static inline uint64_t fikit_shm_own_published(const struct fikit_shm_own *own)
{
    return atomic_load_explicit(&own->published_ns, memory_order_relaxed);
}

static inline uint64_t fikit_shm_own_busy_until(const struct fikit_shm_own *own)
{
    return atomic_load_explicit(&own->busy_until_ns, memory_order_relaxed);
}

/* A consistent copy of a slot's publication; false if it kept changing. */
bool fikit_shm_read_launch(const struct fikit_shm_slot *slot, struct fikit_shm_launch *out);

/* fikitd (and the models): the scheduler's parameters that clients read,
 * with the spin in force, into pub (the header's params). */
void fikit_shm_publish_params(struct fikit_shm_params *pub, const struct fikit_sched_params *p,
                              uint64_t spin_ns);
/* The published parameters into a view (every rule's parameter; the
 * caller reads the policy first, since a top-level launch needs nothing
 * else): what fikit_shm_view and fikit replay's view both take. */
void fikit_view_take_params(struct fikit_view *v, const struct fikit_shm_params *pub);

/* A client: the snapshot of the segment that fikit_admit decides on, for a
 * launch of the task in slot_index at level (beside: its share = beside is
 * in force). Reads the header and the slots of higher levels only (none
 * when no higher level has a task: the high-priority path's one load);
 * tasks must hold FIKIT_SHM_SLOTS entries. A higher slot not mapped here
 * for its owner's generation counts as unreadable (active, busy) and its
 * bit is set in *unmapped (may be NULL), for the caller to fetch. */
void fikit_shm_view(const struct fikit_shm *shm, int slot_index, int level, bool beside,
                    struct fikit_view *v, struct fikit_admit_task *tasks, uint64_t *unmapped);

/* How long a held launch waits for fikitd to take it into its queue (it
 * does in its next pass: 1.7 ms at p99 with 512 threads holding on 2
 * cores) before it goes unscheduled: fikitd's queue full, fikitd stopped
 * (SIGSTOP), or the waiter written by another program. */
#define FIKIT_PICKUP_WAIT_NS (2 * FIKIT_NS_PER_S)

/* The waiter handshake, both halves (a held launch and fikitd). A waiter
 * goes FREE -> CLAIMED -> POSTED (the client) -> QUEUED -> GRANTED (fikitd)
 * -> FREE (the client). The futex word counts grants and nudges, so neither
 * is lost between a waiter's last look and its wait; fikitd makes the
 * wake-up system call only for a waiter that says it sleeps. */

/* Client: claims a free waiter of the slot and posts the launch in it.
 * NULL when every waiter is taken by other threads of the task. */
struct fikit_shm_waiter *fikit_shm_waiter_post(struct fikit_shm_slot *slot, uint64_t stream,
                                               uint64_t key, uint64_t dur_ns, uint64_t now);
/* Client: whether its launch was granted (an acquire: the grant's fields
 * are then visible). */
static inline bool fikit_shm_waiter_granted(struct fikit_shm_waiter *w)
{
    return atomic_load_explicit(&w->state, memory_order_acquire) == FIKIT_WAITER_GRANTED;
}
/* Client: after its granted launch went, or when it gives up waiting. */
void fikit_shm_waiter_free(struct fikit_shm_waiter *w);

/* What a client posted, as fikitd reads it. */
struct fikit_shm_posted {
    uint64_t stream, key, dur_ns, posted_ns;
};
/* fikitd: true (and *out) if w holds a posted launch not yet queued. */
bool fikit_shm_waiter_posted(const struct fikit_shm_waiter *w, struct fikit_shm_posted *out);
/* fikitd: the posted launch is in the scheduler's queue now; false if
 * its client took it back meanwhile (it waited FIKIT_PICKUP_WAIT_NS). */
bool fikit_shm_waiter_queue(struct fikit_shm_waiter *w);
/* fikitd: grants it (reason, at); returns whether the waiter said it sleeps
 * (then fikit_shm_waiter_wake it, after every grant of the decision). */
bool fikit_shm_waiter_grant(struct fikit_shm_waiter *w, uint32_t reason, uint64_t at_ns);
/* fikitd: the wake-up system call, made only if the waiter sleeps. */
void fikit_shm_waiter_wake(struct fikit_shm_waiter *w);
/* fikitd: wakes a queued sleeping waiter ahead of a sooner decision. */
void fikit_shm_waiter_nudge(struct fikit_shm_waiter *w);

/* fikitd, around a decision: takes fill_until_ns (clients then hold
 * instead of filling) and returns its value; gives it back with
 * granted_until_ns set to the end of the work it granted. */
uint64_t fikit_shm_fill_lock(struct fikit_shm *shm, uint64_t now);
void fikit_shm_fill_unlock(struct fikit_shm *shm, uint64_t granted_until);
/* The furthest ahead of now that fikitd takes the clients' fill word to
 * reach: every client of a device writes it, so a value further out (no
 * fill of a gap reaches it) is read as this far. */
#define FIKIT_FILL_AHEAD_MAX_NS (100 * FIKIT_NS_PER_MS)
/* fikitd: takes the newest launch record of the task in slot (scheduler
 * task id) into the scheduler, if one was published since *seen (the
 * seqlock number of the last taken, 0 at first); *seen follows it. 0 (taken or nothing new), -EINVAL (implausible: ignored,
 * *seen unchanged) or -ENOENT. */
int fikit_shm_take_record(const struct fikit_shm_slot *slot, struct fikit_sched *s, uint32_t id,
                          uint64_t now, uint64_t *seen);

/* fikitd's decision at now, around the clients' fills: with launches held,
 * it takes fill_until_ns (clients then hold instead of filling, and what
 * they filled counts as taken), decides, and gives the word back with the
 * end of what it granted; the queue length is published for the clients.
 * apply gets the grants in batches (mark them, then wake the sleepers).
 * Returns when the scheduler next wants to decide (*wake_ns as from
 * fikit_sched_decide). fikitd's arbiter and fikit sim's both call it. */
void fikit_shm_decide(struct fikit_shm *shm, struct fikit_sched *s, uint64_t now,
                      void (*apply)(void *user, const struct fikit_grant *g, size_t n), void *user,
                      uint64_t *wake_ns);

/* A client (and fikit sim's): takes the room that fikit_admit placed its
 * fill in (FIKIT_ADMIT_FILL: fikit_fill_place from the view's
 * fill_until_ns, seen) by moving the fill word from seen to until. False
 * when anyone moved it since the view was taken (another client's fill,
 * fikitd's lock or its unlock): then the launch looks again. The one way a
 * gap is taken. Inline: it is the launch path's, one compare-and-swap. */
static inline bool fikit_shm_fill_commit(struct fikit_shm *shm, uint64_t seen, uint64_t until)
{
    if (seen & FIKIT_FILL_LOCK)
        return false; /* fikitd was deciding: fikit_admit does not fill then */
    return atomic_compare_exchange_strong(&shm->com->fill_until_ns, &seen, until);
}

/* A short pause inside a spin loop. */
static inline void fikit_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ volatile("yield");
#endif
}

/* Futex wait/wake on a word of the shared segment (across processes). */
int fikit_futex_wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns);
void fikit_futex_wake(_Atomic uint32_t *addr, int n);
/* Bumps and wakes fikitd's arbiter: a launch was posted, held work may go,
 * or a trace ring needs draining. */
void fikit_shm_ring_arbiter(struct fikit_shm *shm);

/* Appends to a slot's trace ring if tracing is on. Rings fikitd's bell as
 * the unread part passes half the ring, and waits (at most
 * FIKIT_TRACE_WAIT_NS) rather than overwrite an event fikitd has not read. */
#define FIKIT_TRACE_WAIT_NS 10000000       /* 10 ms of sleeps (more with timer slack) */
#define FIKIT_TRACE_WAIT_STEP_NS 20000     /* 20 us each */
/* In a trace entry's number while its writer is on it (index + 1 | BUSY). */
#define FIKIT_TRACE_BUSY (1ull << 63)
void fikit_shm_trace(struct fikit_shm *shm, struct fikit_shm_slot *slot,
                     const struct fikit_trace_event *ev);
/* Reads ring entry i (a count, not an index). */
enum {
    FIKIT_TRACE_READ = 1,
    FIKIT_TRACE_NOT_YET = 0,      /* not written yet, or being written: try again later */
    FIKIT_TRACE_OVERWRITTEN = -1, /* a later event took its place: lost */
};
int fikit_shm_trace_read(const struct fikit_shm_slot *slot, uint64_t i,
                         struct fikit_trace_event *out);

#endif
