#include "core/proto.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

size_t fikit_proto_payload_size(uint16_t type)
{
    switch (type) {
    case FIKIT_MSG_HELLO: return 0;
    case FIKIT_MSG_HELLO_OK: return sizeof(struct fikit_msg_hello_ok);
    case FIKIT_MSG_REGISTER: return sizeof(struct fikit_msg_register);
    case FIKIT_MSG_REGISTER_OK: return sizeof(struct fikit_msg_register_ok);
    case FIKIT_MSG_ERROR: return sizeof(struct fikit_msg_error);
    case FIKIT_MSG_STATUS: return 0;
    case FIKIT_MSG_STATUS_DEVICE: return sizeof(struct fikit_msg_status_device);
    case FIKIT_MSG_STATUS_TASK: return sizeof(struct fikit_msg_status_task);
    case FIKIT_MSG_END: return 0;
    case FIKIT_MSG_TRACE_CTL: return sizeof(struct fikit_msg_trace_ctl);
    case FIKIT_MSG_TRACE_DUMP: return 0;
    case FIKIT_MSG_TRACE_TASK: return sizeof(struct fikit_msg_trace_task);
    case FIKIT_MSG_TRACE_EVENTS: return sizeof(struct fikit_msg_trace_events);
    case FIKIT_MSG_OK: return 0;
    case FIKIT_MSG_ATTEST: return sizeof(struct fikit_msg_attest);
    default: return SIZE_MAX;
    }
}

static int terminated(const char *s, size_t cap) { return memchr(s, '\0', cap) != NULL; }

bool fikit_proto_task_name_ok(const char *s)
{
    if (!*s)
        return false;
    for (; *s; s++)
        if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') ||
              *s == '_' || *s == '-' || *s == '.'))
            return false;
    return true;
}

/* Printable ASCII only: what fikitd logs and shows comes from here, and a
 * newline or an escape sequence would forge a log line or a status row. */
static bool printable(const char *s)
{
    for (; *s; s++)
        if (*s < 0x20 || *s > 0x7e)
            return false;
    return true;
}

#define REJECT(msg)                                                                                \
    do {                                                                                           \
        if (why)                                                                                   \
            *why = (msg);                                                                          \
        return -EPROTO;                                                                            \
    } while (0)

int fikit_proto_check(const void *buf, size_t len, uint16_t *type, const char **why)
{
    struct fikit_msg_hdr h;
    if (len < sizeof h)
        REJECT("packet shorter than a header");
    memcpy(&h, buf, sizeof h);
    if (h.magic != FIKIT_PROTO_MAGIC)
        REJECT("bad magic");
    if (h.version != FIKIT_PROTO_VERSION)
        REJECT("other protocol version");
    size_t want = fikit_proto_payload_size(h.type);
    if (want == SIZE_MAX)
        REJECT("unknown message type");
    if (h.len != len - sizeof h || h.len != want)
        REJECT("payload size does not match the type");
    const char *p = (const char *)buf + sizeof h;
    switch (h.type) {
    case FIKIT_MSG_HELLO_OK: {
        const struct fikit_msg_hello_ok *m = (const void *)p;
        if (!terminated(m->version, sizeof m->version) || !terminated(m->config, sizeof m->config))
            REJECT("unterminated string");
        break;
    }
    case FIKIT_MSG_REGISTER: {
        const struct fikit_msg_register *m = (const void *)p;
        if (!terminated(m->task, sizeof m->task) || !terminated(m->device_key, sizeof m->device_key) ||
            !terminated(m->device_model, sizeof m->device_model))
            REJECT("unterminated string");
        if (m->task[0] == '\0' || m->device_key[0] == '\0')
            REJECT("empty task or device");
        if (!fikit_proto_task_name_ok(m->task))
            REJECT("bad task name (accepted: 1 to 63 of A-Z a-z 0-9 _ . -)");
        if (!printable(m->device_key) || !printable(m->device_model))
            REJECT("device key or model not printable ASCII");
        if (m->level < 0 || m->level > 9)
            REJECT("level out of range");
        if (m->backend < 1 || m->backend > 3)
            REJECT("unknown backend");
        if (m->flags & ~(FIKIT_REGISTER_MEASURE | FIKIT_REGISTER_DEVICE_ON_HOST | FIKIT_REGISTER_BESIDE))
            REJECT("unknown flags");
        break;
    }
    case FIKIT_MSG_REGISTER_OK: {
        const struct fikit_msg_register_ok *m = (const void *)p;
        if (m->level < 0 || m->level > 9)
            REJECT("level out of range");
        if (m->slot_size == 0 || m->slot_offset > m->shm_size || m->slot_size > m->shm_size - m->slot_offset)
            REJECT("slot outside the segment");
        break;
    }
    case FIKIT_MSG_ERROR: {
        const struct fikit_msg_error *m = (const void *)p;
        if (!terminated(m->text, sizeof m->text))
            REJECT("unterminated string");
        if (m->code >= 0)
            REJECT("error without an error code");
        break;
    }
    case FIKIT_MSG_STATUS_DEVICE: {
        const struct fikit_msg_status_device *m = (const void *)p;
        if (!terminated(m->key, sizeof m->key) || !terminated(m->model, sizeof m->model))
            REJECT("unterminated string");
        break;
    }
    case FIKIT_MSG_STATUS_TASK: {
        const struct fikit_msg_status_task *m = (const void *)p;
        if (!terminated(m->name, sizeof m->name))
            REJECT("unterminated string");
        break;
    }
    case FIKIT_MSG_TRACE_CTL: {
        const struct fikit_msg_trace_ctl *m = (const void *)p;
        if (m->op > FIKIT_TRACE_START)
            REJECT("unknown trace operation");
        break;
    }
    case FIKIT_MSG_TRACE_TASK: {
        const struct fikit_msg_trace_task *m = (const void *)p;
        if (!terminated(m->name, sizeof m->name) ||
            !terminated(m->device_model, sizeof m->device_model))
            REJECT("unterminated string");
        break;
    }
    case FIKIT_MSG_TRACE_EVENTS: {
        const struct fikit_msg_trace_events *m = (const void *)p;
        if (m->n > FIKIT_TRACE_CHUNK)
            REJECT("event count out of range");
        break;
    }
    case FIKIT_MSG_ATTEST: {
        const struct fikit_msg_attest *m = (const void *)p;
        if (!terminated(m->task, sizeof m->task) || !terminated(m->origin, sizeof m->origin))
            REJECT("unterminated string");
        if (!fikit_proto_task_name_ok(m->task))
            REJECT("bad task name (accepted: 1 to 63 of A-Z a-z 0-9 _ . -)");
        if (!printable(m->origin))
            REJECT("origin not printable ASCII");
        if (m->pid <= 0)
            REJECT("pid out of range");
        if (m->level < -1 || m->level > 9 || m->ceiling < 0 || m->ceiling > 9)
            REJECT("level or ceiling out of range");
        break;
    }
    default:
        break;
    }
    *type = h.type;
    return 0;
}

int fikit_proto_send(int sock, uint16_t type, const void *payload, size_t len, int fd_to_pass)
{
    char buf[FIKIT_MSG_MAX];
    struct fikit_msg_hdr h = {.magic = FIKIT_PROTO_MAGIC, .version = FIKIT_PROTO_VERSION,
                              .type = type, .len = (uint32_t)len};
    if (sizeof h + len > sizeof buf)
        return -EMSGSIZE;
    memcpy(buf, &h, sizeof h);
    if (len)
        memcpy(buf + sizeof h, payload, len);
    struct iovec iov = {.iov_base = buf, .iov_len = sizeof h + len};
    union {
        char b[CMSG_SPACE(sizeof(int))];
        struct cmsghdr align;
    } ctl;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1};
    if (fd_to_pass >= 0) {
        memset(&ctl, 0, sizeof ctl);
        msg.msg_control = ctl.b;
        msg.msg_controllen = sizeof ctl.b;
        struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int));
        memcpy(CMSG_DATA(c), &fd_to_pass, sizeof(int));
    }
    for (;;) {
        ssize_t n = sendmsg(sock, &msg, MSG_NOSIGNAL);
        if (n >= 0)
            return 0;
        if (errno != EINTR)
            return -errno;
    }
}

int fikit_proto_recv(int sock, void *buf, uint16_t *type, int *fd_out, int timeout_ms)
{
    if (fd_out)
        *fd_out = -1;
    struct pollfd pfd = {.fd = sock, .events = POLLIN};
    for (;;) {
        int r = poll(&pfd, 1, timeout_ms);
        if (r > 0)
            break;
        if (r == 0)
            return -ETIMEDOUT;
        if (errno != EINTR)
            return -errno;
    }
    struct iovec iov = {.iov_base = buf, .iov_len = FIKIT_MSG_MAX};
    /* Room for more descriptors than any message carries: whatever a peer
     * sends beyond the one expected is received here and closed, never
     * left open in the receiver (what does not fit, the kernel drops). */
    union {
        char b[CMSG_SPACE(sizeof(int) * FIKIT_PROTO_MAX_FDS)];
        struct cmsghdr align;
    } ctl;
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl.b,
                         .msg_controllen = sizeof ctl.b};
    ssize_t n;
    do
        n = recvmsg(sock, &msg, MSG_CMSG_CLOEXEC);
    while (n < 0 && errno == EINTR);
    if (n < 0)
        return -errno;
    int passed = -1, nfds = 0;
    for (struct cmsghdr *c = CMSG_FIRSTHDR(&msg); c; c = CMSG_NXTHDR(&msg, c)) {
        if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS || c->cmsg_len < CMSG_LEN(0))
            continue;
        size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
        for (size_t i = 0; i < k; i++) {
            int fd;
            memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof fd);
            if (nfds++ == 0)
                passed = fd;
            else
                close(fd);
        }
    }
    if (nfds > 1) {
        /* A message carries one descriptor at most: a peer that sends more
         * is not speaking this protocol. */
        if (passed >= 0)
            close(passed);
        return n == 0 ? -ECONNRESET : -EPROTO;
    }
    if (n == 0) {
        if (passed >= 0)
            close(passed);
        return -ECONNRESET;
    }
    if ((msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) || fikit_proto_check(buf, (size_t)n, type, NULL)) {
        if (passed >= 0)
            close(passed);
        return -EPROTO;
    }
    if (fd_out)
        *fd_out = passed;
    else if (passed >= 0)
        close(passed);
    return (int)((size_t)n - sizeof(struct fikit_msg_hdr));
}

int fikit_proto_connect(const char *path)
{
    struct sockaddr_un sa = {.sun_family = AF_UNIX};
    if (strlen(path) >= sizeof sa.sun_path)
        return -ENAMETOOLONG;
    strcpy(sa.sun_path, path);
    int fd = socket(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -errno;
    if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}
