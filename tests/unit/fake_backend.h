/* A fake backend for unit tests: one struct fikit_backend_ops whose every
 * answer comes from a script the test sets, in the spirit of SQLite's test
 * VFS (src/test_vfs.c): the gate, the learner and the predictor run against
 * it inside the test's own process, with no device, no vendor library and
 * no fikitd.
 *
 * The script:
 *   - kernels: a handle (any pointer the test puts in a launch's .kernel)
 *     names a kernel, and each kernel name has a duration;
 *   - gaps: the idle time between the end of one launch of kernel `prev`
 *     and the start of the next launch if it is of kernel `next`
 *     (negative: they overlapped), else a default;
 *   - the device: its identity key and model.
 * Each marker_begin starts a launch record; marker_duration answers its
 * kernel's scripted duration, marker_gap the scripted gap between two
 * records' kernels.
 *
 * Faults: every op counts its calls (from 1, since fake_backend_reset);
 * fake_backend_fail(op, n, err) makes the n-th call of op fail with -err
 * (ops returning bool answer false; marker_release cannot fail), and with
 * persist every call from the n-th on. Markers are counted too: begun,
 * released, and those still held, so a test sees a leak or a double
 * release. Not thread-safe except for the counters (atomic): the script is
 * set before the launches. */
#ifndef FIKIT_TESTS_FAKE_BACKEND_H
#define FIKIT_TESTS_FAKE_BACKEND_H

#include "interpose/backend.h"

#include <stdbool.h>
#include <stdint.h>

enum fake_op {
    FAKE_KERNEL_NAME,
    FAKE_DEVICE_IDENTITY,
    FAKE_CAPTURES_OPEN,
    FAKE_STREAM_CAPTURING,
    FAKE_DEVICE_ON_HOST,
    FAKE_MARKER_BEGIN,
    FAKE_MARKER_END,
    FAKE_MARKER_DURATION,
    FAKE_MARKER_GAP,
    FAKE_MARKER_RELEASE,
    FAKE_OPS
};

/* The ops table; its kind is OpenCL's (the gate then never walks the stack
 * for collective libraries), its name "fake". */
extern const struct fikit_backend_ops fake_backend_ops;

/* Forgets the script, the faults, the counters and the launch records. */
void fake_backend_reset(void);

/* Script. Names are copied; up to 64 kernels and 256 gaps. */
void fake_backend_kernel(const void *handle, const char *name, uint64_t dur_ns);
/* The duration of kernel name (it need not have a handle: hook-named
 * launches carry their name in the launch). */
void fake_backend_duration(const char *name, uint64_t dur_ns);
void fake_backend_gap(const char *prev, const char *next, int64_t gap_ns);
void fake_backend_default_gap(int64_t gap_ns);
void fake_backend_device(const char *key, const char *model);

/* Faults. */
void fake_backend_fail(enum fake_op op, unsigned nth, int err, bool persist);

/* Counters. */
unsigned fake_backend_calls(enum fake_op op);
unsigned fake_backend_failures(enum fake_op op);
unsigned fake_backend_markers_live(void); /* begun and not yet released */
unsigned fake_backend_double_releases(void);

#endif
