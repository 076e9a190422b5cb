#include "backends/event_pair.h"

#include <errno.h>

static void *take(struct fikit_event_pair *p, void *owner)
{
    void *ev = NULL;
    pthread_mutex_lock(&p->lock);
    for (int i = p->n - 1; i >= 0; i--) {
        if (p->pool[i].owner == owner) {
            ev = p->pool[i].event;
            p->pool[i] = p->pool[--p->n];
            break;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return ev ? ev : p->ops->create(owner);
}

static void give(struct fikit_event_pair *p, void *owner, void *ev)
{
    if (!ev)
        return;
    bool kept = false;
    pthread_mutex_lock(&p->lock);
    if (p->n < FIKIT_EVENT_POOL_MAX) {
        p->pool[p->n].owner = owner;
        p->pool[p->n].event = ev;
        p->n++;
        kept = true;
    }
    pthread_mutex_unlock(&p->lock);
    if (!kept)
        p->ops->destroy(ev);
}

int fikit_event_pair_begin(struct fikit_event_pair *p, const struct fikit_launch_desc *l,
                           struct fikit_marker *m)
{
    m->ctx = l->device;
    m->a = take(p, m->ctx);
    m->b = take(p, m->ctx);
    if (!m->a || !m->b || !p->ops->record(m->a, l->stream)) {
        give(p, m->ctx, m->a);
        give(p, m->ctx, m->b);
        m->a = m->b = NULL;
        return -EIO;
    }
    return 0;
}

int fikit_event_pair_end(struct fikit_event_pair *p, const struct fikit_launch_desc *l,
                         struct fikit_marker *m)
{
    return p->ops->record(m->b, l->stream) ? 0 : -EIO;
}

int fikit_event_pair_duration(struct fikit_event_pair *p, struct fikit_marker *m, uint64_t *ns)
{
    p->ops->reader_setup(m->ctx);
    int rc = p->ops->query(m->b);
    if (rc)
        return rc;
    float ms;
    if (!p->ops->elapsed_ms(&ms, m->a, m->b))
        return -EIO;
    *ns = ms > 0 ? (uint64_t)(ms * 1e6) : 0;
    return 0;
}

int fikit_event_pair_gap(struct fikit_event_pair *p, struct fikit_marker *prev,
                         struct fikit_marker *next, int64_t *ns)
{
    if (prev->ctx != next->ctx)
        return -EXDEV; /* events of two contexts or devices have no common clock */
    p->ops->reader_setup(next->ctx);
    float ms;
    if (!p->ops->elapsed_ms(&ms, prev->b, next->a))
        return -EIO;
    *ns = (int64_t)(ms * 1e6);
    return 0;
}

void fikit_event_pair_release(struct fikit_event_pair *p, struct fikit_marker *m)
{
    give(p, m->ctx, m->a);
    give(p, m->ctx, m->b);
    m->a = m->b = NULL;
}
