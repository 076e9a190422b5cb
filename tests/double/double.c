#include "tests/double/double.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MODULE_FUNCTIONS 32
struct dbl_module {
    struct dbl_fn fns[MODULE_FUNCTIONS];
    int n;
};
static pthread_mutex_t modules_lock = PTHREAD_MUTEX_INITIALIZER;
static struct dbl_module *unloaded_module;

struct dbl_module *dbl_module_load(void)
{
    pthread_mutex_lock(&modules_lock);
    struct dbl_module *m = unloaded_module;
    unloaded_module = NULL;
    pthread_mutex_unlock(&modules_lock);
    if (!m && !(m = malloc(sizeof *m)))
        return NULL;
    memset(m, 0, sizeof *m);
    return m;
}

void dbl_module_unload(struct dbl_module *m)
{
    pthread_mutex_lock(&modules_lock);
    free(unloaded_module);
    unloaded_module = m;
    pthread_mutex_unlock(&modules_lock);
}

const struct dbl_fn *dbl_module_function(struct dbl_module *m, const struct dbl_fn *fns, size_t n,
                                         const char *name, int *missing)
{
    const struct dbl_fn *fn = dbl_fn_named(fns, n, name);
    *missing = !fn;
    if (!fn)
        return NULL;
    pthread_mutex_lock(&modules_lock);
    const struct dbl_fn *got = dbl_fn_named(m->fns, (size_t)m->n, name);
    if (!got && m->n < MODULE_FUNCTIONS) {
        m->fns[m->n] = *fn;
        got = &m->fns[m->n++];
    }
    pthread_mutex_unlock(&modules_lock);
    return got;
}

const struct dbl_fn *dbl_fn_named(const struct dbl_fn *fns, size_t n, const char *name)
{
    for (size_t i = 0; i < n; i++)
        if (strcmp(fns[i].name, name) == 0)
            return &fns[i];
    return NULL;
}

const struct dbl_fn *dbl_fn_by_host(const struct dbl_fn *fns, size_t n, const void *host)
{
    for (size_t i = 0; host && i < n; i++)
        if (fns[i].host == host)
            return &fns[i];
    return NULL;
}

/* ---------------------------------------------------- streams, capture */

struct rec {
    const struct dbl_fn *f;
    unsigned grid[3], block[3];
    void *params[8];
    char storage[8][16];
};

struct dbl_graph {
    struct rec recs[64];
    int n;
};

struct dbl_stream *dbl_stream_new(int device)
{
    struct dbl_stream *s = calloc(1, sizeof *s);
    if (s)
        s->device = device;
    return s;
}

void dbl_capture_begin(struct dbl_stream *s)
{
    s->capturing = 1;
    s->g = calloc(1, sizeof *s->g);
}

struct dbl_graph *dbl_capture_end(struct dbl_stream *s)
{
    struct dbl_graph *g = s->g;
    s->capturing = 0;
    s->g = NULL;
    return g;
}

void dbl_graph_free(struct dbl_graph *g) { free(g); }

/* ------------------------------------------------------------- launches */

static _Atomic long launches;
static _Atomic long async_kernels;

static void astream_put_kernel(struct dbl_astream *a, const struct dbl_fn *fn, const unsigned grid[3],
                               const unsigned block[3], void **params);
void dbl_drain(struct dbl_stream *s);

void dbl_run(const struct dbl_fn *fn, const unsigned grid[3], const unsigned block[3], struct dbl_stream *s,
             void **params)
{
    if (s->capturing) {
        struct rec *r = &s->g->recs[s->g->n++];
        r->f = fn;
        memcpy(r->grid, grid, sizeof r->grid);
        memcpy(r->block, block, sizeof r->block);
        for (int i = 0; i < fn->nparams; i++) {
            memcpy(r->storage[i], params[i], fn->size[i]);
            r->params[i] = r->storage[i];
        }
        return; /* recorded, not run */
    }
    if (s->async) {
        astream_put_kernel(s->async, fn, grid, block, params);
        return;
    }
    dbl_drain(s);
    atomic_fetch_add(&launches, 1);
    fn->run(params, grid, block);
}

void dbl_run_packed(const struct dbl_fn *fn, const unsigned grid[3], const unsigned block[3],
                    struct dbl_stream *s, char *buf)
{
    void *params[8];
    for (int i = 0; i < fn->nparams; i++)
        params[i] = buf + fn->offset[i];
    dbl_run(fn, grid, block, s, params);
}

void dbl_graph_launch(struct dbl_graph *g)
{
    atomic_fetch_add(&launches, 1);
    for (int i = 0; i < g->n; i++)
        g->recs[i].f->run(g->recs[i].params, g->recs[i].grid, g->recs[i].block);
}

void dbl_report(const char *env)
{
    const char *path = getenv(env);
    if (!path)
        return;
    FILE *f = fopen(path, "w");
    if (f) {
        fprintf(f, "%ld\n", atomic_load(&launches));
        fclose(f);
    }
}

/* --------------------------------------------------------------- events */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

struct dbl_event *dbl_event_new(int device)
{
    struct dbl_event *e = calloc(1, sizeof *e);
    if (!e)
        return NULL;
    e->device = device;
    pthread_mutex_init(&e->m, NULL);
    pthread_cond_init(&e->cv, NULL);
    return e;
}

/* Record gen of e completed (on s, for its device check and time). */
static void event_complete(struct dbl_event *e, uint64_t gen)
{
    pthread_mutex_lock(&e->m);
    e->t = now_ns();
    if (gen > e->done)
        e->done = gen;
    pthread_cond_broadcast(&e->cv);
    pthread_mutex_unlock(&e->m);
}

static void event_wait(struct dbl_event *e, uint64_t gen)
{
    pthread_mutex_lock(&e->m);
    while (e->done < gen)
        pthread_cond_wait(&e->cv, &e->m);
    pthread_mutex_unlock(&e->m);
}

static void astream_put_event(struct dbl_astream *a, int kind, struct dbl_event *e, uint64_t gen);

int dbl_event_record(struct dbl_event *e, struct dbl_stream *s)
{
    if (s->capturing)
        return DBL_CAPTURING;
    if (e->device >= 0 && s->device >= 0 && e->device != s->device)
        return DBL_OTHER_DEVICE;
    pthread_mutex_lock(&e->m);
    uint64_t gen = ++e->rec;
    pthread_mutex_unlock(&e->m);
    if (s->async) {
        astream_put_event(s->async, 1, e, gen);
        return 0;
    }
    dbl_drain(s);
    event_complete(e, gen);
    return 0;
}

int dbl_event_done(struct dbl_event *e)
{
    pthread_mutex_lock(&e->m);
    int done = e->rec ? e->done >= e->rec : e->t != 0;
    pthread_mutex_unlock(&e->m);
    return done;
}

void dbl_event_sync(struct dbl_event *e)
{
    pthread_mutex_lock(&e->m);
    uint64_t gen = e->rec;
    pthread_mutex_unlock(&e->m);
    event_wait(e, gen);
}

/* ------------------------------------------------- asynchronous streams */

enum { ITEM_KERNEL, ITEM_RECORD, ITEM_WAIT };
struct item {
    int kind;
    const struct dbl_fn *fn;
    unsigned grid[3], block[3];
    uint64_t store[8]; /* the kernel's parameters, copied at launch as a driver does */
    struct dbl_event *ev;
    uint64_t gen;
    struct item *next;
};

struct dbl_astream {
    struct dbl_stream *stream;
    pthread_mutex_t m;
    pthread_cond_t cv;
    struct item *head, *tail;
    int busy;
};

static void *astream_main(void *arg)
{
    struct dbl_astream *a = arg;
    pthread_mutex_lock(&a->m);
    for (;;) {
        while (!a->head)
            pthread_cond_wait(&a->cv, &a->m);
        struct item *it = a->head;
        a->busy = 1;
        pthread_mutex_unlock(&a->m);
        if (it->kind == ITEM_KERNEL) {
            nanosleep(&(struct timespec){0, 200000}, NULL);
            void *params[8];
            for (int i = 0; i < it->fn->nparams && i < 8; i++)
                params[i] = &it->store[i];
            atomic_fetch_add(&launches, 1);
            atomic_fetch_add(&async_kernels, 1);
            it->fn->run(params, it->grid, it->block);
        } else if (it->kind == ITEM_RECORD) {
            event_complete(it->ev, it->gen);
        } else {
            event_wait(it->ev, it->gen);
        }
        pthread_mutex_lock(&a->m);
        a->head = it->next;
        if (!a->head)
            a->tail = NULL;
        a->busy = 0;
        free(it);
        pthread_cond_broadcast(&a->cv);
    }
    return NULL;
}

static void astream_put(struct dbl_astream *a, struct item *it)
{
    pthread_mutex_lock(&a->m);
    if (a->tail)
        a->tail->next = it;
    else
        a->head = it;
    a->tail = it;
    pthread_cond_broadcast(&a->cv);
    pthread_mutex_unlock(&a->m);
}

static void astream_put_kernel(struct dbl_astream *a, const struct dbl_fn *fn, const unsigned grid[3],
                               const unsigned block[3], void **params)
{
    struct item *it = calloc(1, sizeof *it);
    if (!it)
        abort();
    it->kind = ITEM_KERNEL;
    it->fn = fn;
    memcpy(it->grid, grid, sizeof it->grid);
    memcpy(it->block, block, sizeof it->block);
    for (int i = 0; i < fn->nparams && i < 8; i++)
        memcpy(&it->store[i], params[i], fn->size[i] <= 8 ? fn->size[i] : 8);
    astream_put(a, it);
}

static void astream_put_event(struct dbl_astream *a, int record, struct dbl_event *e, uint64_t gen)
{
    struct item *it = calloc(1, sizeof *it);
    if (!it)
        abort();
    it->kind = record ? ITEM_RECORD : ITEM_WAIT;
    it->ev = e;
    it->gen = gen;
    astream_put(a, it);
}

struct dbl_stream *dbl_astream_new(int device, unsigned share)
{
    (void)share;
    struct dbl_stream *s = dbl_stream_new(device);
    struct dbl_astream *a = calloc(1, sizeof *a);
    pthread_t t;
    if (!s || !a)
        goto fail;
    a->stream = s;
    pthread_mutex_init(&a->m, NULL);
    pthread_cond_init(&a->cv, NULL);
    if (pthread_create(&t, NULL, astream_main, a))
        goto fail;
    pthread_detach(t);
    s->async = a;
    return s;
fail:
    free(s);
    free(a);
    return NULL;
}

void dbl_astream_sync(struct dbl_stream *s)
{
    struct dbl_astream *a = s->async;
    pthread_mutex_lock(&a->m);
    while (a->head || a->busy)
        pthread_cond_wait(&a->cv, &a->m);
    pthread_mutex_unlock(&a->m);
}

long dbl_async_kernels(void) { return atomic_load(&async_kernels); }

/* ------------------------------------------------------- stream waits */

/* The waits of the streams that run at once: (stream, event, generation).
 * A wait stays listed until it is met, whoever waits for it: a thread that
 * drains every stream's (the legacy stream) must not take one away from the
 * thread whose stream it is. */
struct pending {
    const struct dbl_stream *s;
    struct dbl_event *e;
    uint64_t gen;
};
static pthread_mutex_t pending_lock = PTHREAD_MUTEX_INITIALIZER;
static struct pending pendings[256];
static int npending;

int dbl_wait(struct dbl_stream *s, struct dbl_event *e)
{
    pthread_mutex_lock(&e->m);
    uint64_t gen = e->rec, done = e->done;
    pthread_mutex_unlock(&e->m);
    if (done >= gen)
        return 0;
    if (s->async) {
        astream_put_event(s->async, 0, e, gen);
        return 0;
    }
    int rc = -1;
    pthread_mutex_lock(&pending_lock);
    if (npending < (int)(sizeof pendings / sizeof pendings[0])) {
        pendings[npending++] = (struct pending){s, e, gen};
        rc = 0;
    }
    pthread_mutex_unlock(&pending_lock);
    return rc;
}

static int met(const struct pending *p)
{
    pthread_mutex_lock(&p->e->m);
    int done = p->e->done >= p->gen;
    pthread_mutex_unlock(&p->e->m);
    return done;
}

void dbl_drain(struct dbl_stream *s)
{
    int all = !s || s->legacy;
    for (;;) {
        pthread_mutex_lock(&pending_lock);
        struct pending p = {0};
        for (int i = 0; i < npending;) {
            if (met(&pendings[i])) {
                pendings[i] = pendings[--npending];
                continue;
            }
            if (!p.e && (all || pendings[i].s == s))
                p = pendings[i];
            i++;
        }
        pthread_mutex_unlock(&pending_lock);
        if (!p.e)
            return;
        event_wait(p.e, p.gen);
    }
}

int dbl_event_elapsed(const struct dbl_event *a, const struct dbl_event *b, float *ms)
{
    if (a->device != b->device || !a->t || !b->t)
        return DBL_OTHER_DEVICE;
    *ms = (float)((double)((int64_t)b->t - (int64_t)a->t) / 1e6);
    return 0;
}
