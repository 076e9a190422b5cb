/* core/shm.h's launch records: a task publishes each launch into its slot
 * under a seqlock (its own record first, in private memory), fikitd reads
 * and takes them into its scheduler. */
#include "core/shm.h"

#include <errno.h>
#include <string.h>

/* Field by field with relaxed atomics: the seqlock orders them, and no
 * reader or race detector ever sees a torn 64-bit value. */
static void copy_launch(struct fikit_shm_launch *dst, const struct fikit_shm_launch *src)
{
    __atomic_store_n(&dst->launches, __atomic_load_n(&src->launches, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    __atomic_store_n(&dst->last_launch_ns, __atomic_load_n(&src->last_launch_ns, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&dst->busy_until_ns, __atomic_load_n(&src->busy_until_ns, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&dst->last_key, __atomic_load_n(&src->last_key, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    __atomic_store_n(&dst->idle_after_ns, __atomic_load_n(&src->idle_after_ns, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    for (int i = 0; i < FIKIT_GAP_POINTS; i++)
        __atomic_store_n(&dst->gap.q_ns[i], __atomic_load_n(&src->gap.q_ns[i], __ATOMIC_RELAXED),
                         __ATOMIC_RELAXED);
}

static void pub_lock(struct fikit_shm_slot *slot)
{
    while (atomic_exchange_explicit(&slot->pub_lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&slot->pub_lock, memory_order_relaxed))
            fikit_cpu_relax();
}

static void pub_write(struct fikit_shm_slot *slot, const struct fikit_shm_launch *pub)
{
    uint64_t seq = atomic_load_explicit(&slot->pub_seq, memory_order_relaxed);
    atomic_store_explicit(&slot->pub_seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    copy_launch(&slot->pub, pub);
    atomic_store_explicit(&slot->pub_seq, seq + 2, memory_order_release);
}

uint64_t fikit_shm_publish_launch(struct fikit_shm_slot *slot, uint64_t now, uint64_t dur_ns,
                                  uint64_t key, const struct fikit_gap_pred *gap,
                                  uint64_t idle_after_ns)
{
    pub_lock(slot);
    /* Only two fields carry over; the rest is this launch's. */
    struct fikit_shm_launch p = {
        .launches = __atomic_load_n(&slot->pub.launches, __ATOMIC_RELAXED) + 1,
        .last_launch_ns = now,
        .busy_until_ns = fikit_busy_until(__atomic_load_n(&slot->pub.busy_until_ns, __ATOMIC_RELAXED),
                                          now, dur_ns),
        .last_key = key,
        .idle_after_ns = idle_after_ns,
        .gap = *gap,
    };
    pub_write(slot, &p);
    atomic_store_explicit(&slot->pub_lock, 0, memory_order_release);
    return p.busy_until_ns;
}

/* Between the task's own threads, as pub_lock was for the slot. */
static void own_lock(struct fikit_shm_own *own)
{
    while (atomic_exchange_explicit(&own->lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&own->lock, memory_order_relaxed))
            fikit_cpu_relax();
}

static void own_unlock(struct fikit_shm_own *own)
{
    atomic_store_explicit(&own->lock, 0, memory_order_release);
}

static void write_pub(struct fikit_shm_slot *slot, struct fikit_shm_own *own, const struct fikit_shm_launch *p,
                      uint64_t now)
{
    /* The seqlock's number from here too: one left odd in the slot by
     * another program is written over, not followed. */
    atomic_store_explicit(&slot->pub_seq, own->seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    copy_launch(&slot->pub, p);
    own->seq += 2;
    atomic_store_explicit(&slot->pub_seq, own->seq, memory_order_release);
    atomic_store_explicit(&own->published_ns, now, memory_order_relaxed);
}

uint64_t fikit_shm_publish_own(struct fikit_shm_slot *slot, struct fikit_shm_own *own, uint64_t now,
                               uint64_t dur_ns, uint64_t key, const struct fikit_gap_pred *gap,
                               uint64_t idle_after_ns, uint64_t *ticket)
{
    own_lock(own);
    uint64_t before = fikit_shm_own_busy_until(own); /* only this thread writes it, under the lock */
    /* Built in the other of the two records: the last stays for a withdrawal. */
    struct fikit_shm_launch *p = &own->rec[own->cur ^ 1];
    *p = (struct fikit_shm_launch){
        .launches = ++own->launches,
        .last_launch_ns = now,
        .busy_until_ns = fikit_busy_until(before, now, dur_ns),
        .last_key = key,
        .idle_after_ns = idle_after_ns,
        .gap = *gap,
    };
    own->cur ^= 1;
    own->prev_busy_until_ns = before;
    own->last_published = true;
    if (ticket)
        *ticket = ++own->updates;
    else
        ++own->updates;
    uint64_t busy = p->busy_until_ns; /* p is another thread's to rewrite once unlocked */
    atomic_store_explicit(&own->busy_until_ns, busy, memory_order_relaxed);
    write_pub(slot, own, p, now);
    own_unlock(own);
    return busy;
}

uint64_t fikit_shm_own_count(struct fikit_shm_own *own, uint64_t now, uint64_t dur_ns, uint64_t *ticket)
{
    own_lock(own);
    uint64_t before = fikit_shm_own_busy_until(own); /* only this thread writes it, under the lock */
    own->launches++;
    own->prev_busy_until_ns = before;
    own->last_published = false;
    if (ticket)
        *ticket = ++own->updates;
    else
        ++own->updates;
    uint64_t busy = fikit_busy_until(before, now, dur_ns);
    atomic_store_explicit(&own->busy_until_ns, busy, memory_order_relaxed);
    own_unlock(own);
    return busy;
}

void fikit_shm_own_drained(struct fikit_shm_own *own, uint64_t now)
{
    own_lock(own);
    if (fikit_shm_own_busy_until(own) > now)
        atomic_store_explicit(&own->busy_until_ns, now, memory_order_relaxed);
    own_unlock(own);
}

bool fikit_shm_withdraw_own(struct fikit_shm_slot *slot, struct fikit_shm_own *own, uint64_t ticket,
                            uint64_t now)
{
    own_lock(own);
    if (own->updates != ticket || !own->launches) {
        own_unlock(own);
        return false;
    }
    own->updates++; /* taken back once */
    own->launches--;
    atomic_store_explicit(&own->busy_until_ns, own->prev_busy_until_ns, memory_order_relaxed);
    if (own->last_published) {
        /* The record before it, with the count and the work as they are now. */
        own->cur ^= 1;
        struct fikit_shm_launch *p = &own->rec[own->cur];
        p->launches = own->launches;
        p->busy_until_ns = own->prev_busy_until_ns;
        write_pub(slot, own, p, now);
        own->last_published = false;
    }
    own_unlock(own);
    return true;
}

/* The record and the seqlock number it was written under. */
static bool read_launch(const struct fikit_shm_slot *slot, struct fikit_shm_launch *out, uint64_t *seq)
{
    for (int tries = 0; tries < 64; tries++) {
        uint64_t s1 = atomic_load_explicit(&slot->pub_seq, memory_order_acquire);
        if (s1 & 1) {
            fikit_cpu_relax();
            continue;
        }
        copy_launch(out, &slot->pub);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&slot->pub_seq, memory_order_relaxed) == s1) {
            *seq = s1;
            return true;
        }
    }
    return false;
}

bool fikit_shm_read_launch(const struct fikit_shm_slot *slot, struct fikit_shm_launch *out)
{
    uint64_t seq;
    return read_launch(slot, out, &seq);
}

int fikit_shm_take_record(const struct fikit_shm_slot *slot, struct fikit_sched *s, uint32_t id,
                          uint64_t now, uint64_t *seen)
{
    /* A new record is a new seqlock number: a withdrawn launch (a refused
     * one) republishes the record before it, whose count may equal one seen. */
    struct fikit_shm_launch pub;
    uint64_t seq;
    if (!read_launch(slot, &pub, &seq) || seq == *seen)
        return 0;
    struct fikit_launch_record rec = {.launches = pub.launches, .last_launch_ns = pub.last_launch_ns,
                                      .busy_until_ns = pub.busy_until_ns,
                                      .idle_after_ns = pub.idle_after_ns, .gap = pub.gap};
    int rc = fikit_sched_note_record(s, id, now, &rec);
    if (rc == 0)
        *seen = seq;
    return rc;
}
