/* Owns: fikitd's control plane: the listening socket, the connections of
 * clients and tools, their peer credentials and pidfds, registration, and
 * the status and trace requests. One thread, one epoll loop. */
#ifndef FIKITD_SERVER_H
#define FIKITD_SERVER_H

#include "conf/config.h"
#include "core/proto.h"
#include "fikitd/device.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FIKITD_MAX_CONNS 1024
#define FIKITD_MAX_REGS 8

/* What one user may take of what all share (as Redis's maxclients keeps
 * room for the administrator): root and the user fikitd runs as are
 * "privileged" and have a reserve that no other user can use up.
 * Connections: at most FIKITD_CONNS_PER_UID per other user, and the last
 * sixteenth of the connections fikitd can hold (by its descriptor limit) is
 * theirs alone. Slots: at most FIKITD_SLOTS_PER_UID of a device's per other
 * user, and its last FIKITD_SLOTS_RESERVED are theirs. Device keys (each
 * opens a device for good): at most FIKITD_DEVICES_PER_UID new ones per
 * other user, and the last FIKITD_DEVICES_RESERVED are theirs. */
#define FIKITD_CONNS_PER_UID 128
#define FIKITD_SLOTS_PER_UID 32
#define FIKITD_SLOTS_RESERVED 8
#define FIKITD_DEVICES_PER_UID 8
#define FIKITD_DEVICES_RESERVED 4
/* Descriptors fikitd keeps for itself (devices, logs, epoll, lookups)
 * beside the two of each connection (socket, pidfd). */
#define FIKITD_FDS_OWN 64

/* A reply that could not be sent at once, in order, with the descriptor it
 * passes (-1: none; a duplicate the queue owns). */
struct fikitd_out {
    struct fikitd_out *next;
    int fd;
    uint16_t type;
    size_t len;
    unsigned char payload[];
};

/* What a connection may have queued for it at most: two full status
 * replies (16 devices of 64 tasks). A client that asks for more than it
 * reads is dropped past it, as Redis's client-output-buffer-limit does, and
 * no send ever waits for a reader. */
#define FIKITD_OUT_MAX (512u * 1024)
/* A trace dump is made as the reader drains it: more chunks are queued only
 * while less than this is waiting. */
#define FIKITD_OUT_LOW (64u * 1024)

struct fikitd_conn {
    bool used;
    bool doomed; /* to be closed once the message being handled is done */
    int id;
    uint16_t gen; /* which use of this id: an event of a closed one is stale */
    int fd;
    int pidfd; /* -1 if pidfd_open is not available */
    pid_t pid;
    uid_t uid;
    gid_t gid;
    struct {
        int device;
        int slot;
    } regs[FIKITD_MAX_REGS];
    int nregs;
    /* Output that the socket did not take yet. */
    struct fikitd_out *out_head, *out_tail;
    size_t out_bytes;
    bool want_out; /* EPOLLOUT is on */
    /* A trace dump in progress: the device it is at, its events and how far. */
    bool dumping;
    bool dump_have_dev;
    int dump_dev;
    struct fikit_trace_event *dump_ev;
    size_t dump_n, dump_k;
};

struct fikitd {
    struct fikit_config cfg;
    char config_path[4096];
    char socket_path[4096];
    uint64_t generation;
    int listen_fd;
    int epoll_fd;
    int signal_fd;
    bool trace_at_start;
    bool activated; /* the socket came from systemd */
    struct fikitd_device *devices[FIKITD_MAX_DEVICES];
    uid_t device_uid[FIKITD_MAX_DEVICES]; /* who opened each device */
    int ndevices;
    int max_conns;  /* what the descriptor limit allows, at most FIKITD_MAX_CONNS */
    int nconns;
    int spare_fd;   /* closed to accept and drop a connection at EMFILE (libuv's trick) */
    uint64_t emfile_warned_ns, refuse_warned_ns; /* at most one line each per 10 s */
    struct fikitd_conn conns[FIKITD_MAX_CONNS];
};

/* Creates the socket directory and binds the socket. Errors name the path. */
/* fikitd's state-directory files: fikitd/daemon_files.h. */

int fikitd_listen(struct fikitd *d);
/* Raises the descriptor limit to its hard limit, sizes the connections
 * from it and opens the spare descriptor. Returns 0 or -errno. */
int fikitd_limits_init(struct fikitd *d);
/* Runs until SIGTERM or SIGINT; returns the exit status. */
int fikitd_run(struct fikitd *d);
/* Releases everything: held launches go, clients fall back to passthrough. */
void fikitd_shutdown(struct fikitd *d);

#endif
