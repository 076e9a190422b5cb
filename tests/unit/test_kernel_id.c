#include "core/kernel_id.h"

#include <criterion/criterion.h>
#include <errno.h>
#include <string.h>

static struct fikit_kernel_desc desc(const char *name, uint32_t gx, uint32_t bx, uint32_t shmem)
{
    return (struct fikit_kernel_desc){.backend = FIKIT_BACKEND_CUDA, .name = name,
                                      .grid = {gx, 1, 1}, .block = {bx, 1, 1}, .shmem = shmem};
}

Test(kernel_id, stable_across_runs)
{
    /* Profiles on disk are keyed by these values: they must never change
     * between builds, processes or machines. */
    struct fikit_kernel_desc d = desc("_Z6vecaddPfS_S_i", 1024, 256, 0);
    cr_assert_eq(fikit_kernel_key(&d), 0x820ce4d4326661e7ull, "got %016lx",
                 (unsigned long)fikit_kernel_key(&d));
    struct fikit_kernel_desc o = {.backend = FIKIT_BACKEND_OPENCL, .name = "saxpy",
                                  .grid = {4096, 1, 1}, .block = {0, 0, 0}};
    cr_assert_eq(fikit_kernel_key(&o), 0x6ff9a3513b11ec67ull, "got %016lx",
                 (unsigned long)fikit_kernel_key(&o));
}

Test(kernel_id, every_field_counts)
{
    struct fikit_kernel_desc base = desc("k", 64, 128, 0);
    uint64_t k = fikit_kernel_key(&base);
    struct fikit_kernel_desc v = base;
    v.name = "k2";
    cr_assert_neq(fikit_kernel_key(&v), k);
    v = base;
    v.grid[0] = 65;
    cr_assert_neq(fikit_kernel_key(&v), k);
    v = base;
    v.grid[2] = 2;
    cr_assert_neq(fikit_kernel_key(&v), k);
    v = base;
    v.block[1] = 2;
    cr_assert_neq(fikit_kernel_key(&v), k);
    v = base;
    v.shmem = 4096;
    cr_assert_neq(fikit_kernel_key(&v), k);
    v = base;
    v.backend = FIKIT_BACKEND_HIP;
    cr_assert_neq(fikit_kernel_key(&v), k);
    /* Swapping dimensions is a different launch. */
    struct fikit_kernel_desc a = {.backend = FIKIT_BACKEND_CUDA, .name = "k", .grid = {2, 3, 1}};
    struct fikit_kernel_desc b = {.backend = FIKIT_BACKEND_CUDA, .name = "k", .grid = {3, 2, 1}};
    cr_assert_neq(fikit_kernel_key(&a), fikit_kernel_key(&b));
}

Test(kernel_id, cached_name_hash_gives_same_key)
{
    struct fikit_kernel_desc d = desc("_Z4gemmPKfS0_Pfiii", 80, 256, 49152);
    uint64_t h = fikit_kernel_name_hash(d.backend, d.name);
    cr_assert_eq(fikit_kernel_key_from_hash(h, d.grid, d.block, d.shmem), fikit_kernel_key(&d));
}

Test(kernel_id, table_detects_collisions_never_merges)
{
    struct fikit_kernel_table *t = fikit_kernel_table_new();
    struct fikit_kernel_desc a = desc("alpha", 1, 1, 0);
    struct fikit_kernel_desc b = desc("beta", 1, 1, 0);
    /* Force two different kernels under one key, as a hash collision would. */
    cr_assert_eq(fikit_kernel_table_add(t, 77, &a), 0);
    cr_assert_eq(fikit_kernel_table_add(t, 77, &a), 0, "the same kernel again is fine");
    cr_assert_eq(fikit_kernel_table_add(t, 77, &b), -ENOTUNIQ);
    cr_assert_eq(fikit_kernel_table_collisions(t), 1);
    cr_assert_str_eq(fikit_kernel_table_get(t, 77)->name, "alpha", "the first one is kept");
    cr_assert_eq(fikit_kernel_table_count(t), 1);
    fikit_kernel_table_free(t);
}

Test(kernel_id, backend_names_round_trip)
{
    for (int k = FIKIT_BACKEND_CUDA; k <= FIKIT_BACKEND_OPENCL; k++)
        cr_assert_eq(fikit_backend_kind_parse(fikit_backend_kind_name(k)), k);
    cr_assert_eq(fikit_backend_kind_parse("vulkan"), FIKIT_BACKEND_NONE);
}
