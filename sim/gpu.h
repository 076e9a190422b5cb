/* Owns: fikit sim's model of one GPU shared by several processes, on a
 * virtual clock: what the device's sharing substrate does with the kernels
 * that processes launch, not what fikit does. No GPU headers.
 *
 *  - time-slicing: one context (process) at a time runs its kernels in
 *    launch order; switching to another context costs switch_ns, paid also
 *    by the first launch of a context after another one ran, even if that
 *    one went idle; a context that has run for slice_ns while another has
 *    work waiting is preempted (its kernel resumes later where it stopped);
 *  - MPS: kernels of all contexts run at once at thread-block granularity.
 *    The device holds sms x threads_per_sm threads (a block takes at least
 *    threads_per_sm / blocks_per_sm of them); a kernel of B blocks that ran
 *    W waves alone runs each block for dur / W, and its blocks are placed as
 *    threads free up. Kernels wait in one queue: in launch order (MPS), or
 *    by the context's priority first (MPS with client priority); a kernel
 *    that cannot place a block keeps the ones behind it waiting (a kernel
 *    filling every SM blocks the others for its whole run, as on the H200).
 *    A context's thread percentage caps the threads its blocks may hold.
 *    Blocks placed while other contexts hold a share s of the device's
 *    threads run 1 + corun_slowdown x s longer (memory bandwidth and caches,
 *    as one coefficient of the device: workloads do not say how much of
 *    either a kernel uses); an MPS client's launch costs its host
 *    mps_launch_ns more.
 * Every kernel becomes visible to the device launch_ns after its launch.
 * Within one context kernels run one after another (one stream). */
#ifndef FIKIT_SIM_GPU_H
#define FIKIT_SIM_GPU_H

#include "core/error.h"
#include "sim/evq.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* A device file (docs/sim.md): what the model needs of one GPU. */
struct fikit_sim_device {
    char name[64];
    char about[256];
    uint32_t sms;
    uint32_t threads_per_sm;
    uint32_t blocks_per_sm;
    uint64_t launch_ns;  /* from a launch call to the kernel being visible */
    uint64_t switch_ns;  /* time-slicing: one context switch */
    uint64_t slice_ns;   /* time-slicing: a busy context yields after this */
    uint64_t fikit_launch_ns; /* fikit's own host time per launch of a task under it */
    uint64_t mps_launch_ns;   /* MPS: a client's own host time per launch (the server's path) */
    uint32_t corun_ppm;       /* MPS: a block runs 1 + this x (the share of the device's threads
                               * that other contexts hold when it is placed) longer: what
                               * co-running kernels cost each other in memory bandwidth and
                               * caches, which threads alone do not show; parts per million */
};

/* Errors name the file, the line, the key, its value and what is accepted. */
int fikit_sim_device_load(const char *path, struct fikit_sim_device *d, struct fikit_err *err);
int fikit_sim_device_parse(const char *text, const char *path_for_errors,
                           struct fikit_sim_device *d, struct fikit_err *err);

enum fikit_sim_substrate { FIKIT_SIM_TIMESLICE = 0, FIKIT_SIM_MPS };

/* A kernel's completion, told to the owner of the run. */
typedef void (*fikit_sim_done_fn)(void *user, uint32_t ctx, uint64_t cookie, uint64_t start_ns,
                                  uint64_t end_ns);

struct fikit_sim_gpu;

/* Event types at and above this are the GPU's: the run loop hands them to
 * fikit_sim_gpu_event. */
#define FIKIT_SIM_GPU_EVENTS 1000u

/* mps_priority: MPS with client priority (the queue orders by context
 * priority first). */
struct fikit_sim_gpu *fikit_sim_gpu_new(const struct fikit_sim_device *d,
                                        enum fikit_sim_substrate s, bool mps_priority,
                                        uint32_t contexts, struct fikit_sim_evq *q,
                                        fikit_sim_done_fn done, void *user);
void fikit_sim_gpu_free(struct fikit_sim_gpu *g);
/* prio: 0 highest (MPS with client priority); thread_pct 1..100 (MPS). */
void fikit_sim_gpu_context(struct fikit_sim_gpu *g, uint32_t ctx, int prio, uint32_t thread_pct);
/* A launch at now; the kernel runs dur_ns alone. sm_pct: confined to that
 * share of the device (MPS: its blocks within that many threads, and within
 * its context's cap), as fikit's green contexts do; 0: not confined.
 * 0 or -ENOMEM. */
int fikit_sim_gpu_launch(struct fikit_sim_gpu *g, uint64_t now, uint32_t ctx, uint64_t cookie,
                         uint64_t dur_ns, uint32_t blocks, uint32_t threads, uint32_t sm_pct);
void fikit_sim_gpu_event(struct fikit_sim_gpu *g, const struct fikit_sim_event *e);

/* Counters: context switches (time-slicing), preemptions at a slice's end. */
uint64_t fikit_sim_gpu_switches(const struct fikit_sim_gpu *g);
uint64_t fikit_sim_gpu_preemptions(const struct fikit_sim_gpu *g);

#endif
