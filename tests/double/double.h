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

/* A stream; device: its device, or -1 where the API does not say. */
struct dbl_graph;
struct dbl_stream {
    int device;
    int capturing;
    struct dbl_graph *g;
};

struct dbl_stream *dbl_stream_new(int device);
void dbl_capture_begin(struct dbl_stream *s);
/* The graph the capture recorded (freed with dbl_graph_free). */
struct dbl_graph *dbl_capture_end(struct dbl_stream *s);
void dbl_graph_free(struct dbl_graph *g);

/* A launch of fn on s: recorded while s is captured, else run and counted.
 * params as kernelParams; dbl_run_packed takes them packed in one buffer. */
void dbl_run(const struct dbl_fn *fn, const unsigned grid[3], const unsigned block[3], struct dbl_stream *s,
             void **params);
void dbl_run_packed(const struct dbl_fn *fn, const unsigned grid[3], const unsigned block[3],
                    struct dbl_stream *s, char *buf);
/* Runs a recorded graph: one launch. */
void dbl_graph_launch(struct dbl_graph *g);

/* An event of a device (-1: any). */
struct dbl_event {
    int device;
    uint64_t t; /* when recorded; 0: not yet */
};

struct dbl_event *dbl_event_new(int device);
/* 0; DBL_CAPTURING on a captured stream (fikit must never record there);
 * DBL_OTHER_DEVICE on another device's stream (refused, as in ROCm). */
int dbl_event_record(struct dbl_event *e, const struct dbl_stream *s);
/* b's time after a's, in ms: 0, or DBL_OTHER_DEVICE where they are not of
 * one device or one was never recorded. */
int dbl_event_elapsed(const struct dbl_event *a, const struct dbl_event *b, float *ms);
#define DBL_CAPTURING (-1)
#define DBL_OTHER_DEVICE (-2)

/* The launches that reached the double, written to the file $env names when
 * the library unloads (from the shim's destructor). */
void dbl_report(const char *env);

#endif
