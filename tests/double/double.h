/* Owns: the driver double that each vendor's double is a shim over
 * (tests/fakecuda/fake_cuda.c: a libcuda.so.1, tests/hip/fake_hip.c: a
 * libamdhip64.so.5). It is not a GPU: a kernel is a host function run at
 * once with the launch's parameters, a stream records its launches into a
 * graph while it is captured, a graph launch is one launch that runs what was
 * recorded, an event reads the host clock, and every launch that reaches the
 * double is counted, so tests can check that none was lost or doubled. A
 * shim maps its API's names, handles and status codes onto these, and keeps
 * what only its API has (devices and contexts, proc-address queries, packed
 * arguments). */
#ifndef FIKIT_TESTS_DOUBLE_H
#define FIKIT_TESTS_DOUBLE_H

#include "tests/host_kernels.h"

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* A kernel of the double: a host function and how its parameters look. */
struct dbl_fn {
    const char *name;
    const void *host;  /* the host stub a program launches it by, where the API has one */
    host_kernel run;
    int nparams;       /* kernelParams is not terminated: the signature says how many */
    size_t size[8];    /* and how big each is */
    size_t offset[8];  /* where each is in a packed argument buffer */
};

/* The kernel of fns named name, or the one whose host stub is host; NULL if none. */
const struct dbl_fn *dbl_fn_named(const struct dbl_fn *fns, size_t n, const char *name);
const struct dbl_fn *dbl_fn_by_host(const struct dbl_fn *fns, size_t n, const void *host);

/* A module: the functions asked of it, in the order asked, copies of a
 * table's kernels. An unloaded module's memory is what the next load gets,
 * as an allocator often hands back the block it just freed: a kernel handle
 * of an unloaded module is then another kernel's (the case fikit's names
 * must not survive). */
struct dbl_module;
struct dbl_module *dbl_module_load(void);   /* NULL: out of memory */
void dbl_module_unload(struct dbl_module *m);
/* The module's copy of the kernel of fns named name, made at the first
 * ask; NULL if fns has none (*missing set) or the module is full. */
const struct dbl_fn *dbl_module_function(struct dbl_module *m, const struct dbl_fn *fns, size_t n,
                                         const char *name, int *missing);

/* A stream; device: its device, or -1 where the API does not say. A
 * stream runs what it is given at once on the calling thread, except an
 * asynchronous one (dbl_astream_new: the streams of a CUDA green context or
 * of a HIP CU mask), which runs it in order on a thread of its own, a
 * kernel after a short sleep, so that work a program's other streams do not
 * wait for is seen to run out of order. A stream told to wait for an event
 * (dbl_wait) blocks its next operation until the event completes; the
 * legacy stream's operations wait for every stream's waits. */
struct dbl_graph;
struct dbl_astream;
struct dbl_stream {
    int device;
    int capturing;
    struct dbl_graph *g;
    int legacy;                /* its operations wait for every stream's waits */
    struct dbl_astream *async; /* set on an asynchronous stream */
};

struct dbl_stream *dbl_stream_new(int device);
/* An asynchronous stream; share: the SMs or CUs it was given, for the shim. */
struct dbl_stream *dbl_astream_new(int device, unsigned share);
/* Waits until an asynchronous stream ran everything it was given. */
void dbl_astream_sync(struct dbl_stream *s);
/* Kernels run on asynchronous streams so far. */
long dbl_async_kernels(void);
void dbl_capture_begin(struct dbl_stream *s);
/* The graph the capture recorded (freed with dbl_graph_free). */
struct dbl_graph *dbl_capture_end(struct dbl_stream *s);
void dbl_graph_free(struct dbl_graph *g);

/* A launch of fn on s: recorded while s is captured, else run (after s's
 * waits; on an asynchronous stream, queued with its parameters copied) and
 * counted. params as kernelParams; dbl_run_packed takes them packed in one
 * buffer. */
void dbl_run(const struct dbl_fn *fn, const unsigned grid[3], const unsigned block[3], struct dbl_stream *s,
             void **params);
void dbl_run_packed(const struct dbl_fn *fn, const unsigned grid[3], const unsigned block[3],
                    struct dbl_stream *s, char *buf);
/* Runs a recorded graph: one launch. */
void dbl_graph_launch(struct dbl_graph *g);

/* An event of a device (-1: any): when it completed, and its generations,
 * recorded (each record) and completed. */
struct dbl_event {
    int device;
    uint64_t t; /* when recorded; 0: not yet */
    pthread_mutex_t m;
    pthread_cond_t cv;
    uint64_t rec, done;
};

struct dbl_event *dbl_event_new(int device);
/* 0; DBL_CAPTURING on a captured stream (fikit must never record there);
 * DBL_OTHER_DEVICE on another device's stream (refused, as in ROCm). On an
 * asynchronous stream the event completes when the stream reaches it; on
 * another, after the stream's waits. */
int dbl_event_record(struct dbl_event *e, struct dbl_stream *s);
/* Whether every record of e so far has completed (never recorded: false). */
int dbl_event_done(struct dbl_event *e);
/* Waits until every record of e so far has completed. */
void dbl_event_sync(struct dbl_event *e);
/* s waits for e's records so far before its next operation. 0, or -1 when
 * the double's table of waits is full. */
int dbl_wait(struct dbl_stream *s, struct dbl_event *e);
/* Blocks until s's waits are met (NULL or the legacy stream: every
 * stream's), as an operation on s would. */
void dbl_drain(struct dbl_stream *s);
/* b's time after a's, in ms: 0, or DBL_OTHER_DEVICE where they are not of
 * one device or one was never recorded. */
int dbl_event_elapsed(const struct dbl_event *a, const struct dbl_event *b, float *ms);
#define DBL_CAPTURING (-1)
#define DBL_OTHER_DEVICE (-2)

/* The launches that reached the double, written to the file $env names when
 * the library unloads (from the shim's destructor). */
void dbl_report(const char *env);

#endif
