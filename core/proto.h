/* Owns: the control protocol between clients, the fikit tool and fikitd,
 * over a SOCK_SEQPACKET Unix socket: one message per packet, a fixed header
 * and a fixed-size payload per type, at most one file descriptor (a part
 * of the device's shared memory) passed with SCM_RIGHTS. fikit_proto_check() validates a
 * received packet completely (sizes, counts, NUL-terminated strings, ranges)
 * before anyone reads it. Launches never use this socket. */
#ifndef FIKIT_CORE_PROTO_H
#define FIKIT_CORE_PROTO_H

#include "core/sched.h"
#include "core/trace.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FIKIT_PROTO_MAGIC 0x54494b46u /* "FKIT" */
#define FIKIT_PROTO_VERSION 10 /* 2: status counts nudges; 3: and fills, paces, starved grants, lost trace
                               * events; 4: register says the device computes on the host and
                               * whether the task runs beside; status shows the latter; 5: and
                               * each task's longest wait of a held launch; 6: pause and
                               * overdue grants; 7: the segment split (REGISTER_OK carries the
                               * read-only header, SLOT_FD the commons, the task's slot and
                               * other tasks' slots, read-only, asked with SLOT); 8: status
                               * shows each task's latency budget and knobs; 9: a device's
                               * grants one array by enum fikit_grant_count; 10: status shows
                               * what a budget holds, its task's load and what its bursts may take */
#define FIKIT_MSG_MAX 8192
#define FIKIT_PROTO_SLOTS 64 /* slots of a device (FIKIT_SHM_SLOTS) */

enum fikit_msg_type {
    FIKIT_MSG_HELLO = 1,       /* any -> fikitd: who are you */
    FIKIT_MSG_HELLO_OK,        /* fikitd -> any */
    FIKIT_MSG_REGISTER,        /* client -> fikitd: a task on a device */
    FIKIT_MSG_REGISTER_OK,     /* fikitd -> client, with the header's fd (read-only); two
                                * SLOT_FD follow: the commons, then the task's own slot */
    FIKIT_MSG_ERROR,           /* fikitd -> any */
    FIKIT_MSG_STATUS,          /* tool -> fikitd */
    FIKIT_MSG_STATUS_DEVICE,   /* fikitd -> tool, one per device */
    FIKIT_MSG_STATUS_TASK,     /* fikitd -> tool, one per task */
    FIKIT_MSG_END,             /* fikitd -> tool: end of a listing */
    FIKIT_MSG_TRACE_CTL,       /* tool -> fikitd: start, stop */
    FIKIT_MSG_TRACE_DUMP,      /* tool -> fikitd */
    FIKIT_MSG_TRACE_TASK,      /* fikitd -> tool: who a slot is */
    FIKIT_MSG_TRACE_EVENTS,    /* fikitd -> tool: a chunk of events */
    FIKIT_MSG_OK,              /* fikitd -> tool */
    FIKIT_MSG_ATTEST,          /* root -> fikitd: who a process is (a cluster scheduler's record);
                                * added after version 5 without a new version: only root sends
                                * it, and an older fikitd closes the connection */
    FIKIT_MSG_SLOT,            /* client -> fikitd: a read-only fd of another task's slot */
    FIKIT_MSG_SLOT_FD,         /* fikitd -> client, with the fd of a part of the segment */
    FIKIT_MSG_TYPE_MAX
};

struct fikit_msg_hdr {
    uint32_t magic;
    uint16_t version;
    uint16_t type;
    uint32_t len; /* payload bytes after the header */
    uint32_t pad;
};

struct fikit_msg_hello_ok {
    int32_t pid;
    uint32_t ndevices;
    uint64_t generation;
    char version[32];
    char config[256];
};

#define FIKIT_REGISTER_MEASURE 1u
/* The device computes on the host's CPUs: held launches do not spin through
 * their hold (spin_us = auto). */
#define FIKIT_REGISTER_DEVICE_ON_HOST 2u
/* The task runs beside higher levels (share = beside with its MPS thread cap
 * in force): for fikit status. */
#define FIKIT_REGISTER_BESIDE 4u

struct fikit_msg_register {
    char task[64];
    int32_t level;     /* requested, 0..9 */
    uint32_t flags;
    uint32_t backend;  /* enum fikit_backend_kind */
    uint32_t pad;
    char device_key[128];
    char device_model[128];
};

struct fikit_msg_register_ok {
    uint32_t slot;
    int32_t level;           /* granted: may be lower than asked ([limits]) */
    int32_t requested_level;
    uint32_t device_index;
    uint64_t generation;
    uint64_t shm_size;       /* the header's */
    uint64_t slot_gen;       /* the slot's owner generation (struct fikit_shm_owner) */
    uint64_t slot_size;
};

/* What a SLOT_FD carries. */
enum fikit_part {
    FIKIT_PART_COMMONS = 1, /* read-write: the bell and the fill word */
    FIKIT_PART_OWN = 2,     /* read-write: the task's own slot */
    FIKIT_PART_PEER = 3,    /* read-only: another task's slot, as asked with SLOT */
};

struct fikit_msg_slot {
    uint32_t device_index;
    uint32_t slot;
    uint64_t gen;            /* the owner generation the client saw in the header */
};

struct fikit_msg_slot_fd {
    uint32_t device_index;
    uint32_t slot;
    uint32_t part;           /* enum fikit_part */
    uint32_t pad;
    uint64_t gen;
    uint64_t size;
};

struct fikit_msg_error {
    int32_t code; /* negative errno */
    uint32_t pad;
    char text[256];
};

struct fikit_msg_status_device {
    uint32_t index;
    int32_t top_level;   /* FIKIT_LEVELS: none active */
    uint32_t policy;
    uint32_t ntasks;
    uint64_t substrate_cost_ns;
    uint64_t safety_margin_ns;
    uint64_t held_now;
    uint64_t grants[FIKIT_GRANT_COUNTS]; /* by enum fikit_grant_count (core/sched.h) */
    uint64_t nudges; /* held threads woken ahead of a decision */
    /* The arbiter's latency since fikitd started (see fikitd_device). */
    uint64_t pickups, pickup_p50_ns, pickup_p99_ns, pickup_max_ns;
    uint64_t passes, pass_p50_ns, pass_p99_ns, pass_max_ns;
    uint64_t trace_lost; /* events the tasks' rings lost since tracing started */
    uint32_t trace_on;
    uint32_t pad;
    char key[128];
    char model[128];
};

struct fikit_msg_status_task {
    uint32_t device_index;
    uint32_t slot;
    int32_t pid;
    int32_t level;
    int32_t requested_level;
    uint32_t uid;
    uint32_t active;
    uint32_t slowdown_ppm; /* its kernels against its profile, measured in the last second;
                            * 0: unknown (was padding: an older fikitd sends 0) */
    uint64_t launches, holds, grants, held_now;
    uint64_t fills, paces; /* gaps filled without fikitd; waits for the queue to drain */
    uint64_t idle_after_ns;
    uint32_t beside; /* runs beside higher levels (share = beside in force) */
    uint32_t pad;
    uint64_t held_longest_ns;     /* how long its longest-held launch has waited; 0: none held */
    uint64_t held_longest_dur_ns; /* that launch's predicted duration; 0: not measured */
    /* Its latency budget (docs/DESIGN.md "The budget"): 0: none. */
    uint32_t budget_ppm;
    int32_t budget_step;          /* the controller's step; -1: not steered (no budget or no reference) */
    uint32_t budget_sizes;        /* burst sizes in its reference (measured alone) */
    uint32_t budget_unmeetable;   /* step 0 broke it */
    uint32_t burst_slowdown_ppm;  /* its last burst judged, against alone; 0: none yet */
    uint32_t budget_cuts, budget_climbs;
    uint32_t budget_pace_ppm;     /* its pace now against its reference, from its quiet bursts
                                   * (core/budget.h); 0: unknown (was padding) */
    uint32_t budget_of_requests;  /* latency_budget_of = requests */
    uint32_t budget_load_ppm;     /* its busy fraction over its last bursts (core/budget.h) */
    uint32_t budget_bursts_ppm;   /* what each burst may take against its reference now */
    uint32_t budget_body_ppm;     /* its judged bursts' mean against alone's; 0: not yet (was padding) */
    uint64_t bursts, bursts_lost; /* bursts it reported that fikitd read; lost or refused */
    /* What the budgets above let it do while they are active (enum fikit_lower_mode, 0: as configured). */
    uint32_t knob_mode, knob_sm_pct;
    uint64_t knob_inflight_ns;
    char name[64];
};

/* A record made by root (a Slurm SPANK plugin in a task before its exec):
 * the process pid and every process it starts are the task `task`, asking
 * for `level` (-1: what the client asks) and allowed no higher (smaller
 * number) than `ceiling`. fikitd takes it only from root or its own user,
 * and at a registration trusts the record of the nearest ancestor over what
 * the client claims and over [limits]. */
struct fikit_msg_attest {
    int32_t pid;
    int32_t level;   /* -1, or 0..9 */
    int32_t ceiling; /* 0..9 */
    uint32_t pad;
    char task[64];
    char origin[128]; /* who says so, for the log: "slurm job 12 step 0 partition gpu" */
};

enum fikit_trace_op { FIKIT_TRACE_STOP = 0, FIKIT_TRACE_START = 1 };

struct fikit_msg_trace_ctl {
    uint32_t op;
    uint32_t pad;
};

struct fikit_msg_trace_task {
    uint32_t device_index;
    int32_t slot;
    int32_t level;
    int32_t pid;
    char name[64];
    char device_model[128];
};

#define FIKIT_TRACE_CHUNK 96

struct fikit_msg_trace_events {
    uint32_t device_index;
    uint32_t n;
    struct fikit_trace_event ev[FIKIT_TRACE_CHUNK];
};

/* The payload size of a message type (variable-length types: the maximum). */
size_t fikit_proto_payload_size(uint16_t type);

/* Validates a received packet. Returns 0 and *type, or -EPROTO with the
 * reason in why (if not NULL). */
int fikit_proto_check(const void *buf, size_t len, uint16_t *type, const char **why);

/* A task name as fikit.ini accepts it: 1 to 63 of [A-Za-z0-9_.-] (the
 * field holds 63 and its NUL). REGISTER is checked with it. */
bool fikit_proto_task_name_ok(const char *s);

/* Sends one message (and fd_to_pass if >= 0). Returns 0 or -errno. */
int fikit_proto_send(int sock, uint16_t type, const void *payload, size_t len, int fd_to_pass);
/* Receives one validated message into buf (FIKIT_MSG_MAX bytes); a passed
 * fd goes to *fd_out (else -1, and a passed fd is closed). timeout_ms < 0
 * waits forever. Returns the payload length, -ETIMEDOUT, -ECONNRESET on
 * hang-up, -EPROTO. A message with more than one fd is -EPROTO, and every fd
 * it carried is closed (up to FIKIT_PROTO_MAX_FDS are received to be closed;
 * the kernel drops the rest). */
#define FIKIT_PROTO_MAX_FDS 64
int fikit_proto_recv(int sock, void *buf, uint16_t *type, int *fd_out, int timeout_ms);
/* The payload of a received buffer. */
static inline void *fikit_proto_payload(void *buf) { return (char *)buf + sizeof(struct fikit_msg_hdr); }

/* Connects to the daemon's socket. Returns the fd or -errno. */
int fikit_proto_connect(const char *path);

#endif
