/* Owns: a fixed-capacity map from a handle (pointer) to an immutable value,
 * read without locks on the launch path and written under a mutex off it.
 * Used to cache per-handle facts: a kernel's name and key hash, a queue's
 * properties. Removed entries leave a tombstone, reused by a later key; a
 * value is freed only by its owner, when no reader can hold it (gate.c's
 * kernel names are interned and never freed). */
#ifndef FIKIT_INTERPOSE_PTRMAP_H
#define FIKIT_INTERPOSE_PTRMAP_H

#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>

#define FIKIT_PTRMAP_CAP 8192

/* Key and value side by side: a lookup touches one cache line, not two. */
struct fikit_ptrmap_entry {
    _Atomic uintptr_t key;
    _Atomic(void *) value;
};

struct fikit_ptrmap {
    _Alignas(64) struct fikit_ptrmap_entry e[FIKIT_PTRMAP_CAP];
    pthread_mutex_t lock;
    unsigned count; /* slots ever used, tombstones included */
};

#define FIKIT_PTRMAP_INIT {.lock = PTHREAD_MUTEX_INITIALIZER}

void *fikit_ptrmap_get(struct fikit_ptrmap *m, const void *key);
/* 0, or -ENOSPC when full (the caller then goes without the cache). */
int fikit_ptrmap_put(struct fikit_ptrmap *m, const void *key, void *value);
void fikit_ptrmap_remove(struct fikit_ptrmap *m, const void *key);
/* Forgets everything (after fork, or when handles may have been reused). */
void fikit_ptrmap_clear(struct fikit_ptrmap *m);

#endif
