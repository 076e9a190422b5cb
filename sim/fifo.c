#include "sim/fifo.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

int fikit_sim_grow(void **arr, size_t *cap, size_t need, size_t size)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap * 2 : 64;
    while (c < need)
        c *= 2;
    void *p = realloc(*arr, c * size);
    if (!p)
        return -ENOMEM;
    *arr = p;
    *cap = c;
    return 0;
}

int fikit_sim_fifo_push(struct fikit_sim_fifo *f, const void *e)
{
    if (f->n == f->cap) {
        /* Grown by copying in order, so the ring starts at 0 again. */
        size_t cap = f->cap ? f->cap * 2 : 64;
        unsigned char *b = malloc(cap * f->size);
        if (!b)
            return -ENOMEM;
        size_t first = f->cap - f->head < f->n ? f->cap - f->head : f->n;
        if (f->n) {
            memcpy(b, f->buf + f->head * f->size, first * f->size);
            memcpy(b + first * f->size, f->buf, (f->n - first) * f->size);
        }
        free(f->buf);
        f->buf = b;
        f->head = 0;
        f->cap = cap;
    }
    memcpy(f->buf + ((f->head + f->n) % f->cap) * f->size, e, f->size);
    f->n++;
    return 0;
}

void fikit_sim_fifo_free(struct fikit_sim_fifo *f)
{
    free(f->buf);
    size_t size = f->size;
    memset(f, 0, sizeof *f);
    f->size = size;
}
