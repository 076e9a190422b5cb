#include "interpose/learn.h"

#include "core/clock.h"
#include "core/log.h"
#include "core/shm.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define QUEUE_CAP 4096
#define SAVE_PERIOD_NS (30ull * FIKIT_NS_PER_S)

static struct {
    pthread_mutex_t lock;
    pthread_cond_t cond;
    struct fikit_sample q[QUEUE_CAP];
    unsigned head, count;
    bool started, stop;
    pthread_t thread;
    pthread_once_t exit_once;
} L = {.lock = PTHREAD_MUTEX_INITIALIZER, .cond = PTHREAD_COND_INITIALIZER,
       .exit_once = PTHREAD_ONCE_INIT};

/* The previous processed sample of each device, for gaps. */
static struct fikit_sample last[FIKIT_CLIENT_MAX_DEVICES];
static bool have_last[FIKIT_CLIENT_MAX_DEVICES];

static int dev_index(struct fikit_client_device *d)
{
    for (int i = 0; i < atomic_load(&fikit_client.ndevs); i++)
        if (fikit_client.devs[i] == d)
            return i;
    return -1;
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

static void process(struct fikit_sample *s, uint64_t dur)
{
    struct fikit_client_device *d = s->dev;
    int di = dev_index(d);
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

    if (di >= 0 && have_last[di]) {
        struct fikit_sample *p = &last[di];
        int64_t gap;
        if (p->seq + 1 == s->seq && d->ops->marker_gap(&p->marker, &s->marker, &gap) == 0) {
            uint64_t g = gap > 0 ? (uint64_t)gap : 0;
            struct fikit_gap_pred before;
            fikit_predict_gap(d->pred, p->prev, p->key, &before);
            pthread_mutex_lock(&d->store_lock);
            if (fikit_measure_kernel(&d->store, p->key) &&
                fikit_measure_add_gap(&d->store, p->prev, p->key, g) == 0) {
                fikit_predictor_update_gap(d->pred, &d->store, p->prev, p->key);
                atomic_store(&d->idle_after_ns, fikit_measure_max_gap(&d->store));
                d->dirty = true;
            }
            pthread_mutex_unlock(&d->store_lock);
            trace_event(d, FIKIT_TRACE_GAP, p->key, g, before.q_ns[2], before.q_ns[4]);
        }
        d->ops->marker_release(&p->marker);
    }
    if (di >= 0) {
        last[di] = *s;
        have_last[di] = true;
    } else {
        d->ops->marker_release(&s->marker);
    }
}

/* Processes what is complete at the head of the queue. Returns whether the
 * head is still running. */
static bool drain(bool final)
{
    for (;;) {
        pthread_mutex_lock(&L.lock);
        if (L.count == 0) {
            pthread_mutex_unlock(&L.lock);
            return false;
        }
        struct fikit_sample s = L.q[L.head];
        pthread_mutex_unlock(&L.lock);
        uint64_t dur;
        int rc = s.dev->ops->marker_duration(&s.marker, &dur);
        if (rc == -EAGAIN && !final)
            return true;
        pthread_mutex_lock(&L.lock);
        L.head = (L.head + 1) % QUEUE_CAP;
        L.count--;
        pthread_mutex_unlock(&L.lock);
        if (rc == 0)
            process(&s, dur);
        else if (!final)
            s.dev->ops->marker_release(&s.marker);
    }
}

static void *learner_main(void *arg)
{
    (void)arg;
    uint64_t next_check = 0;
    for (;;) {
        pthread_mutex_lock(&L.lock);
        if (L.stop) {
            pthread_mutex_unlock(&L.lock);
            break;
        }
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        /* Busy device: look again soon; idle: wake on a new sample. */
        long wait_ns = L.count ? 500000 : 50000000;
        ts.tv_nsec += wait_ns;
        if (ts.tv_nsec >= 1000000000) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000;
        }
        pthread_cond_timedwait(&L.cond, &L.lock, &ts);
        pthread_mutex_unlock(&L.lock);
        drain(false);
        uint64_t now = fikit_now_ns();
        if (now >= next_check) {
            next_check = now + 100 * FIKIT_NS_PER_MS;
            fikit_client_check_daemon();
            /* Long measuring runs keep their profile current. */
            for (int i = 0; i < atomic_load(&fikit_client.ndevs); i++) {
                struct fikit_client_device *d = fikit_client.devs[i];
                if (d->dirty && now - d->saved_ns > SAVE_PERIOD_NS && d->saved_ns) {
                    fikit_client_save_profiles(false);
                    break;
                }
                if (!d->saved_ns)
                    d->saved_ns = now;
            }
        }
    }
    return NULL;
}

static void at_exit(void)
{
    pthread_mutex_lock(&L.lock);
    bool started = L.started;
    L.stop = true;
    pthread_cond_signal(&L.cond);
    pthread_mutex_unlock(&L.lock);
    if (started)
        pthread_join(L.thread, NULL);
    /* What finished is learned; what is still running is left alone. */
    drain(true);
    fikit_client_save_profiles(true);
}

static void register_exit(void) { atexit(at_exit); }

void fikit_learn_start(void)
{
    pthread_once(&L.exit_once, register_exit);
    pthread_mutex_lock(&L.lock);
    if (!L.started && !L.stop) {
        if (pthread_create(&L.thread, NULL, learner_main, NULL) == 0)
            L.started = true;
    }
    pthread_mutex_unlock(&L.lock);
}

bool fikit_learn_submit(const struct fikit_sample *s)
{
    pthread_mutex_lock(&L.lock);
    bool ok = L.count < QUEUE_CAP && !L.stop;
    if (ok) {
        L.q[(L.head + L.count) % QUEUE_CAP] = *s;
        L.count++;
        if (L.count == 1)
            pthread_cond_signal(&L.cond);
    }
    pthread_mutex_unlock(&L.lock);
    return ok;
}

unsigned fikit_learn_room(void)
{
    pthread_mutex_lock(&L.lock);
    unsigned room = QUEUE_CAP - L.count;
    pthread_mutex_unlock(&L.lock);
    return room;
}

void fikit_learn_after_fork(void)
{
    pthread_mutex_init(&L.lock, NULL);
    pthread_cond_init(&L.cond, NULL);
    L.started = false;
    L.stop = false;
    L.count = 0;
    memset(have_last, 0, sizeof have_last);
}
