#include "tests/double/double.h"

#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    if (e)
        e->device = device;
    return e;
}

int dbl_event_record(struct dbl_event *e, const struct dbl_stream *s)
{
    if (s->capturing)
        return DBL_CAPTURING;
    if (e->device >= 0 && s->device >= 0 && e->device != s->device)
        return DBL_OTHER_DEVICE;
    e->t = now_ns();
    return 0;
}

int dbl_event_elapsed(const struct dbl_event *a, const struct dbl_event *b, float *ms)
{
    if (a->device != b->device || !a->t || !b->t)
        return DBL_OTHER_DEVICE;
    *ms = (float)((double)((int64_t)b->t - (int64_t)a->t) / 1e6);
    return 0;
}
