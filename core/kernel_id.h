/* Owns: kernel identity. A kernel launch is identified by a 64-bit key made
 * from (backend, mangled symbol name, grid, block, dynamic shared memory).
 * The key holds no pointer, so it is the same in every run and process; the
 * kernel table keeps the full description behind each key so that two
 * different kernels that hash alike are detected, never merged. */
#ifndef FIKIT_CORE_KERNEL_ID_H
#define FIKIT_CORE_KERNEL_ID_H

#include <stddef.h>
#include <stdint.h>

enum fikit_backend_kind {
    FIKIT_BACKEND_NONE = 0,
    FIKIT_BACKEND_CUDA = 1,
    FIKIT_BACKEND_HIP = 2,
    FIKIT_BACKEND_OPENCL = 3,
};

const char *fikit_backend_kind_name(enum fikit_backend_kind kind);
/* Returns the kind, or FIKIT_BACKEND_NONE for an unknown name. */
enum fikit_backend_kind fikit_backend_kind_parse(const char *name);

struct fikit_kernel_desc {
    enum fikit_backend_kind backend;
    const char *name;       /* mangled symbol name */
    uint32_t grid[3];       /* blocks (CUDA/HIP) or global work size (OpenCL) */
    uint32_t block[3];      /* threads per block or local work size, 0 if unset */
    uint32_t shmem;         /* dynamic shared memory bytes */
};

/* Key 0 never names a kernel: it means "none" (e.g. no previous kernel). */
#define FIKIT_KEY_NONE 0ull

/* The hash of (backend, name): the part worth caching per kernel handle. */
uint64_t fikit_kernel_name_hash(enum fikit_backend_kind backend, const char *name);
/* Completes a key from a cached name hash and the launch geometry. */
uint64_t fikit_kernel_key_from_hash(uint64_t name_hash, const uint32_t grid[3],
                                    const uint32_t block[3], uint32_t shmem);
uint64_t fikit_kernel_key(const struct fikit_kernel_desc *desc);

/* --- The kernel table: key -> description. --- */
struct fikit_kernel_table;

struct fikit_kernel_table *fikit_kernel_table_new(void);
void fikit_kernel_table_free(struct fikit_kernel_table *t);
/* Adds desc under its key. Returns 0 when added or already present with an
 * equal description, -ENOTUNIQ when the key is taken by a different kernel
 * (a hash collision), -ENOMEM. */
int fikit_kernel_table_add(struct fikit_kernel_table *t, uint64_t key,
                           const struct fikit_kernel_desc *desc);
/* Returns the stored description (name owned by the table) or NULL. */
const struct fikit_kernel_desc *fikit_kernel_table_get(const struct fikit_kernel_table *t,
                                                       uint64_t key);
size_t fikit_kernel_table_count(const struct fikit_kernel_table *t);
/* Number of collisions detected so far. */
size_t fikit_kernel_table_collisions(const struct fikit_kernel_table *t);

#endif
