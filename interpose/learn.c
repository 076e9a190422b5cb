#include "interpose/learn.h"

#include "interpose/device.h"

#include "core/clock.h"
#include "core/log.h"
#include "core/shm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* The slot of the previous sample of d, for gaps; -1 if the table is full. */
static int last_of(struct fikit_learner *L, struct fikit_client_device *d)
{
    for (int i = 0; i < L->nlast; i++)
        if (L->last[i].dev == d)
            return i;
    if (L->nlast == FIKIT_LEARN_DEVICES)
        return -1;
    L->last[L->nlast].dev = NULL;
    return L->nlast++;
}

static void trace_event(struct fikit_client_device *d, uint16_t type, uint64_t key, uint64_t a,
                        uint64_t b, uint64_t c)
{
    struct fikit_registration *r = atomic_load(&d->reg);
    if (!r)
        return;
    struct fikit_trace_event e = {.t_ns = fikit_now_ns(), .key = key, .a = a, .b = b, .c = c,
                                  .type = type};
    fikit_shm_trace(r->shm, r->slot, &e);
}

/* For share = beside tasks below this one (gate.c). */
static void publish_slowdown(struct fikit_client_device *d, uint32_t ppm)
{
    struct fikit_registration *r = atomic_load(&d->reg);
    if (!r || !ppm)
        return;
    atomic_store_explicit(&r->slot->slowdown_ppm, ppm, memory_order_relaxed);
    atomic_store_explicit(&r->slot->slowdown_ns, fikit_now_ns(), memory_order_relaxed);
}

static void process(struct fikit_learner *L, struct fikit_sample *s, uint64_t dur)
{
    struct fikit_client_device *d = s->dev;
    int di = last_of(L, d);
    struct fikit_kernel_desc desc = {.backend = d->ops->kind, .name = s->name, .shmem = s->shmem};
    memcpy(desc.grid, s->grid, sizeof desc.grid);
    memcpy(desc.block, s->block, sizeof desc.block);
    static bool warned_collision;

    pthread_mutex_lock(&d->store_lock);
    int rc = fikit_measure_add_kernel(&d->store, s->key, &desc);
    if (rc == -ENOTUNIQ && !warned_collision) {
        warned_collision = true;
        fikit_warn("kernel key %016llx names both %s and %s; the second is not measured",
                   (unsigned long long)s->key, fikit_measure_desc(&d->store, s->key)->name, s->name);
    }
    if (rc == 0 && fikit_measure_add_duration(&d->store, s->key, dur) == 0) {
        fikit_predictor_update_kernel(d->pred, &d->store, s->key);
        d->dirty = true;
    }
    pthread_mutex_unlock(&d->store_lock);
    trace_event(d, FIKIT_TRACE_KERNEL, s->key, dur, 0, 0);
    publish_slowdown(d, fikit_slowdown_add(&d->slow, s->key, dur));

    if (di >= 0 && L->last[di].dev) {
        struct fikit_sample *p = &L->last[di];
        int64_t gap;
        if (p->seq + 1 == s->seq && d->ops->marker_gap(&p->marker, &s->marker, &gap) == 0) {
            uint64_t g = gap > 0 ? (uint64_t)gap : 0;
            struct fikit_gap_pred before;
            fikit_predict_gap(d->pred, p->prev, p->key, &before);
            pthread_mutex_lock(&d->store_lock);
            if (fikit_measure_kernel(&d->store, p->key) &&
                fikit_measure_add_gap_at(&d->store, p->prev, p->key, g, s->burst_first) == 0) {
                fikit_predictor_update_gap(d->pred, &d->store, p->prev, p->key);
                atomic_store(&d->idle_after_ns, fikit_measure_idle_gap(&d->store));
                d->dirty = true;
            }
            pthread_mutex_unlock(&d->store_lock);
            trace_event(d, FIKIT_TRACE_GAP, p->key, g, before.q_ns[2], before.q_ns[4]);
        }
        d->ops->marker_release(&p->marker);
    }
    if (di >= 0) {
        L->last[di] = *s;
    } else {
        d->ops->marker_release(&s->marker);
    }
}

void fikit_learn_drain(struct fikit_learner *L, bool final)
{
    for (;;) {
        pthread_mutex_lock(&L->lock);
        if (L->count == 0) {
            pthread_mutex_unlock(&L->lock);
            return;
        }
        struct fikit_sample s = L->q[L->head];
        pthread_mutex_unlock(&L->lock);
        uint64_t dur;
        int rc = s.dev->ops->marker_duration(&s.marker, &dur);
        if (rc == -EAGAIN && !final)
            return; /* the head is still running */
        pthread_mutex_lock(&L->lock);
        L->head = (L->head + 1) % FIKIT_LEARN_QUEUE;
        L->count--;
        pthread_mutex_unlock(&L->lock);
        if (rc == 0)
            process(L, &s, dur);
        else if (!final)
            s.dev->ops->marker_release(&s.marker);
    }
}

bool fikit_learn_wait(struct fikit_learner *L)
{
    pthread_mutex_lock(&L->lock);
    if (!L->stop) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        /* Busy device: look again soon; idle: wake on a new sample. */
        long wait_ns = L->count ? 500000 : 50000000;
        ts.tv_nsec += wait_ns;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&L->cond, &L->lock, &ts);
    }
    bool go_on = !L->stop;
    pthread_mutex_unlock(&L->lock);
    return go_on;
}

void fikit_learn_stop(struct fikit_learner *L)
{
    pthread_mutex_lock(&L->lock);
    L->stop = true;
    pthread_cond_signal(&L->cond);
    pthread_mutex_unlock(&L->lock);
}

bool fikit_learn_submit(struct fikit_learner *L, const struct fikit_sample *s)
{
    pthread_mutex_lock(&L->lock);
    bool ok = L->count < FIKIT_LEARN_QUEUE && !L->stop;
    if (ok) {
        L->q[(L->head + L->count) % FIKIT_LEARN_QUEUE] = *s;
        L->count++;
        if (L->count == 1)
            pthread_cond_signal(&L->cond);
    }
    pthread_mutex_unlock(&L->lock);
    return ok;
}

unsigned fikit_learn_room(struct fikit_learner *L)
{
    pthread_mutex_lock(&L->lock);
    unsigned room = FIKIT_LEARN_QUEUE - L->count;
    pthread_mutex_unlock(&L->lock);
    return room;
}

void fikit_learn_reset(struct fikit_learner *L)
{
    pthread_mutex_init(&L->lock, NULL);
    pthread_cond_init(&L->cond, NULL);
    L->stop = false;
    L->count = 0;
    L->nlast = 0;
}
