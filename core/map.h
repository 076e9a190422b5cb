/* Owns: a small open-addressing hash map from a 128-bit key (two u64) to a
 * pointer. Used by the kernel table and the measurement store; not for the
 * hot path (see predict.h for the lock-free read side). Not thread-safe. */
#ifndef FIKIT_CORE_MAP_H
#define FIKIT_CORE_MAP_H

#include <stddef.h>
#include <stdint.h>

struct fikit_map_entry {
    uint64_t a, b;
    void *value; /* NULL = empty slot */
};

struct fikit_map {
    struct fikit_map_entry *slots;
    size_t cap;   /* power of two, or 0 */
    size_t count;
};

void fikit_map_init(struct fikit_map *m);
/* Frees the slots, not the values. */
void fikit_map_destroy(struct fikit_map *m);
void *fikit_map_get(const struct fikit_map *m, uint64_t a, uint64_t b);
/* Inserts or replaces; value must not be NULL. Returns 0 or -ENOMEM. */
int fikit_map_put(struct fikit_map *m, uint64_t a, uint64_t b, void *value);
/* Iteration: for (size_t i = 0; i < m->cap; i++) if (m->slots[i].value) ... */

#endif
