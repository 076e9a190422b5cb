/* Owns: the growable arrays and first-in first-out rings of fikit sim
 * (a task's waiting requests and its launched kernels, a device context's
 * queue, a workload's steps), so each grows the same way. */
#ifndef FIKIT_SIM_FIFO_H
#define FIKIT_SIM_FIFO_H

#include <stddef.h>

/* Makes *arr hold at least need elements of size bytes (*cap of them now),
 * doubling from 64. 0, or -ENOMEM with *arr unchanged. */
int fikit_sim_grow(void **arr, size_t *cap, size_t need, size_t size);

/* A ring of elements of one size; zeroed, it is an empty ring of size 0:
 * set .size before the first push. */
struct fikit_sim_fifo {
    unsigned char *buf;
    size_t size;          /* bytes an element */
    size_t head, n, cap;  /* elements */
};

/* Appends a copy of *e. 0, or -ENOMEM with the ring unchanged. */
int fikit_sim_fifo_push(struct fikit_sim_fifo *f, const void *e);
/* The oldest element, NULL when empty. */
static inline void *fikit_sim_fifo_front(const struct fikit_sim_fifo *f)
{
    return f->n ? f->buf + f->head * f->size : NULL;
}
/* Drops the oldest element (the ring is not empty). */
static inline void fikit_sim_fifo_pop(struct fikit_sim_fifo *f)
{
    f->head = (f->head + 1) % f->cap;
    f->n--;
}
void fikit_sim_fifo_free(struct fikit_sim_fifo *f);

#endif
