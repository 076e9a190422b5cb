/* Owns: fikitd's control plane: the listening socket, the connections of
 * clients and tools, their peer credentials and pidfds, registration, and
 * the status and trace requests. One thread, one epoll loop. */
#ifndef FIKITD_SERVER_H
#define FIKITD_SERVER_H

#include "conf/config.h"
#include "tools/fikitd/device.h"

#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#define FIKITD_MAX_DEVICES 16
#define FIKITD_MAX_CONNS 1024
#define FIKITD_MAX_REGS 8

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
    int ndevices;
    struct fikitd_conn conns[FIKITD_MAX_CONNS];
};

/* Creates the socket directory and binds the socket. Errors name the path. */
int fikitd_listen(struct fikitd *d);
/* Runs until SIGTERM or SIGINT; returns the exit status. */
int fikitd_run(struct fikitd *d);
/* Releases everything: held launches go, clients fall back to passthrough. */
void fikitd_shutdown(struct fikitd *d);

#endif
