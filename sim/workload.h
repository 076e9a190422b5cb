/* Owns: the workloads of `fikit sim`, in the versioned text format of
 * docs/sim-workload-format.md: a service (one recorded request per
 * sequence) or a loop (a closed loop of sequences, training iterations),
 * each sequence a list of launches and host synchronisations with the CPU
 * time before each. Loading rejects a malformed file with "FILE:LINE: the
 * field, its value and what is accepted"; nothing of a rejected file reaches
 * the caller. Saving is atomic (temporary file, fsync, rename) and writes
 * what loading reads back identically. No GPU headers. */
#ifndef FIKIT_SIM_WORKLOAD_H
#define FIKIT_SIM_WORKLOAD_H

#include "core/error.h"

#include <stddef.h>
#include <stdint.h>

#define FIKIT_SIM_WORKLOAD_VERSION 1
#define FIKIT_SIM_MAX_STEPS 1000000u        /* in a whole file */
#define FIKIT_SIM_MAX_NAME 1023u            /* bytes of a decoded kernel name: as the interposer keeps it */
#define FIKIT_SIM_MAX_DUR_NS 10000000000ull /* 10 s: a kernel's duration, a host time */
#define FIKIT_SIM_MAX_THREADS 65536u        /* per block */

enum fikit_sim_op { FIKIT_SIM_LAUNCH = 1, FIKIT_SIM_SYNC = 2 };
enum fikit_sim_kind { FIKIT_SIM_SERVICE = 1, FIKIT_SIM_LOOP = 2 };

/* One step. host_ns: CPU time since the previous step returned (or the
 * sequence began) before this step is issued; a launch returns at once, a
 * sync once all the task's launched work has completed. For a sync,
 * dur_ns, blocks, threads and kernel are 0. */
struct fikit_sim_step {
    uint8_t op;
    uint64_t host_ns;
    uint64_t dur_ns;  /* the kernel alone on the device */
    uint32_t blocks;  /* grid blocks (product of the grid's dimensions) */
    uint32_t threads; /* threads per block */
    uint32_t kernel;  /* index into kernels[] */
};

struct fikit_sim_seq {
    size_t first, n; /* steps[first .. first+n) */
};

struct fikit_sim_workload {
    char name[64];
    enum fikit_sim_kind kind;
    char source[256];
    struct fikit_sim_step *steps;
    size_t nsteps;
    struct fikit_sim_seq *seqs;
    size_t nseqs;
    char **kernels; /* distinct kernel names, decoded, in order of first use */
    size_t nkernels;
};

/* Parses len bytes of text; errors name path_for_errors and the line. On
 * success *out owns its arrays (fikit_sim_workload_free); on error *out is
 * zeroed and err says why. Returns 0 or a negative errno. */
int fikit_sim_workload_parse(const char *text, size_t len, const char *path_for_errors,
                             struct fikit_sim_workload *out, struct fikit_err *err);

/* Reads and parses the file at path. */
int fikit_sim_workload_load(const char *path, struct fikit_sim_workload *out,
                            struct fikit_err *err);

/* Checks w against the format's rules and writes it atomically to path; on
 * error the file at path is unchanged. Loading the file gives back w (its
 * kernels renumbered in order of first use, names of no use dropped). */
int fikit_sim_workload_save(const char *path, const struct fikit_sim_workload *w,
                            struct fikit_err *err);

/* Frees what parse or load allocated and zeroes *w; safe on a zeroed one. */
void fikit_sim_workload_free(struct fikit_sim_workload *w);

#endif
