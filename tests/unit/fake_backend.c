#include "tests/unit/fake_backend.h"

#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>

#define FAKE_KERNELS 64
#define FAKE_GAPS 256
#define FAKE_LAUNCHES 8192

struct fake_kernel {
    const void *handle;
    char name[128];
    uint64_t dur_ns;
};

struct fake_gap {
    char prev[128], next[128];
    int64_t gap_ns;
};

/* One begun marker: what kernel it times, and where it is in its life. */
struct fake_launch {
    char name[128];
    bool ended;
    bool released;
};

struct fake_fault {
    unsigned nth; /* 0: none */
    int err;
    bool persist;
};

static struct {
    struct fake_kernel kernels[FAKE_KERNELS];
    int nkernels;
    struct fake_gap gaps[FAKE_GAPS];
    int ngaps;
    int64_t default_gap_ns;
    char key[128], model[128];
    struct fake_fault faults[FAKE_OPS];
    _Atomic unsigned calls[FAKE_OPS];
    _Atomic unsigned failures[FAKE_OPS];
    _Atomic unsigned live, double_releases, nlaunches;
    struct fake_launch launches[FAKE_LAUNCHES];
} F;

void fake_backend_reset(void)
{
    memset(&F, 0, sizeof F);
    snprintf(F.key, sizeof F.key, "fake:0");
    snprintf(F.model, sizeof F.model, "Fake Device");
}

/* Counts the call; returns the error it is to fail with (negative), or 0. */
static int enter(enum fake_op op)
{
    unsigned n = atomic_fetch_add(&F.calls[op], 1) + 1;
    const struct fake_fault *f = &F.faults[op];
    if (f->nth && (n == f->nth || (f->persist && n > f->nth))) {
        atomic_fetch_add(&F.failures[op], 1);
        return -f->err;
    }
    return 0;
}

static struct fake_kernel *kernel_named(const char *name)
{
    for (int i = 0; i < F.nkernels; i++)
        if (strcmp(F.kernels[i].name, name) == 0)
            return &F.kernels[i];
    return NULL;
}

void fake_backend_kernel(const void *handle, const char *name, uint64_t dur_ns)
{
    struct fake_kernel *k = kernel_named(name);
    if (!k && F.nkernels < FAKE_KERNELS)
        k = &F.kernels[F.nkernels++];
    if (!k)
        return;
    if (handle)
        k->handle = handle;
    snprintf(k->name, sizeof k->name, "%s", name);
    k->dur_ns = dur_ns;
}

void fake_backend_duration(const char *name, uint64_t dur_ns) { fake_backend_kernel(NULL, name, dur_ns); }

void fake_backend_gap(const char *prev, const char *next, int64_t gap_ns)
{
    if (F.ngaps == FAKE_GAPS)
        return;
    struct fake_gap *g = &F.gaps[F.ngaps++];
    snprintf(g->prev, sizeof g->prev, "%s", prev);
    snprintf(g->next, sizeof g->next, "%s", next);
    g->gap_ns = gap_ns;
}

void fake_backend_default_gap(int64_t gap_ns) { F.default_gap_ns = gap_ns; }

void fake_backend_device(const char *key, const char *model)
{
    snprintf(F.key, sizeof F.key, "%s", key);
    snprintf(F.model, sizeof F.model, "%s", model);
}

void fake_backend_fail(enum fake_op op, unsigned nth, int err, bool persist)
{
    F.faults[op] = (struct fake_fault){.nth = nth, .err = err, .persist = persist};
}

unsigned fake_backend_calls(enum fake_op op) { return atomic_load(&F.calls[op]); }
unsigned fake_backend_failures(enum fake_op op) { return atomic_load(&F.failures[op]); }
unsigned fake_backend_markers_live(void) { return atomic_load(&F.live); }
unsigned fake_backend_double_releases(void) { return atomic_load(&F.double_releases); }

/* ------------------------------------------------------------- the ops */

static int fake_kernel_name(const struct fikit_launch_desc *l, char *buf, size_t len)
{
    int rc = enter(FAKE_KERNEL_NAME);
    if (rc)
        return rc;
    for (int i = 0; i < F.nkernels; i++) {
        if (F.kernels[i].handle && F.kernels[i].handle == l->kernel) {
            snprintf(buf, len, "%s", F.kernels[i].name);
            return 0;
        }
    }
    return -ENOENT;
}

static int fake_device_identity(const struct fikit_launch_desc *l, char *key, size_t keylen, char *model,
                                size_t modellen)
{
    (void)l;
    int rc = enter(FAKE_DEVICE_IDENTITY);
    if (rc)
        return rc;
    snprintf(key, keylen, "%s", F.key);
    snprintf(model, modellen, "%s", F.model);
    return 0;
}

static bool fake_captures_open(void) { return enter(FAKE_CAPTURES_OPEN) == 0 && false; }

static bool fake_stream_capturing(const struct fikit_launch_desc *l)
{
    (void)l;
    return enter(FAKE_STREAM_CAPTURING) == 0 && false;
}

static bool fake_device_on_host(const struct fikit_launch_desc *l)
{
    (void)l;
    return enter(FAKE_DEVICE_ON_HOST) == 0 && false;
}

static struct fake_launch *launch_of(const struct fikit_marker *m)
{
    uintptr_t i = (uintptr_t)m->a;
    return i >= 1 && i <= FAKE_LAUNCHES ? &F.launches[i - 1] : NULL;
}

static int fake_marker_begin(const struct fikit_launch_desc *l, struct fikit_marker *m)
{
    int rc = enter(FAKE_MARKER_BEGIN);
    if (rc)
        return rc;
    unsigned i = atomic_fetch_add(&F.nlaunches, 1);
    if (i >= FAKE_LAUNCHES)
        return -ENOMEM;
    struct fake_launch *fl = &F.launches[i];
    const char *name = l->name;
    for (int k = 0; !name && k < F.nkernels; k++)
        if (F.kernels[k].handle && F.kernels[k].handle == l->kernel)
            name = F.kernels[k].name;
    snprintf(fl->name, sizeof fl->name, "%s", name ? name : "unnamed");
    *m = (struct fikit_marker){.a = (void *)(uintptr_t)(i + 1)};
    atomic_fetch_add(&F.live, 1);
    return 0;
}

static int fake_marker_end(const struct fikit_launch_desc *l, struct fikit_marker *m)
{
    (void)l;
    int rc = enter(FAKE_MARKER_END);
    if (rc)
        return rc;
    struct fake_launch *fl = launch_of(m);
    if (!fl)
        return -EINVAL;
    fl->ended = true;
    return 0;
}

static int fake_marker_duration(struct fikit_marker *m, uint64_t *ns)
{
    int rc = enter(FAKE_MARKER_DURATION);
    if (rc)
        return rc;
    struct fake_launch *fl = launch_of(m);
    if (!fl || fl->released)
        return -EINVAL;
    if (!fl->ended)
        return -EAGAIN; /* as a real backend: not complete before its end marker */
    const struct fake_kernel *k = kernel_named(fl->name);
    if (!k)
        return -ENOENT;
    *ns = k->dur_ns;
    return 0;
}

static int fake_marker_gap(struct fikit_marker *prev, struct fikit_marker *next, int64_t *ns)
{
    int rc = enter(FAKE_MARKER_GAP);
    if (rc)
        return rc;
    struct fake_launch *p = launch_of(prev), *n = launch_of(next);
    if (!p || !n || p->released || n->released)
        return -EINVAL;
    if (!p->ended || !n->ended)
        return -EAGAIN;
    *ns = F.default_gap_ns;
    for (int i = 0; i < F.ngaps; i++) {
        if (strcmp(F.gaps[i].prev, p->name) == 0 && strcmp(F.gaps[i].next, n->name) == 0) {
            *ns = F.gaps[i].gap_ns;
            break;
        }
    }
    return 0;
}

static void fake_marker_release(struct fikit_marker *m)
{
    enter(FAKE_MARKER_RELEASE);
    struct fake_launch *fl = launch_of(m);
    if (!fl)
        return;
    if (fl->released) {
        atomic_fetch_add(&F.double_releases, 1);
        return;
    }
    fl->released = true;
    atomic_fetch_sub(&F.live, 1);
}

const struct fikit_backend_ops fake_backend_ops = {
    .kind = FIKIT_BACKEND_OPENCL,
    .name = "fake",
    .kernel_name = fake_kernel_name,
    .device_identity = fake_device_identity,
    .captures_open = fake_captures_open,
    .stream_capturing = fake_stream_capturing,
    .device_on_host = fake_device_on_host,
    .marker_begin = fake_marker_begin,
    .marker_end = fake_marker_end,
    .marker_duration = fake_marker_duration,
    .marker_gap = fake_marker_gap,
    .marker_release = fake_marker_release,
};
