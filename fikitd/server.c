#include "fikitd/server.h"
#include "fikitd/daemon_files.h"
#include "fikitd/attest.h"
#include "fikitd/metrics.h"

#include "core/calibration.h"
#include "core/clock.h"
#include "core/log.h"
#include "core/proto.h"

#include <errno.h>
#include <stddef.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <unistd.h>

/* epoll data: small integers, tagged by kind */
#define TAG_LISTEN 1ull
#define TAG_SIGNAL 2ull
#define TAG_METRICS 3ull
#define TAG_CONN (1ull << 32)
#define TAG_PIDFD (2ull << 32)
/* A connection's epoll tag: its kind, its id (bits 0-15) and which use of
 * that id it is (bits 16-31). One epoll batch can hold an event of a
 * connection that an earlier event in it closed, and an accept in between
 * can reuse its id: without the generation that event would act on the new
 * connection (a hang-up would close it). */
#define TAG_ID_MASK 0xffffull
#define TAG_GEN_SHIFT 16
_Static_assert(FIKITD_MAX_CONNS <= TAG_ID_MASK + 1, "connection ids fit the epoll tag");

static uint64_t conn_tag(uint64_t kind, const struct fikitd_conn *c)
{
    return kind | (uint64_t)c->gen << TAG_GEN_SHIFT | (uint64_t)c->id;
}

static int mkdir_p(const char *dir, mode_t mode)
{
    char buf[PATH_MAX];
    snprintf(buf, sizeof buf, "%s", dir);
    for (char *p = buf + 1; *p; p++) {
        if (*p != '/')
            continue;
        *p = '\0';
        if (mkdir(buf, 0755) != 0 && errno != EEXIST)
            return -errno;
        *p = '/';
    }
    if (mkdir(buf, mode) != 0 && errno != EEXIST)
        return -errno;
    return 0;
}

/* systemd socket activation (fikitd.socket): the socket is fd 3. */
static int activated_socket(struct fikitd *d)
{
    const char *pid = getenv("LISTEN_PID"), *fds = getenv("LISTEN_FDS");
    if (!pid || !fds || atoi(pid) != (int)getpid() || atoi(fds) < 1)
        return -1;
    int type = 0;
    socklen_t len = sizeof type;
    struct sockaddr_un sa = {0};
    socklen_t salen = sizeof sa;
    if (getsockopt(3, SOL_SOCKET, SO_TYPE, &type, &len) != 0 || type != SOCK_SEQPACKET ||
        getsockname(3, (struct sockaddr *)&sa, &salen) != 0 || sa.sun_family != AF_UNIX) {
        fikit_error("LISTEN_FDS: fd 3 is not a Unix SOCK_SEQPACKET socket (ListenSequentialPacket= in "
                    "fikitd.socket)");
        return -1;
    }
    snprintf(d->socket_path, sizeof d->socket_path, "%s", sa.sun_path);
    fcntl(3, F_SETFD, FD_CLOEXEC);
    fcntl(3, F_SETFL, fcntl(3, F_GETFL) | O_NONBLOCK);
    unsetenv("LISTEN_PID");
    unsetenv("LISTEN_FDS");
    unsetenv("LISTEN_FDNAMES");
    d->activated = true;
    return 3;
}

int fikitd_listen(struct fikitd *d)
{
    int act = activated_socket(d);
    if (act >= 0) {
        d->listen_fd = act;
        return 0;
    }
    int rc = fikit_config_socket_path(&d->cfg, d->socket_path, sizeof d->socket_path);
    if (rc) {
        fikit_error("socket path too long");
        return rc;
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", d->socket_path);
    char *slash = strrchr(dir, '/');
    if (slash && slash != dir) {
        *slash = '\0';
        /* As root the directory is for everyone to reach the socket; as a
         * user, for that user alone. The socket itself is never world-writable. */
        rc = mkdir_p(dir, geteuid() == 0 ? 0755 : 0700);
        if (rc) {
            fikit_error("cannot create the socket directory %s: %s", dir, strerror(-rc));
            return rc;
        }
    }
    /* The socket is bound under a temporary name, given its group and mode,
     * made to listen, and only then renamed into place: a client (or a test)
     * that sees the path sees a socket that is ready and already has the
     * permissions it will keep. */
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    char tmp[sizeof sa.sun_path];
    if (strlen(d->socket_path) + strlen(".new") >= sizeof tmp) {
        fikit_error("socket path %s is longer than %zu bytes", d->socket_path, sizeof sa.sun_path - 5);
        return -ENAMETOOLONG;
    }
    strcpy(tmp, d->socket_path);
    strcat(tmp, ".new");
    strcpy(sa.sun_path, tmp);
    /* A live daemon keeps its socket; a stale file from a dead one goes. */
    int probe = fikit_proto_connect(d->socket_path);
    if (probe >= 0) {
        /* Who listens there: the kernel says who called listen(), which a
         * detached fikitd did before it forked; its pid file says the rest. */
        struct ucred cr = {0};
        socklen_t len = sizeof cr;
        int pid = getsockopt(probe, SOL_SOCKET, SO_PEERCRED, &cr, &len) == 0 ? (int)cr.pid : 0;
        close(probe);
        char live[64];
        int from_file = fikitd_running_pid(&d->cfg);
        if (from_file > 0)
            pid = from_file;
        snprintf(live, sizeof live, "/proc/%d", pid);
        if (pid > 0 && access(live, F_OK) == 0)
            fikit_error("another fikitd is already listening on %s: pid %d (stop it with kill %d, or give "
                        "this one another [daemon] socket or --socket)", d->socket_path, pid, pid);
        else
            fikit_error("another fikitd is already listening on %s", d->socket_path);
        return -EADDRINUSE;
    }
    unlink(tmp);
    d->listen_fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (d->listen_fd < 0)
        return -errno;
    mode_t old = umask(0077);
    rc = bind(d->listen_fd, (struct sockaddr *)&sa, sizeof sa);
    umask(old);
    if (rc != 0) {
        rc = -errno;
        fikit_error("cannot bind %s: %s", tmp, strerror(-rc));
        close(d->listen_fd);
        return rc;
    }
    /* Who may connect: the owner, and the socket group if one is set (as
     * root, the group "fikit" when it exists). Never everyone. */
    const char *group = d->cfg.socket_group[0] ? d->cfg.socket_group : geteuid() == 0 ? "fikit" : NULL;
    struct group *g = group ? getgrnam(group) : NULL;
    if (group && !g && d->cfg.socket_group[0])
        fikit_warn("[daemon] socket_group = %s: no such group; only %s may connect", group,
                   geteuid() == 0 ? "root" : "this user");
    if (g && (chown(tmp, geteuid(), g->gr_gid) != 0 || chmod(tmp, 0660) != 0))
        fikit_warn("cannot give %s to group %s: %s; only %s may connect", d->socket_path, group,
                   strerror(errno), geteuid() == 0 ? "root" : "this user");
    if (listen(d->listen_fd, 128) != 0 || rename(tmp, d->socket_path) != 0) {
        rc = -errno;
        fikit_error("cannot listen on %s: %s", d->socket_path, strerror(-rc));
        unlink(tmp);
        close(d->listen_fd);
        return rc;
    }
    return 0;
}

/* The connection an epoll tag names, if it is still that one. */
static struct fikitd_conn *conn_of_tag(struct fikitd *d, uint64_t tag)
{
    int id = (int)(tag & TAG_ID_MASK);
    uint16_t gen = (uint16_t)(tag >> TAG_GEN_SHIFT);
    if (id >= FIKITD_MAX_CONNS || !d->conns[id].used || d->conns[id].gen != gen)
        return NULL;
    return &d->conns[id];
}

static void free_out(struct fikitd_conn *c)
{
    while (c->out_head) {
        struct fikitd_out *o = c->out_head;
        c->out_head = o->next;
        if (o->fd >= 0)
            close(o->fd);
        free(o);
    }
    c->out_tail = NULL;
    c->out_bytes = 0;
    free(c->dump_ev);
    c->dump_ev = NULL;
    c->dumping = false;
}

static void close_conn(struct fikitd *d, struct fikitd_conn *c, const char *why)
{
    free_out(c);
    d->nconns--;
    for (int i = 0; i < c->nregs; i++) {
        struct fikitd_device *dev = d->devices[c->regs[i].device];
        fikit_info("device %d: task in slot %d (pid %d) gone: %s", dev->index, c->regs[i].slot,
                   (int)c->pid, why);
        fikitd_device_remove_task(dev, c->regs[i].slot);
    }
    epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, c->fd, NULL);
    close(c->fd);
    if (c->pidfd >= 0) {
        epoll_ctl(d->epoll_fd, EPOLL_CTL_DEL, c->pidfd, NULL);
        close(c->pidfd);
    }
    c->used = false;
}

static bool privileged(uid_t uid) { return uid == 0 || uid == geteuid(); }

/* Refuses a connection with a reason the client prints, then closes it. */
static void refuse_conn(int fd, int code, const char *text)
{
    /* What the client sent already is read first: closing a socket with
     * unread data resets it, and the client would lose the reason. */
    char buf[256];
    for (int i = 0; i < 16 && recv(fd, buf, sizeof buf, MSG_DONTWAIT) > 0; i++)
        ;
    struct fikit_msg_error m = {.code = code};
    snprintf(m.text, sizeof m.text, "%s", text);
    fikit_proto_send(fd, FIKIT_MSG_ERROR, &m, sizeof m, -1); /* non-blocking: best effort */
    close(fd);
}

int fikitd_limits_init(struct fikitd *d)
{
    /* As many descriptors as the hard limit allows; the connections are
     * sized from what that leaves, so fikitd runs out of connections (and
     * says so) before it runs out of descriptors. */
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    long nofile = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
                      ? (long)rl.rlim_cur : FIKITD_MAX_CONNS * 2L + FIKITD_FDS_OWN;
    /* A connection holds its socket, the slot of the task it registers
     * (a descriptor each in fikitd) and, for a moment, a reopened peer slot
     * it asks for. A connection that registers on several devices holds a
     * slot on each: past the limit such a registration is refused with the
     * reason, never half made. */
    long conns = (nofile - FIKITD_FDS_OWN) / 3;
    d->max_conns = conns > FIKITD_MAX_CONNS ? FIKITD_MAX_CONNS : conns < 4 ? 4 : (int)conns;
    d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    if (d->spare_fd < 0)
        return -errno;
    fikit_info("up to %d connections (descriptor limit %ld); %d a user, %d kept for root and "
               "fikitd's user", d->max_conns, nofile, FIKITD_CONNS_PER_UID, d->max_conns / 16 + 1);
    return 0;
}

/* At EMFILE the listening socket stays readable: without a descriptor to
 * accept with, the loop would spin on it. The spare goes, the connection
 * is accepted and closed, and the spare comes back. */
static bool drop_one_at_emfile(struct fikitd *d)
{
    uint64_t now = fikit_now_ns();
    if (now - d->emfile_warned_ns > 10 * FIKIT_NS_PER_S) {
        d->emfile_warned_ns = now;
        fikit_warn("out of descriptors (%s): refusing new connections until some close",
                   strerror(errno));
    }
    if (d->spare_fd >= 0) {
        close(d->spare_fd);
        d->spare_fd = -1;
    }
    int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
    if (fd >= 0)
        refuse_conn(fd, -EMFILE, "fikitd is out of descriptors; try again later");
    d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    return fd >= 0; /* else nothing more to accept, or no spare to do it with */
}

static void accept_conns(struct fikitd *d)
{
    for (;;) {
        int fd = accept4(d->listen_fd, NULL, NULL, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE) {
                if (drop_one_at_emfile(d))
                    continue;
                return;
            }
            if (errno == EINTR || errno == ECONNABORTED)
                continue;
            return;
        }
        struct ucred cred;
        socklen_t len = sizeof cred;
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) != 0) {
            close(fd);
            continue;
        }
        /* The last sixteenth is for root and fikitd's own user. */
        int reserve = d->max_conns / 16 + 1, mine = 0;
        bool priv = privileged(cred.uid);
        for (int i = 0; !priv && i < FIKITD_MAX_CONNS; i++)
            mine += d->conns[i].used && d->conns[i].uid == cred.uid;
        char why[200] = "";
        if (d->nconns >= d->max_conns)
            snprintf(why, sizeof why, "fikitd has %d connections, all it can hold", d->nconns);
        else if (!priv && d->nconns >= d->max_conns - reserve)
            snprintf(why, sizeof why, "fikitd has %d connections; the last %d are kept for root",
                     d->nconns, reserve);
        else if (!priv && mine >= FIKITD_CONNS_PER_UID)
            snprintf(why, sizeof why, "uid %u has %d connections to fikitd, the most one user may have",
                     (unsigned)cred.uid, mine);
        int id = -1;
        for (int i = 0; !why[0] && i < FIKITD_MAX_CONNS; i++)
            if (!d->conns[i].used) {
                id = i;
                break;
            }
        if (id < 0) {
            uint64_t now = fikit_now_ns();
            if (now - d->refuse_warned_ns > 10 * FIKIT_NS_PER_S) {
                d->refuse_warned_ns = now;
                fikit_warn("refusing pid %d (uid %u): %s", (int)cred.pid, (unsigned)cred.uid,
                           why[0] ? why : "no connection free");
            }
            refuse_conn(fd, -EUSERS, why[0] ? why : "fikitd has no connection free");
            continue;
        }
        struct fikitd_conn *c = &d->conns[id];
        uint16_t gen = (uint16_t)(c->gen + 1);
        *c = (struct fikitd_conn){.used = true, .id = id, .gen = gen, .fd = fd, .pidfd = -1,
                                  .pid = cred.pid, .uid = cred.uid, .gid = cred.gid};
        d->nconns++;
        struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP, .data.u64 = conn_tag(TAG_CONN, c)};
        epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, fd, &ev);
    }
}

/* A pidfd tells when the client process exits even if a child it forked
 * still holds the socket. */
static void watch_pid(struct fikitd *d, struct fikitd_conn *c)
{
    if (c->pidfd >= 0)
        return;
    int pfd = (int)syscall(SYS_pidfd_open, c->pid, 0);
    if (pfd < 0)
        return;
    c->pidfd = pfd;
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = conn_tag(TAG_PIDFD, c)};
    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, pfd, &ev);
}

/* ------------------------------------------------------------- output */

/* EPOLLOUT only while something waits to be sent. */
static void watch_out(struct fikitd *d, struct fikitd_conn *c)
{
    bool want = c->out_head != NULL;
    if (want == c->want_out)
        return;
    c->want_out = want;
    struct epoll_event ev = {.events = EPOLLIN | EPOLLRDHUP | (want ? EPOLLOUT : 0),
                             .data.u64 = conn_tag(TAG_CONN, c)};
    epoll_ctl(d->epoll_fd, EPOLL_CTL_MOD, c->fd, &ev);
}

/* Sends one message to a connection without ever waiting: what the socket
 * does not take now is queued, in order, and sent as the reader drains it.
 * Past FIKITD_OUT_MAX queued the connection is marked for closing. Returns
 * 0, or -errno once the connection is to be closed (then nothing more is
 * sent to it). */
static int conn_send(struct fikitd_conn *c, uint16_t type, const void *payload, size_t len,
                     int fd_to_pass)
{
    if (c->doomed)
        return -EPIPE;
    if (!c->out_head) {
        int rc = fikit_proto_send(c->fd, type, payload, len, fd_to_pass);
        if (rc == 0)
            return 0;
        if (rc != -EAGAIN && rc != -ENOBUFS) {
            c->doomed = true;
            return rc;
        }
    }
    if (c->out_bytes + len + sizeof(struct fikitd_out) > FIKITD_OUT_MAX) {
        fikit_warn("pid %d (uid %u) does not read its replies: more than %u KiB waiting; closing "
                   "its connection", (int)c->pid, (unsigned)c->uid, FIKITD_OUT_MAX / 1024);
        c->doomed = true;
        return -ENOBUFS;
    }
    struct fikitd_out *o = malloc(sizeof *o + len);
    int dup_fd = fd_to_pass >= 0 ? fcntl(fd_to_pass, F_DUPFD_CLOEXEC, 0) : -1;
    if (!o || (fd_to_pass >= 0 && dup_fd < 0)) {
        fikit_warn("pid %d (uid %u): no room to queue a reply (%s); closing its connection",
                   (int)c->pid, (unsigned)c->uid, strerror(o ? errno : ENOMEM));
        free(o);
        if (dup_fd >= 0)
            close(dup_fd);
        c->doomed = true;
        return -ENOMEM;
    }
    o->next = NULL;
    o->fd = dup_fd;
    o->type = type;
    o->len = len;
    if (len)
        memcpy(o->payload, payload, len);
    if (c->out_tail)
        c->out_tail->next = o;
    else
        c->out_head = o;
    c->out_tail = o;
    c->out_bytes += len + sizeof *o;
    return 0;
}

/* Sends what is queued until the socket is full again. */
static void flush_out(struct fikitd_conn *c)
{
    while (c->out_head && !c->doomed) {
        struct fikitd_out *o = c->out_head;
        int rc = fikit_proto_send(c->fd, o->type, o->payload, o->len, o->fd);
        if (rc == -EAGAIN || rc == -ENOBUFS)
            return;
        if (rc) {
            c->doomed = true;
            return;
        }
        c->out_head = o->next;
        if (!c->out_head)
            c->out_tail = NULL;
        c->out_bytes -= o->len + sizeof *o;
        if (o->fd >= 0)
            close(o->fd);
        free(o);
    }
}

static void send_error(struct fikitd_conn *c, int code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void send_error(struct fikitd_conn *c, int code, const char *fmt, ...)
{
    struct fikit_msg_error m = {.code = code};
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(m.text, sizeof m.text, fmt, ap);
    va_end(ap);
    conn_send(c, FIKIT_MSG_ERROR, &m, sizeof m, -1);
}

/* on_host: the registering client's device computes on this host's CPUs
 * (the first registration of a device decides how its held launches spin). */
static struct fikitd_device *device_for(struct fikitd *d, const char *key, const char *model,
                                        bool on_host, uid_t uid, int *err)
{
    for (int i = 0; i < d->ndevices; i++)
        if (strcmp(d->devices[i]->key, key) == 0)
            return d->devices[i];
    if (d->ndevices == FIKITD_MAX_DEVICES) {
        *err = -ENOSPC;
        return NULL;
    }
    if (!privileged(uid)) {
        int mine = 0;
        for (int i = 0; i < d->ndevices; i++)
            mine += d->device_uid[i] == uid;
        if (mine >= FIKITD_DEVICES_PER_UID || d->ndevices >= FIKITD_MAX_DEVICES - FIKITD_DEVICES_RESERVED) {
            *err = -EDQUOT;
            return NULL;
        }
    }
    /* substrate_cost_us = auto: what `fikit calibrate` measured for this
     * substrate and device model, else the substrate's default. */
    char state[PATH_MAX];
    int64_t calibrated = -1;
    fikit_config_state_dir(&d->cfg, state, sizeof state);
    if (fikit_calibration_get(state, fikit_substrate_name(d->cfg.substrate), model, &calibrated) == 0)
        fikit_info("device %s: calibrated switch cost %lld us (%s/calibration)", key,
                   (long long)calibrated / 1000, state);
    struct fikit_sched_params p;
    fikit_config_sched_params(&d->cfg, calibrated, &p);
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    uint64_t spin_ns = fikit_config_spin_ns(&d->cfg, cpus, on_host);
    struct fikitd_device *dev;
    *err = fikitd_device_open(&dev, d->ndevices, key, model, &p, d->cfg.poll_ns, spin_ns,
                              d->cfg.warn_held_ns, d->generation, d->cfg.trace_events);
    if (*err)
        return NULL;
    d->device_uid[d->ndevices] = uid;
    d->devices[d->ndevices++] = dev;
    char spin[64];
    if (spin_ns == FIKIT_SPIN_ALWAYS)
        snprintf(spin, sizeof spin, "always");
    else
        snprintf(spin, sizeof spin, "%llu us", (unsigned long long)spin_ns / 1000);
    fikit_info("device %d: %s (%s): policy %s, substrate cost %llu us, margin %llu us, "
               "held launches spin %s%s (%ld CPUs%s)",
               dev->index, key, model, fikit_policy_name(p.policy),
               (unsigned long long)p.substrate_cost_ns / 1000,
               (unsigned long long)p.safety_margin_ns / 1000, spin,
               d->cfg.spin_ns == FIKIT_SPIN_AUTO ? " (spin_us = auto)" : "", cpus,
               on_host ? ", the device computes on them" : "");
    if (d->trace_at_start)
        fikitd_device_set_trace(dev, true);
    return dev;
}

static void handle_register(struct fikitd *d, struct fikitd_conn *c, const struct fikit_msg_register *m)
{
    if (c->nregs == FIKITD_MAX_REGS) {
        send_error(c, -ENOSPC, "one process may use at most %d devices", FIKITD_MAX_REGS);
        return;
    }
    /* Like nice limits: the credentials of the peer decide how high it may go. */
    /* The lookup may need a descriptor (the user and group files): the
     * spare lends it one. */
    if (d->spare_fd >= 0) {
        close(d->spare_fd);
        d->spare_fd = -1;
    }
    /* A record root made of the process or an ancestor (a Slurm task)
     * decides its name and ceiling instead of [limits] and the client. */
    const struct fikitd_attest *att = fikitd_attest_find(c->pid);
    int allowed = att ? att->ceiling : fikit_config_max_priority(&d->cfg, c->uid, c->gid);
    d->spare_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
    struct fikit_msg_register attested;
    if (att) {
        attested = *m;
        snprintf(attested.task, sizeof attested.task, "%s", att->task);
        if (att->level >= 0)
            attested.level = att->level;
        if (strcmp(m->task, att->task) || attested.level != m->level)
            fikit_info("task %s (pid %d) at priority %d is %s at priority %d: %s says so", m->task,
                       (int)c->pid, m->level, att->task, attested.level, att->origin);
        m = &attested;
    }
    if (allowed < 0) {
        /* Guessing would either lift a capped user or cap an allowed one. */
        fikit_warn("task %s (pid %d, uid %u) refused: cannot look up its [limits]: %s", m->task,
                   (int)c->pid, (unsigned)c->uid, strerror(-allowed));
        send_error(c, allowed, "fikitd cannot look up the [limits] of uid %u: %s; refused",
                   (unsigned)c->uid, strerror(-allowed));
        return;
    }
    int level = m->level < allowed ? allowed : m->level;
    if (level != m->level)
        fikit_info("task %s (pid %d, uid %u) asked for priority %d; %s allows %d at most",
                   m->task, (int)c->pid, (unsigned)c->uid, m->level, att ? att->origin : "[limits]",
                   allowed);
    int err = 0;
    struct fikitd_device *dev = device_for(d, m->device_key, m->device_model,
                                           (m->flags & FIKIT_REGISTER_DEVICE_ON_HOST) != 0, c->uid, &err);
    if (!dev && err == -EDQUOT) {
        send_error(c, err, "cannot open device %s: uid %u may open %d devices in fikitd, and the "
                   "last %d of %d are kept for root", m->device_key, (unsigned)c->uid,
                   FIKITD_DEVICES_PER_UID, FIKITD_DEVICES_RESERVED, FIKITD_MAX_DEVICES);
        return;
    }
    if (!dev) {
        send_error(c, err, "cannot open device %s: %s", m->device_key, strerror(-err));
        return;
    }
    if (!privileged(c->uid)) {
        int used = 0, mine = 0;
        for (int i = 0; i < FIKITD_MAX_CONNS; i++) {
            const struct fikitd_conn *o = &d->conns[i];
            for (int r = 0; o->used && r < o->nregs; r++) {
                if (o->regs[r].device != dev->index)
                    continue;
                used++;
                mine += o->uid == c->uid;
            }
        }
        if (mine >= FIKITD_SLOTS_PER_UID || used >= FIKIT_SHM_SLOTS - FIKITD_SLOTS_RESERVED) {
            send_error(c, -EDQUOT, "device %s: uid %u has %d of the %d tasks there, at most %d a user, "
                       "and the last %d are kept for root", m->device_key, (unsigned)c->uid, mine, used,
                       FIKITD_SLOTS_PER_UID, FIKITD_SLOTS_RESERVED);
            return;
        }
    }
    /* Its latency budget and SM share as this fikitd's configuration says. */
    const struct fikit_task_conf *tc = fikit_config_task(&d->cfg, m->task);
    struct fikit_task_sharing sharing;
    fikit_config_task_sharing(&d->cfg, tc, level, &sharing);
    int slot = fikitd_device_add_task(dev, c->id, c->pid, c->uid, m->task, level, m->level,
                                      (m->flags & FIKIT_REGISTER_BESIDE) != 0,
                                      fikit_config_task_budget(&d->cfg, tc, level),
                                      fikit_config_task_budget_of_requests(&d->cfg, tc),
                                      (uint32_t)fikit_task_sm_share(&sharing));
    if (slot == -ENOSPC) {
        send_error(c, slot, "device %s already has %d tasks", m->device_key, FIKIT_SHM_SLOTS);
        return;
    }
    if (slot < 0) {
        /* Its slot's memory could not be made: out of descriptors (each
         * task's slot holds one in fikitd) or of memory. */
        fikit_warn("cannot make a slot for task %s (pid %d) on device %s: %s", m->task, (int)c->pid,
                   m->device_key, strerror(-slot));
        send_error(c, slot, "fikitd cannot make the task's slot on device %s: %s%s", m->device_key,
                   strerror(-slot), slot == -EMFILE || slot == -ENFILE ? " (fikitd's descriptor limit)" : "");
        return;
    }
    uint64_t gen = dev->slots[slot].gen;
    struct fikit_msg_register_ok ok = {.slot = (uint32_t)slot, .level = level,
                                       .requested_level = m->level,
                                       .device_index = (uint32_t)dev->index,
                                       .generation = d->generation, .shm_size = FIKIT_SHM_SIZE,
                                       .slot_gen = gen, .slot_size = FIKIT_SHM_SLOT_SIZE};
    /* The header read-only, then the commons and the task's own slot. */
    struct fikit_msg_slot_fd com = {.device_index = (uint32_t)dev->index, .part = FIKIT_PART_COMMONS,
                                    .size = FIKIT_SHM_COMMONS_SIZE};
    struct fikit_msg_slot_fd own = {.device_index = (uint32_t)dev->index, .slot = (uint32_t)slot,
                                    .part = FIKIT_PART_OWN, .gen = gen, .size = FIKIT_SHM_SLOT_SIZE};
    if (conn_send(c, FIKIT_MSG_REGISTER_OK, &ok, sizeof ok, dev->hdr_fd) != 0 ||
        conn_send(c, FIKIT_MSG_SLOT_FD, &com, sizeof com, dev->com_fd) != 0 ||
        conn_send(c, FIKIT_MSG_SLOT_FD, &own, sizeof own, dev->slot_fd[slot]) != 0) {
        fikitd_device_remove_task(dev, slot);
        return;
    }
    c->regs[c->nregs].device = dev->index;
    c->regs[c->nregs].slot = slot;
    c->nregs++;
    watch_pid(d, c);
    fikit_info("device %d: task %s (pid %d) registered in slot %d at priority %d%s%s", dev->index,
               m->task, (int)c->pid, slot, level, (m->flags & FIKIT_REGISTER_MEASURE) ? ", measuring" : "",
               (m->flags & FIKIT_REGISTER_BESIDE) ? ", beside higher levels" : "");
    /* Programs of one task name share one profile per device model: each
     * saves what it learned over the other's. (The server thread alone adds
     * and removes tasks, so their names are read here without the lock.) */
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
        const struct fikitd_slot_info *o = &dev->slots[s];
        if (s != slot && o->used && o->pid != c->pid && strcmp(o->name, m->task) == 0) {
            fikit_warn("device %d: task %s runs in pid %d and pid %d: both learn into one profile, "
                       "each saving over the other's records; give one another name "
                       "(fikit-launch --task NAME)", dev->index, m->task, (int)o->pid, (int)c->pid);
            break;
        }
    }
}

/* Root (or fikitd's own user) says who a process is: see attest.h. */
static void handle_attest(struct fikitd_conn *c, const struct fikit_msg_attest *m)
{
    if (!privileged(c->uid)) {
        fikit_warn("pid %d (uid %u) sent a task record; only root may", (int)c->pid, (unsigned)c->uid);
        send_error(c, -EPERM, "only root and the user fikitd runs as may say who a process is");
        return;
    }
    int rc = fikitd_attest_add(m);
    if (rc) {
        send_error(c, rc, "cannot keep the record of pid %d: %s", (int)m->pid,
                   rc == -ENOSPC ? "too many live records" : strerror(-rc));
        return;
    }
    fikit_info("pid %d is task %s, priority %d, at most %d: %s", (int)m->pid, m->task, m->level,
               m->ceiling, m->origin);
    conn_send(c, FIKIT_MSG_OK, NULL, 0, -1);
}

static void handle_status(struct fikitd *d, struct fikitd_conn *c)
{
    uint64_t now = fikit_now_ns();
    int rc = 0;
    for (int i = 0; rc == 0 && i < d->ndevices; i++) {
        struct fikit_msg_status_device md;
        struct fikit_msg_status_task tasks[FIKIT_SHM_SLOTS];
        int nt = fikitd_status_device(d->devices[i], now, &md, tasks);
        if (rc == 0)
            rc = conn_send(c, FIKIT_MSG_STATUS_DEVICE, &md, sizeof md, -1);
        for (int k = 0; rc == 0 && k < nt; k++)
            rc = conn_send(c, FIKIT_MSG_STATUS_TASK, &tasks[k], sizeof tasks[k], -1);
    }
    if (rc == 0)
        conn_send(c, FIKIT_MSG_END, NULL, 0, -1);
}

/* A trace dump is made as the reader takes it: each device's events are
 * copied when the dump reaches the device, and chunks are queued only while
 * less than FIKITD_OUT_LOW waits, so a slow reader gets all of it, END last,
 * and neither stalls fikitd nor makes it hold the whole dump. */
static void dump_pump(struct fikitd *d, struct fikitd_conn *c)
{
    while (c->dumping && !c->doomed && c->out_bytes < FIKITD_OUT_LOW) {
        if (!c->dump_have_dev) {
            if (c->dump_dev >= d->ndevices) {
                c->dumping = false;
                conn_send(c, FIKIT_MSG_END, NULL, 0, -1);
                return;
            }
            struct fikitd_device *dev = d->devices[c->dump_dev];
            c->dump_n = fikitd_device_copy_trace(dev, &c->dump_ev);
            c->dump_k = 0;
            c->dump_have_dev = true;
            for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
                const struct fikit_trace_task *t = &dev->trace_tasks[s];
                if (!t->name[0])
                    continue;
                struct fikit_msg_trace_task m = {.device_index = (uint32_t)dev->index, .slot = s,
                                                 .level = t->level, .pid = t->pid};
                snprintf(m.name, sizeof m.name, "%s", t->name);
                snprintf(m.device_model, sizeof m.device_model, "%s", dev->model);
                if (conn_send(c, FIKIT_MSG_TRACE_TASK, &m, sizeof m, -1))
                    return;
            }
            continue;
        }
        if (c->dump_k >= c->dump_n) {
            free(c->dump_ev);
            c->dump_ev = NULL;
            c->dump_have_dev = false;
            c->dump_dev++;
            continue;
        }
        static struct fikit_msg_trace_events chunk; /* fikitd's control plane is one thread */
        size_t m = c->dump_n - c->dump_k < FIKIT_TRACE_CHUNK ? c->dump_n - c->dump_k : FIKIT_TRACE_CHUNK;
        memset(&chunk, 0, sizeof chunk);
        chunk.device_index = (uint32_t)d->devices[c->dump_dev]->index;
        chunk.n = (uint32_t)m;
        memcpy(chunk.ev, c->dump_ev + c->dump_k, m * sizeof *c->dump_ev);
        c->dump_k += m;
        if (conn_send(c, FIKIT_MSG_TRACE_EVENTS, &chunk, sizeof chunk, -1))
            return;
    }
}

static void handle_trace_dump(struct fikitd *d, struct fikitd_conn *c)
{
    if (c->dumping)
        return; /* one at a time; the one in progress ends with END */
    c->dumping = true;
    c->dump_have_dev = false;
    c->dump_dev = 0;
    dump_pump(d, c);
}

/* A read-only fd of another task's slot, for a client registered on its
 * device: what its admission reads of the tasks above it. The slot must
 * still be of the generation the client saw. (The server thread alone adds
 * and removes tasks: dev->slots and slot_fd are read here without the
 * lock.) */
static void handle_slot(struct fikitd *d, struct fikitd_conn *c, const struct fikit_msg_slot *m)
{
    bool registered = false;
    for (int r = 0; r < c->nregs; r++)
        registered |= c->regs[r].device == (int)m->device_index;
    if (!registered || m->device_index >= (uint32_t)d->ndevices) {
        send_error(c, -EPERM, "slots are given to tasks registered on their device");
        return;
    }
    struct fikitd_device *dev = d->devices[m->device_index];
    const struct fikitd_slot_info *info = &dev->slots[m->slot];
    if (!info->used || info->gen != m->gen || dev->slot_fd[m->slot] < 0) {
        send_error(c, -ESTALE, "slot %u of device %u is no longer of generation %llu", m->slot,
                   m->device_index, (unsigned long long)m->gen);
        return;
    }
    int ro = fikit_shm_reopen_ro(dev->slot_fd[m->slot]);
    if (ro < 0) {
        send_error(c, ro, "cannot reopen slot %u read-only: %s", m->slot, strerror(-ro));
        return;
    }
    struct fikit_msg_slot_fd peer = {.device_index = m->device_index, .slot = m->slot,
                                     .part = FIKIT_PART_PEER, .gen = m->gen, .size = FIKIT_SHM_SLOT_SIZE};
    conn_send(c, FIKIT_MSG_SLOT_FD, &peer, sizeof peer, ro);
    close(ro);
}

static void handle_message(struct fikitd *d, struct fikitd_conn *c)
{
    char buf[FIKIT_MSG_MAX];
    uint16_t type;
    int n = fikit_proto_recv(c->fd, buf, &type, NULL, 0);
    if (n == -ETIMEDOUT || n == -EAGAIN)
        return;
    if (n == -EPROTO) {
        fikit_warn("pid %d sent a malformed message; closing its connection", (int)c->pid);
        close_conn(d, c, "malformed message");
        return;
    }
    if (n < 0) {
        close_conn(d, c, "disconnected");
        return;
    }
    void *payload = fikit_proto_payload(buf);
    switch (type) {
    case FIKIT_MSG_HELLO: {
        struct fikit_msg_hello_ok ok = {.pid = (int32_t)getpid(), .ndevices = (uint32_t)d->ndevices,
                                        .generation = d->generation};
        snprintf(ok.version, sizeof ok.version, "%s", FIKIT_VERSION);
        const char *src = d->cfg.source[0] ? d->cfg.source : "(built-in defaults)";
        size_t len = strlen(src);
        /* Keep the tail of a long path: it is the informative part. */
        if (len >= sizeof ok.config) {
            src += len - (sizeof ok.config - 1);
            len = sizeof ok.config - 1;
        }
        memcpy(ok.config, src, len);
        ok.config[len] = '\0';
        conn_send(c, FIKIT_MSG_HELLO_OK, &ok, sizeof ok, -1);
        break;
    }
    case FIKIT_MSG_REGISTER:
        handle_register(d, c, payload);
        break;
    case FIKIT_MSG_SLOT:
        handle_slot(d, c, payload);
        break;
    case FIKIT_MSG_STATUS:
        handle_status(d, c);
        break;
    case FIKIT_MSG_ATTEST:
        handle_attest(c, payload);
        break;
    case FIKIT_MSG_TRACE_CTL: {
        const struct fikit_msg_trace_ctl *m = payload;
        /* Tracing shows every task's kernels: only root or fikitd's own user. */
        if (c->uid != 0 && c->uid != geteuid()) {
            send_error(c, -EPERM, "tracing is for root and the user fikitd runs as");
            break;
        }
        d->trace_at_start = m->op == FIKIT_TRACE_START;
        for (int i = 0; i < d->ndevices; i++)
            fikitd_device_set_trace(d->devices[i], m->op == FIKIT_TRACE_START);
        fikit_info("tracing %s", m->op == FIKIT_TRACE_START ? "started" : "stopped");
        conn_send(c, FIKIT_MSG_OK, NULL, 0, -1);
        break;
    }
    case FIKIT_MSG_TRACE_DUMP:
        if (c->uid != 0 && c->uid != geteuid()) {
            send_error(c, -EPERM, "tracing is for root and the user fikitd runs as");
            break;
        }
        handle_trace_dump(d, c);
        break;
    default:
        fikit_warn("pid %d sent an unexpected message (type %u); closing its connection",
                   (int)c->pid, type);
        close_conn(d, c, "unexpected message");
        break;
    }
}

int fikitd_run(struct fikitd *d)
{
    d->epoll_fd = epoll_create1(EPOLL_CLOEXEC);
    sigset_t mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGHUP);
    pthread_sigmask(SIG_BLOCK, &mask, NULL);
    signal(SIGPIPE, SIG_IGN);
    d->signal_fd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    struct epoll_event ev = {.events = EPOLLIN, .data.u64 = TAG_LISTEN};
    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->listen_fd, &ev);
    ev.data.u64 = TAG_SIGNAL;
    epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, d->signal_fd, &ev);
    int metrics_fd = fikitd_metrics_start(&d->cfg, d->devices, d->ndevices);
    if (metrics_fd >= 0) {
        ev.data.u64 = TAG_METRICS;
        epoll_ctl(d->epoll_fd, EPOLL_CTL_ADD, metrics_fd, &ev);
    } else if (metrics_fd < -1) {
        fikit_error("cannot start the metrics ([daemon] metrics_file): %s", strerror(-metrics_fd));
        return 1;
    }

    for (;;) {
        struct epoll_event evs[64];
        int n = epoll_wait(d->epoll_fd, evs, 64, -1);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            fikit_error("epoll_wait: %s", strerror(errno));
            return 1;
        }
        for (int i = 0; i < n; i++) {
            uint64_t tag = evs[i].data.u64;
            if (tag == TAG_LISTEN) {
                accept_conns(d);
            } else if (tag == TAG_METRICS) {
                fikitd_metrics_tick(d->devices, d->ndevices);
            } else if (tag == TAG_SIGNAL) {
                struct signalfd_siginfo si;
                while (read(d->signal_fd, &si, sizeof si) == sizeof si) {
                    if (si.ssi_signo == SIGHUP) {
                        fikit_info("SIGHUP ignored: restart fikitd to read fikit.ini again");
                        continue;
                    }
                    fikit_info("signal %u: shutting down", si.ssi_signo);
                    return 0;
                }
            } else {
                struct fikitd_conn *c = conn_of_tag(d, tag);
                if (!c)
                    continue; /* of a connection closed earlier in this batch */
                if ((tag & ~0xffffffffull) == TAG_PIDFD) {
                    close_conn(d, c, "process exited");
                    continue;
                }
                if (evs[i].events & EPOLLOUT) {
                    flush_out(c);
                    dump_pump(d, c);
                }
                if ((evs[i].events & EPOLLIN) && !c->doomed)
                    handle_message(d, c);
                c = conn_of_tag(d, tag);
                if (c && c->doomed) {
                    close_conn(d, c, "dropped");
                    continue;
                }
                if (c)
                    watch_out(d, c);
                if (c && (evs[i].events & (EPOLLHUP | EPOLLRDHUP | EPOLLERR)))
                    close_conn(d, c, "disconnected");
            }
        }
    }
}

void fikitd_shutdown(struct fikitd *d)
{
    fikitd_metrics_stop();
    /* Held launches go first, so no client waits on a daemon that is gone. */
    for (int i = 0; i < d->ndevices; i++)
        fikitd_device_close(d->devices[i]);
    d->ndevices = 0;
    for (int i = 0; i < FIKITD_MAX_CONNS; i++) {
        if (!d->conns[i].used)
            continue;
        free_out(&d->conns[i]);
        close(d->conns[i].fd);
        if (d->conns[i].pidfd >= 0)
            close(d->conns[i].pidfd);
        d->conns[i].used = false;
    }
    if (d->listen_fd >= 0) {
        close(d->listen_fd);
        if (!d->activated) /* systemd owns an activated socket */
            unlink(d->socket_path);
    }
}
