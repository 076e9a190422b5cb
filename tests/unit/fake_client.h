/* What the gate reads of its process, set up by a test instead of by
 * libfikit.so's first launch: fikit_client (interpose/client.h) with one
 * device of the fake backend (tests/unit/fake_backend.h), its predictor
 * and measurement store, and optionally a registration in a segment the
 * test made itself. The gate finds the device by its handle and ops
 * (fikit_client_device's lookup) and never connects to a fikitd: no seam in
 * the gate is needed. Each Criterion test runs in a process of its own, so
 * the process-wide state starts clean in every test. */
#ifndef FIKIT_TESTS_FAKE_CLIENT_H
#define FIKIT_TESTS_FAKE_CLIENT_H

#include "interpose/client.h"
#include "interpose/gate.h"
#include "tests/unit/fake_backend.h"

#include <criterion/criterion.h>
#include <stdlib.h>
#include <string.h>

#define US 1000ull
#define MS 1000000ull

/* The device handle the fake's launches carry. */
static char fake_device_handle;

static const uint32_t fake_grid[3] = {4, 1, 1};
static const uint32_t fake_block[3] = {64, 1, 1};

/* The key the gate gives a launch of kernel name (fake_launch's geometry). */
static inline uint64_t fake_key(const char *name)
{
    return fikit_kernel_key_from_hash(fikit_kernel_name_hash(fake_backend_ops.kind, name), fake_grid,
                                      fake_block, 0);
}

/* The process as libfikit.so would have it after registering one device of
 * the fake backend at level (reg: its registration, or NULL: unscheduled);
 * measure: every launch is timed. */
static inline struct fikit_client_device *fake_client(int level, bool measure,
                                                      struct fikit_registration *reg)
{
    struct fikit_client *c = &fikit_client;
    c->priority = level;
    c->measure = measure;
    c->sample_period = 0;
    snprintf(c->task, sizeof c->task, "fake");
    struct fikit_client_device *d = aligned_alloc(64, sizeof *d);
    cr_assert_not_null(d);
    memset(d, 0, sizeof *d);
    d->ops = &fake_backend_ops;
    d->handle = &fake_device_handle;
    d->level = level;
    pthread_mutex_init(&d->store_lock, NULL);
    pthread_mutex_init(&d->burst_lock, NULL);
    d->pred = fikit_predictor_new();
    cr_assert_not_null(d->pred);
    cr_assert_eq(fikit_measure_init(&d->store), 0);
    atomic_store(&d->reg, reg);
    c->devs[0] = d;
    atomic_store(&c->ndevs, 1);
    atomic_store(&c->wants, FIKIT_CLIENT_WANTS_KNOWN | 1u << fake_backend_ops.kind);
    return d;
}

static inline struct fikit_launch_desc fake_desc(const void *kernel)
{
    struct fikit_launch_desc l = {.backend = fake_backend_ops.kind, .device = &fake_device_handle,
                                  .kernel = (void *)kernel};
    memcpy(l.grid, fake_grid, sizeof l.grid);
    memcpy(l.block, fake_block, sizeof l.block);
    return l;
}

/* One launch of kernel through the gate, as a hook makes it; launched:
 * whether the real call succeeded. */
static inline void fake_launch(const void *kernel, bool launched)
{
    struct fikit_launch_desc l = fake_desc(kernel);
    struct fikit_gate g;
    fikit_gate_enter(&g, &fake_backend_ops, &l);
    fikit_gate_exit(&g, &l, launched);
}

#endif
