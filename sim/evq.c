#include "sim/evq.h"

#include "sim/fifo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

void fikit_sim_evq_init(struct fikit_sim_evq *q) { memset(q, 0, sizeof *q); }

void fikit_sim_evq_free(struct fikit_sim_evq *q)
{
    free(q->heap);
    memset(q, 0, sizeof *q);
}

static int before(const struct fikit_sim_event *x, const struct fikit_sim_event *y)
{
    return x->t < y->t || (x->t == y->t && x->seq < y->seq);
}

int fikit_sim_evq_push(struct fikit_sim_evq *q, uint64_t t, uint32_t type, uint32_t a, uint64_t b)
{
    if (fikit_sim_grow((void **)&q->heap, &q->cap, q->n + 1, sizeof *q->heap) != 0)
        return -ENOMEM;
    struct fikit_sim_event e = {.t = t, .seq = q->next_seq++, .type = type, .a = a, .b = b};
    size_t i = q->n++;
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(&e, &q->heap[parent]))
            break;
        q->heap[i] = q->heap[parent];
        i = parent;
    }
    q->heap[i] = e;
    return 0;
}

int fikit_sim_evq_pop(struct fikit_sim_evq *q, struct fikit_sim_event *out)
{
    if (!q->n)
        return 0;
    *out = q->heap[0];
    struct fikit_sim_event last = q->heap[--q->n];
    size_t i = 0;
    for (;;) {
        size_t c = 2 * i + 1;
        if (c >= q->n)
            break;
        if (c + 1 < q->n && before(&q->heap[c + 1], &q->heap[c]))
            c++;
        if (!before(&q->heap[c], &last))
            break;
        q->heap[i] = q->heap[c];
        i = c;
    }
    if (q->n)
        q->heap[i] = last;
    return 1;
}
