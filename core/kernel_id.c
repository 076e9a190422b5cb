#include "core/kernel_id.h"

#include "core/hash.h"
#include "core/map.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const char *const backend_names[] = {"none", "cuda", "hip", "opencl"};

const char *fikit_backend_kind_name(enum fikit_backend_kind kind)
{
    if ((unsigned)kind < sizeof backend_names / sizeof backend_names[0])
        return backend_names[kind];
    return "?";
}

enum fikit_backend_kind fikit_backend_kind_parse(const char *name)
{
    for (unsigned i = 1; i < sizeof backend_names / sizeof backend_names[0]; i++)
        if (strcmp(name, backend_names[i]) == 0)
            return (enum fikit_backend_kind)i;
    return FIKIT_BACKEND_NONE;
}

uint64_t fikit_kernel_name_hash(enum fikit_backend_kind backend, const char *name)
{
    /* FNV-1a over the bytes of the name, seeded by the backend. */
    uint64_t h = 0xcbf29ce484222325ull ^ (uint64_t)backend;
    for (const unsigned char *p = (const unsigned char *)name; *p; p++) {
        h ^= *p;
        h *= 0x100000001b3ull;
    }
    return h;
}

uint64_t fikit_kernel_key_from_hash(uint64_t name_hash, const uint32_t grid[3],
                                    const uint32_t block[3], uint32_t shmem)
{
    /* One mixing round per 64-bit word of geometry: this runs on every
     * launch, and each round already spreads every input bit. */
    uint64_t h = name_hash;
    h = fikit_hash_mix(h ^ (((uint64_t)grid[0] << 32) | grid[1]));
    h = fikit_hash_mix(h ^ (((uint64_t)grid[2] << 32) | block[0]));
    h = fikit_hash_mix(h ^ (((uint64_t)block[1] << 32) | block[2]));
    h = fikit_hash_mix(h ^ ((uint64_t)shmem | 0x5348000000000000ull));
    return h == FIKIT_KEY_NONE ? 1 : h;
}

uint64_t fikit_kernel_key(const struct fikit_kernel_desc *d)
{
    return fikit_kernel_key_from_hash(fikit_kernel_name_hash(d->backend, d->name), d->grid,
                                      d->block, d->shmem);
}

struct fikit_kernel_table {
    struct fikit_map map;
    size_t collisions;
};

struct fikit_kernel_table *fikit_kernel_table_new(void)
{
    struct fikit_kernel_table *t = calloc(1, sizeof *t);
    if (t)
        fikit_map_init(&t->map);
    return t;
}

void fikit_kernel_table_free(struct fikit_kernel_table *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->map.cap; i++) {
        struct fikit_kernel_desc *d = t->map.slots[i].value;
        if (d) {
            free((char *)d->name);
            free(d);
        }
    }
    fikit_map_destroy(&t->map);
    free(t);
}

static int desc_equal(const struct fikit_kernel_desc *x, const struct fikit_kernel_desc *y)
{
    return x->backend == y->backend && strcmp(x->name, y->name) == 0 &&
           memcmp(x->grid, y->grid, sizeof x->grid) == 0 &&
           memcmp(x->block, y->block, sizeof x->block) == 0 && x->shmem == y->shmem;
}

int fikit_kernel_table_add(struct fikit_kernel_table *t, uint64_t key,
                           const struct fikit_kernel_desc *desc)
{
    const struct fikit_kernel_desc *old = fikit_map_get(&t->map, key, 0);
    if (old) {
        if (desc_equal(old, desc))
            return 0;
        t->collisions++;
        return -ENOTUNIQ;
    }
    struct fikit_kernel_desc *copy = malloc(sizeof *copy);
    char *name = strdup(desc->name);
    if (!copy || !name) {
        free(copy);
        free(name);
        return -ENOMEM;
    }
    *copy = *desc;
    copy->name = name;
    int rc = fikit_map_put(&t->map, key, 0, copy);
    if (rc) {
        free(name);
        free(copy);
    }
    return rc;
}

const struct fikit_kernel_desc *fikit_kernel_table_get(const struct fikit_kernel_table *t,
                                                       uint64_t key)
{
    return fikit_map_get(&t->map, key, 0);
}

size_t fikit_kernel_table_count(const struct fikit_kernel_table *t) { return t->map.count; }

size_t fikit_kernel_table_collisions(const struct fikit_kernel_table *t) { return t->collisions; }
