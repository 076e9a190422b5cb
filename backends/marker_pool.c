#include "backends/marker_pool.h"

void *fikit_marker_pool_take(struct fikit_marker_pool *p, void *owner)
{
    void *h = NULL;
    pthread_mutex_lock(&p->lock);
    for (int i = p->n - 1; i >= 0; i--) {
        if (p->e[i].owner == owner) {
            h = p->e[i].handle;
            p->e[i] = p->e[--p->n];
            break;
        }
    }
    pthread_mutex_unlock(&p->lock);
    return h;
}

bool fikit_marker_pool_give(struct fikit_marker_pool *p, void *owner, void *handle)
{
    bool kept = false;
    pthread_mutex_lock(&p->lock);
    if (p->n < FIKIT_MARKER_POOL_MAX) {
        p->e[p->n].owner = owner;
        p->e[p->n].handle = handle;
        p->n++;
        kept = true;
    }
    pthread_mutex_unlock(&p->lock);
    return kept;
}
