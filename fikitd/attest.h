/* Owns: the records that root makes of who a process is (FIKIT_MSG_ATTEST,
 * sent by the Slurm SPANK plugin from a task before its exec), and finding
 * the one that covers a registering client: its own or its nearest
 * ancestor's. A record is bound to its process by pid and start time, so a
 * reused pid never inherits one. fikitd's control plane is one thread. */
#ifndef FIKITD_ATTEST_H
#define FIKITD_ATTEST_H

#include "core/proto.h"

#include <stdint.h>
#include <sys/types.h>

/* More live records than this are refused (-ENOSPC): one per Slurm task. */
#define FIKITD_ATTEST_MAX 4096
/* How many ancestors a lookup climbs at most. */
#define FIKITD_ATTEST_DEPTH 64

struct fikitd_attest {
    pid_t pid;
    uint64_t start; /* /proc/PID/stat field 22, clock ticks since boot */
    int level;      /* -1: the client's request */
    int ceiling;
    char task[64];
    char origin[128];
};

/* A process's start time and parent from /proc. Returns 0 or -errno
 * (-ESRCH: no such process). */
int fikitd_proc_stat(pid_t pid, uint64_t *start, pid_t *ppid);

/* Keeps m's record for its process (replacing an older one of the same
 * process) and drops those of processes gone. Returns 0, -ESRCH when the
 * process does not exist, -ENOSPC when the table is full. */
int fikitd_attest_add(const struct fikit_msg_attest *m);

/* The record of pid or of its nearest ancestor (at most
 * FIKITD_ATTEST_DEPTH up), or NULL. */
const struct fikitd_attest *fikitd_attest_find(pid_t pid);

/* How many records are kept (for tests and the metrics). */
int fikitd_attest_count(void);

#endif
