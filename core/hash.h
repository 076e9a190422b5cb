/* Owns: the 64-bit mixing functions that keys and hash tables share
 * (kernel keys in kernel_id.c, the pair map in map.c), on their own so that
 * neither module depends on the other for them. */
#ifndef FIKIT_CORE_HASH_H
#define FIKIT_CORE_HASH_H

#include <stdint.h>

/* splitmix64's finalizer: every input bit affects every output bit. */
static inline uint64_t fikit_hash_mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    x ^= x >> 31;
    return x;
}

/* A well-mixed 64-bit combination, used for keys of pairs. */
static inline uint64_t fikit_mix64(uint64_t a, uint64_t b)
{
    return fikit_hash_mix(a ^ fikit_hash_mix(b + 0x9e3779b97f4a7c15ull));
}

#endif
