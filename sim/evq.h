/* Owns: the event queue of fikit sim's virtual clock. Events come out in
 * time order and, at equal times, in the order they were pushed, so a run
 * is the same for the same inputs on any machine. */
#ifndef FIKIT_SIM_EVQ_H
#define FIKIT_SIM_EVQ_H

#include <stddef.h>
#include <stdint.h>

struct fikit_sim_event {
    uint64_t t;
    uint64_t seq;   /* push order: the tie-break */
    uint32_t type;  /* the owner's own numbering */
    uint32_t a;
    uint64_t b;
};

struct fikit_sim_evq {
    struct fikit_sim_event *heap;
    size_t n, cap;
    uint64_t next_seq;
};

void fikit_sim_evq_init(struct fikit_sim_evq *q);
void fikit_sim_evq_free(struct fikit_sim_evq *q);
/* 0, or -ENOMEM. */
int fikit_sim_evq_push(struct fikit_sim_evq *q, uint64_t t, uint32_t type, uint32_t a, uint64_t b);
/* 0 when empty, else 1 and *out the earliest. */
int fikit_sim_evq_pop(struct fikit_sim_evq *q, struct fikit_sim_event *out);

#endif
