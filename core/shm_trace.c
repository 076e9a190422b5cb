/* core/shm.h's trace ring: each task writes its scheduling events into
 * its slot's ring without a lock; fikitd drains them in order and counts
 * what a lapped ring lost. */
#include "core/shm.h"

#include <string.h>
#include <time.h>

void fikit_shm_trace(struct fikit_shm *shm, struct fikit_shm_slot *slot,
                     const struct fikit_trace_event *ev)
{
    if (!atomic_load_explicit(&shm->hdr->trace_on, memory_order_relaxed))
        return;
    uint64_t i = atomic_fetch_add_explicit(&slot->trace_head, 1, memory_order_acq_rel);
    /* fikitd drains on a timer, which a burst from many threads outruns:
     * the writer that takes the event at each eighth past half full rings
     * its bell, and one that would overwrite an unread event waits for it
     * to be read, a bounded time (then it overwrites, and fikitd counts the
     * loss). Tracing is for looking at scheduling; losing its events would
     * make what it shows wrong, a short wait only makes a burst slower. The
     * bell is a system call: only at these crossings, only while tracing. */
    uint64_t unread = i + 1 - atomic_load_explicit(&slot->trace_tail, memory_order_acquire);
    if (unread >= FIKIT_SHM_TRACE / 2 && unread % (FIKIT_SHM_TRACE / 8) == 0)
        fikit_shm_ring_arbiter(shm);
    if (unread > FIKIT_SHM_TRACE) {
        fikit_shm_ring_arbiter(shm);
        for (int n = 0; n < FIKIT_TRACE_WAIT_NS / FIKIT_TRACE_WAIT_STEP_NS; n++) {
            if (i + 1 - atomic_load_explicit(&slot->trace_tail, memory_order_acquire) <= FIKIT_SHM_TRACE ||
                atomic_load_explicit(&shm->hdr->daemon_state, memory_order_relaxed) != FIKIT_DAEMON_RUNNING)
                break;
            struct timespec step = {0, FIKIT_TRACE_WAIT_STEP_NS};
            nanosleep(&step, NULL);
        }
    }
    /* Each entry is a seqlock that one writer at a time owns. A writer a lap
     * ahead whose wait ran out, or one a lap behind that was descheduled
     * between taking its index and writing, comes to an entry another writer
     * may be on: each takes it by compare-and-swap into a busy mark, so no
     * two ever write one entry (their fields would mix under a valid
     * number). One that finds a later lap's number drops its event (fikitd
     * counts it lost); one that finds a writer busy waits for it (it is
     * writing, never waiting, in that window), a bounded time, since a
     * scribbled entry may stay busy for good. The fields are relaxed
     * atomics: fikitd reads them while a writer may be on the entry, and the
     * number read before and after tells it whether to keep them. */
    struct fikit_trace_event *e = &slot->trace[i % FIKIT_SHM_TRACE];
    uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
    for (int waited = 0;;) {
        if ((seq & ~FIKIT_TRACE_BUSY) > i + 1)
            return; /* a later event has the entry: this one is lost */
        if (seq & FIKIT_TRACE_BUSY) {
            if (++waited > FIKIT_TRACE_WAIT_NS / FIKIT_TRACE_WAIT_STEP_NS)
                return;
            struct timespec step = {0, FIKIT_TRACE_WAIT_STEP_NS};
            nanosleep(&step, NULL);
            seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
            continue;
        }
        if (__atomic_compare_exchange_n(&e->seq, &seq, (i + 1) | FIKIT_TRACE_BUSY, false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            break;
    }
    atomic_thread_fence(memory_order_release);
    __atomic_store_n(&e->t_ns, ev->t_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&e->key, ev->key, __ATOMIC_RELAXED);
    __atomic_store_n(&e->a, ev->a, __ATOMIC_RELAXED);
    __atomic_store_n(&e->b, ev->b, __ATOMIC_RELAXED);
    __atomic_store_n(&e->c, ev->c, __ATOMIC_RELAXED);
    __atomic_store_n(&e->type, ev->type, __ATOMIC_RELAXED);
    __atomic_store_n(&e->slot, ev->slot, __ATOMIC_RELAXED);
    __atomic_store_n(&e->reason, ev->reason, __ATOMIC_RELAXED);
    __atomic_store_n(&e->level, ev->level, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, i + 1, __ATOMIC_RELEASE);
}

/* What an entry's number says of event i: there, not yet (or being)
 * written, or replaced by a later lap's event. */
static int trace_entry_state(uint64_t seq, uint64_t i)
{
    if ((seq & ~FIKIT_TRACE_BUSY) > i + 1)
        return FIKIT_TRACE_OVERWRITTEN;
    return seq == i + 1 ? FIKIT_TRACE_READ : FIKIT_TRACE_NOT_YET;
}

int fikit_shm_trace_read(const struct fikit_shm_slot *slot, uint64_t i,
                         struct fikit_trace_event *out)
{
    const struct fikit_trace_event *e = &slot->trace[i % FIKIT_SHM_TRACE];
    uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
    int state = trace_entry_state(seq, i);
    if (state != FIKIT_TRACE_READ)
        return state;
    out->seq = seq;
    out->t_ns = __atomic_load_n(&e->t_ns, __ATOMIC_RELAXED);
    out->key = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
    out->a = __atomic_load_n(&e->a, __ATOMIC_RELAXED);
    out->b = __atomic_load_n(&e->b, __ATOMIC_RELAXED);
    out->c = __atomic_load_n(&e->c, __ATOMIC_RELAXED);
    out->type = __atomic_load_n(&e->type, __ATOMIC_RELAXED);
    out->slot = __atomic_load_n(&e->slot, __ATOMIC_RELAXED);
    out->reason = __atomic_load_n(&e->reason, __ATOMIC_RELAXED);
    out->level = __atomic_load_n(&e->level, __ATOMIC_RELAXED);
    atomic_thread_fence(memory_order_acquire);
    /* Changed meanwhile: only a later lap's writer takes an entry that
     * holds event i, so what was read is gone. */
    seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
    return seq == i + 1 ? FIKIT_TRACE_READ : FIKIT_TRACE_OVERWRITTEN;
}
