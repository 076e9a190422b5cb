/* core/shm.h's held launches: the waiter handshake between a held thread
 * and fikitd (post, queue, grant, wake, nudge) over futexes, and the bell
 * that rings fikitd's arbiter. */
#include "core/shm.h"

#include "core/clock.h"

#include <errno.h>
#include <linux/futex.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

int fikit_futex_wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / FIKIT_NS_PER_S),
                          .tv_nsec = (long)(timeout_ns % FIKIT_NS_PER_S)};
    long rc = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, expected,
                      timeout_ns == UINT64_MAX ? NULL : &ts, NULL, 0);
    return rc == 0 ? 0 : -errno;
}

void fikit_futex_wake(_Atomic uint32_t *addr, int n)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, n, NULL, NULL, 0);
}

void fikit_shm_ring_arbiter(struct fikit_shm *shm)
{
    atomic_fetch_add(&shm->com->arbiter_futex, 1);
    fikit_futex_wake(&shm->com->arbiter_futex, 1);
}

struct fikit_shm_waiter *fikit_shm_waiter_post(struct fikit_shm_slot *slot, uint64_t stream,
                                               uint64_t key, uint64_t dur_ns, uint64_t now)
{
    struct fikit_shm_waiter *w = NULL;
    for (int i = 0; i < FIKIT_SHM_WAITERS && !w; i++) {
        uint32_t expect = FIKIT_WAITER_FREE;
        if (atomic_compare_exchange_strong(&slot->waiters[i].state, &expect, FIKIT_WAITER_CLAIMED))
            w = &slot->waiters[i];
    }
    if (!w)
        return NULL;
    w->stream = stream;
    w->key = key;
    w->dur_ns = dur_ns;
    w->posted_ns = now;
    w->grant_reason = 0;
    atomic_store_explicit(&w->futex, 0, memory_order_relaxed);
    atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
    atomic_store_explicit(&w->state, FIKIT_WAITER_POSTED, memory_order_release);
    return w;
}

void fikit_shm_waiter_free(struct fikit_shm_waiter *w)
{
    atomic_store_explicit(&w->state, FIKIT_WAITER_FREE, memory_order_release);
}

bool fikit_shm_waiter_posted(const struct fikit_shm_waiter *w, struct fikit_shm_posted *out)
{
    if (atomic_load_explicit(&w->state, memory_order_acquire) != FIKIT_WAITER_POSTED)
        return false;
    *out = (struct fikit_shm_posted){.stream = w->stream, .key = w->key, .dur_ns = w->dur_ns,
                                     .posted_ns = w->posted_ns};
    return true;
}

bool fikit_shm_waiter_queue(struct fikit_shm_waiter *w)
{
    uint32_t posted = FIKIT_WAITER_POSTED;
    return atomic_compare_exchange_strong_explicit(&w->state, &posted, FIKIT_WAITER_QUEUED,
                                                   memory_order_acq_rel, memory_order_relaxed);
}

bool fikit_shm_waiter_grant(struct fikit_shm_waiter *w, uint32_t reason, uint64_t at_ns)
{
    w->grant_reason = reason;
    w->granted_ns = at_ns;
    atomic_store_explicit(&w->state, FIKIT_WAITER_GRANTED, memory_order_release);
    /* Sequentially consistent, against the waiter's store of sleeping and
     * its load of state: either it sees the grant or we see it asleep. */
    atomic_fetch_add(&w->futex, 1);
    return atomic_load(&w->sleeping) != 0;
}

void fikit_shm_waiter_wake(struct fikit_shm_waiter *w)
{
    if (atomic_load(&w->sleeping))
        fikit_futex_wake(&w->futex, 1);
}

void fikit_shm_waiter_nudge(struct fikit_shm_waiter *w)
{
    atomic_fetch_add(&w->futex, 1);
    fikit_futex_wake(&w->futex, 1);
}
