/* The waiter handshake (core/shm.c) between many held threads of one task and
 * a deciding thread, as interpose/gate.c and fikitd meet on a slot.
 *
 * Not a Criterion test: it runs under ThreadSanitizer too (make check-tsan).
 * HOLDERS threads, more than the slot has waiters, each post launches one
 * after another, half of them waiting by spinning and half sleeping on the
 * futex as gate.c does; one thread plays fikitd: it takes what is posted,
 * queues it, and grants it later, with a nudge now and then. Checked:
 *   - every post is granted exactly once, and only after it was posted;
 *   - a granted waiter reads back the launch it posted and the grant's
 *     reason and time (nothing torn between the two halves);
 *   - a sleeping holder is never left asleep after its grant (the test
 *     would hang: ctest's timeout);
 *   - posting with every waiter taken fails instead of sharing one.
 * Exit 0 when all hold; otherwise the first failure and exit 1. */
#include "core/shm.h"

#include <inttypes.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define HOLDERS (FIKIT_SHM_WAITERS + 4)
#define POSTS_PER_HOLDER 2000

static struct fikit_shm *seg;
static struct fikit_shm_slot *slot;
static atomic_int holders_left;
static atomic_ulong granted_total;

static void fail(const char *what, int holder, int n)
{
    fprintf(stderr, "FAIL: %s (holder %d, post %d)\n", what, holder, n);
    exit(1);
}

static void *holder(void *arg)
{
    int id = (int)(intptr_t)arg;
    bool sleeps = id % 2;
    for (int n = 0; n < POSTS_PER_HOLDER; n++) {
        uint64_t key = ((uint64_t)id << 32) | (uint64_t)n;
        struct fikit_shm_waiter *w;
        while (!(w = fikit_shm_waiter_post(slot, (uint64_t)id, key, 1000 + (uint64_t)n, key)))
            sched_yield(); /* every waiter taken by other holders */
        for (;;) {
            uint32_t bumps = atomic_load(&w->futex);
            if (fikit_shm_waiter_granted(w))
                break;
            if (!sleeps) {
                /* Spinning, yielding: 36 threads share 2 cores in CI. */
                fikit_cpu_relax();
                sched_yield();
                continue;
            }
            atomic_store(&w->sleeping, 1);
            if (atomic_load(&w->state) == FIKIT_WAITER_GRANTED) {
                atomic_store(&w->sleeping, 0);
                break;
            }
            fikit_futex_wait(&w->futex, bumps, UINT64_MAX);
            atomic_store(&w->sleeping, 0);
        }
        if (w->key != key || w->stream != (uint64_t)id || w->dur_ns != 1000 + (uint64_t)n)
            fail("the granted waiter does not hold the launch it posted", id, n);
        if (w->grant_reason != FIKIT_GRANT_FIT || w->granted_ns != key + 1)
            fail("the grant's reason or time did not reach the holder", id, n);
        fikit_shm_waiter_free(w);
    }
    atomic_fetch_sub(&holders_left, 1);
    return NULL;
}

static void *decider(void *arg)
{
    (void)arg;
    struct fikit_shm_waiter *queued[FIKIT_SHM_WAITERS];
    int nq = 0, round = 0;
    while (atomic_load(&holders_left) > 0 || nq) {
        for (int i = 0; i < FIKIT_SHM_WAITERS; i++) {
            struct fikit_shm_posted p;
            if (!fikit_shm_waiter_posted(&slot->waiters[i], &p))
                continue;
            if (p.key != p.posted_ns || p.dur_ns != 1000 + (p.key & 0xffffffffu) || p.stream != p.key >> 32)
                fail("fikitd read a torn post", (int)(p.key >> 32), (int)(p.key & 0xffffffffu));
            fikit_shm_waiter_queue(&slot->waiters[i]);
            queued[nq++] = &slot->waiters[i];
        }
        /* Grant every other round, so holders wait queued for a while and
         * some get nudged first. */
        if (++round % 2 == 0) {
            bool asleep[FIKIT_SHM_WAITERS];
            for (int i = 0; i < nq; i++)
                asleep[i] = fikit_shm_waiter_grant(queued[i], FIKIT_GRANT_FIT, queued[i]->posted_ns + 1);
            for (int i = 0; i < nq; i++)
                if (asleep[i])
                    fikit_shm_waiter_wake(queued[i]);
            atomic_fetch_add(&granted_total, (unsigned long)nq);
            nq = 0;
        } else {
            for (int i = 0; i < nq; i++)
                if (atomic_load(&queued[i]->sleeping))
                    fikit_shm_waiter_nudge(queued[i]);
        }
        sched_yield();
    }
    return NULL;
}

int main(void)
{
    if (fikit_shm_local(&seg) != 0)
        return 1;
    slot = seg->slots[0];
    /* With every waiter taken, a post fails. */
    struct fikit_shm_waiter *all[FIKIT_SHM_WAITERS];
    for (int i = 0; i < FIKIT_SHM_WAITERS; i++)
        if (!(all[i] = fikit_shm_waiter_post(slot, 0, (uint64_t)i, 1, 1)))
            fail("a free waiter was not taken", -1, i);
    if (fikit_shm_waiter_post(slot, 0, 99, 1, 1))
        fail("a post succeeded with every waiter taken", -1, FIKIT_SHM_WAITERS);
    for (int i = 0; i < FIKIT_SHM_WAITERS; i++)
        fikit_shm_waiter_free(all[i]);

    atomic_store(&holders_left, HOLDERS);
    pthread_t h[HOLDERS], d;
    pthread_create(&d, NULL, decider, NULL);
    for (int i = 0; i < HOLDERS; i++)
        pthread_create(&h[i], NULL, holder, (void *)(intptr_t)i);
    for (int i = 0; i < HOLDERS; i++)
        pthread_join(h[i], NULL);
    pthread_join(d, NULL);
    unsigned long want = (unsigned long)HOLDERS * POSTS_PER_HOLDER;
    if (atomic_load(&granted_total) != want) {
        fprintf(stderr, "FAIL: %lu grants for %lu posts\n", atomic_load(&granted_total), want);
        return 1;
    }
    printf("ok: %d holders (half sleeping on the futex) x %d posts through %d waiters: each granted once, "
           "nothing torn\n",
           HOLDERS, POSTS_PER_HOLDER, FIKIT_SHM_WAITERS);
    fikit_shm_unmap(seg);
    return 0;
}
