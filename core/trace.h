/* Owns: scheduling trace events: what clients write into their ring in the
 * shared segment and fikitd keeps per device, and their export as
 * Chrome/Perfetto trace-event JSON (ui.perfetto.dev, chrome://tracing). */
#ifndef FIKIT_CORE_TRACE_H
#define FIKIT_CORE_TRACE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum fikit_trace_type {
    FIKIT_TRACE_LAUNCH = 1, /* a kernel went to the device: a = predicted end of
                             * the task's work, b = predicted gap after it (p10) */
    FIKIT_TRACE_HOLD = 2,   /* a launch was held: a = predicted duration */
    FIKIT_TRACE_GRANT = 3,  /* fikitd granted a held launch: reason (with
                             * FIKIT_TRACE_GRANT_WOKEN), a = room, b = predicted
                             * duration, c = when it was posted */
    FIKIT_TRACE_GAP = 4,    /* a measured gap: a = seen, b = predicted p10, c = predicted p50 */
    FIKIT_TRACE_KERNEL = 5, /* a measured kernel: a = duration */
    FIKIT_TRACE_FILL = 6,   /* a launch filled a gap by itself: a = room, b = predicted duration */
    FIKIT_TRACE_PACE = 7,   /* a launch waited for its queue to drain, until t_ns: a = queued,
                             * b = waited; a = 0: a beside task waited while the
                             * level above ran too slow (beside_max_slowdown) */
};

struct fikit_trace_event {
    uint64_t seq;    /* in a slot's ring: index + 1, written last (torn-read guard) */
    uint64_t t_ns;
    uint64_t key;
    uint64_t a, b, c;
    uint16_t type;
    uint16_t slot;   /* the task's slot in its device segment */
    uint16_t reason; /* GRANT: enum fikit_grant_reason, | FIKIT_TRACE_GRANT_WOKEN */
    uint16_t level;
};

/* In a grant's reason: the held thread was asleep when granted, so the
 * grant reached it by a futex wake-up rather than its spin (the part of the
 * grant latency a wake-up costs). */
#define FIKIT_TRACE_GRANT_WOKEN 0x8000u

/* Names for the JSON export: one per slot. */
struct fikit_trace_task {
    int slot;
    int level;
    int pid;
    char name[64];
};

/* Looks up a kernel's name for the export; NULL if unknown. */
typedef const char *(*fikit_trace_namer)(void *ctx, int slot, uint64_t key);

/* Writes the events of one device as entries of a trace-event JSON array
 * (without the surrounding brackets; *first says whether a comma is due).
 * Each task is a thread of the device's process: its predicted kernels and
 * gaps, the time its launches were held, and the gaps measured against
 * those predicted. Returns the number of entries written. */
size_t fikit_trace_write_json(FILE *f, int device_index, const char *device_name,
                              const struct fikit_trace_event *ev, size_t n,
                              const struct fikit_trace_task *tasks, size_t ntasks,
                              fikit_trace_namer namer, void *namer_ctx, int *first);

#endif
