/* Owns: what fikit has measured about one task: per kernel key the duration
 * statistic, per (previous key, key) pair the idle gap that followed the
 * second kernel until the task's next kernel reached the device, and per
 * launch count how long the task's bursts of that many launches took alone
 * (first launch after a wait to the end of the wait that found them done:
 * what a latency budget is judged against). Two stores
 * merge (a profile loaded from disk plus what a run learned). Not
 * thread-safe: the owner serialises access. */
#ifndef FIKIT_CORE_MEASURE_H
#define FIKIT_CORE_MEASURE_H

#include "core/kernel_id.h"
#include "core/map.h"
#include "core/stat.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct fikit_kernel_stats {
    uint64_t key;
    struct fikit_stat duration;
};

struct fikit_gap_stats {
    uint64_t prev; /* FIKIT_KEY_NONE for the first kernel of a task */
    uint64_t key;
    struct fikit_stat gap;
};

struct fikit_burst_stats {
    uint32_t launches;
    struct fikit_stat len;
};

struct fikit_measure_store {
    struct fikit_kernel_table *names;
    struct fikit_map kernels; /* (key, 0) -> struct fikit_kernel_stats */
    struct fikit_map gaps;    /* (prev, key) -> struct fikit_gap_stats */
    struct fikit_map bursts;  /* (launches, 0) -> struct fikit_burst_stats */
    /* Gaps by where they fell: inside a burst (no wait of the program ended
     * one between the two launches), the longest; and how many came after a
     * wait that ended a burst (the idle between bursts, which the idle
     * threshold must not grow with). */
    uint64_t inner_gap_max_ns;
    uint64_t between_gaps;
};

int fikit_measure_init(struct fikit_measure_store *st);
void fikit_measure_destroy(struct fikit_measure_store *st);

/* Makes key known with its description. -ENOTUNIQ if the key already names
 * a different kernel (its measurements are then never mixed). */
int fikit_measure_add_kernel(struct fikit_measure_store *st, uint64_t key,
                             const struct fikit_kernel_desc *desc);
/* Records one duration of an already added kernel. -ENOENT if unknown. */
int fikit_measure_add_duration(struct fikit_measure_store *st, uint64_t key, uint64_t ns);
/* Records the idle gap that followed kernel `key` preceded by `prev`. */
int fikit_measure_add_gap(struct fikit_measure_store *st, uint64_t prev, uint64_t key,
                          uint64_t ns);
/* Adds a whole statistic (used by the profile loader and merge). */
int fikit_measure_merge_duration(struct fikit_measure_store *st, uint64_t key,
                                 const struct fikit_stat *s);
int fikit_measure_merge_gap(struct fikit_measure_store *st, uint64_t prev, uint64_t key,
                            const struct fikit_stat *s);

/* Records one burst of launches launches (at least 1) that took ns. */
int fikit_measure_add_burst(struct fikit_measure_store *st, uint32_t launches, uint64_t ns);
int fikit_measure_merge_burst(struct fikit_measure_store *st, uint32_t launches, const struct fikit_stat *s);

const struct fikit_kernel_stats *fikit_measure_kernel(const struct fikit_measure_store *st,
                                                      uint64_t key);
const struct fikit_kernel_desc *fikit_measure_desc(const struct fikit_measure_store *st,
                                                   uint64_t key);
const struct fikit_gap_stats *fikit_measure_gap(const struct fikit_measure_store *st,
                                                uint64_t prev, uint64_t key);

/* Merges from into into. Kernels whose key names a different kernel in
 * into are skipped with their gaps; returns how many were skipped, or a
 * negative errno. */
int fikit_measure_merge(struct fikit_measure_store *into, const struct fikit_measure_store *from);

/* The longest gap ever seen, 0 if none. */
uint64_t fikit_measure_max_gap(const struct fikit_measure_store *st);
/* A gap of ns after kernel key, when it followed prev, that came after a
 * wait which ended a burst (between: the idle between bursts) or not:
 * fikit_measure_add_gap, and where it fell. */
int fikit_measure_add_gap_at(struct fikit_measure_store *st, uint64_t prev, uint64_t key, uint64_t ns,
                             bool between);
/* The gap a task's idle threshold is built on: for a task whose bursts end
 * in waits, the longest gap inside a burst (0: none yet); else the longest
 * gap (fikit_measure_max_gap). */
uint64_t fikit_measure_idle_gap(const struct fikit_measure_store *st);
size_t fikit_measure_kernel_count(const struct fikit_measure_store *st);
size_t fikit_measure_gap_count(const struct fikit_measure_store *st);
size_t fikit_measure_burst_count(const struct fikit_measure_store *st);

/* Entries sorted by key (pairs by prev, then key), for stable output. The
 * caller frees the returned array (not the entries). */
const struct fikit_kernel_stats **fikit_measure_sorted_kernels(const struct fikit_measure_store *st,
                                                               size_t *n);
const struct fikit_gap_stats **fikit_measure_sorted_gaps(const struct fikit_measure_store *st,
                                                         size_t *n);
/* Burst sizes by launch count, ascending. */
const struct fikit_burst_stats **fikit_measure_sorted_bursts(const struct fikit_measure_store *st, size_t *n);

#endif
