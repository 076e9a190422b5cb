#include "core/proto.h"

#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

/* Every message: its type, its payload's size, and the fixed-size strings
 * in it, each of which must end within its field. */
struct msg_kind {
    uint16_t type;
    size_t size;
    struct {
        size_t off, len; /* len 0: no more strings */
    } str[3];
};

#define EMPTY(TYPE) {FIKIT_MSG_##TYPE, 0, {{0, 0}}}
#define PAYLOAD(TYPE, name, ...) {FIKIT_MSG_##TYPE, sizeof(struct fikit_msg_##name), {__VA_ARGS__}}
#define STR(name, field)                                                                           \
    {offsetof(struct fikit_msg_##name, field), sizeof(((struct fikit_msg_##name *)0)->field)}
#define NO_STR {0, 0}

static const struct msg_kind kinds[] = {
    EMPTY(HELLO),
    PAYLOAD(HELLO_OK, hello_ok, STR(hello_ok, version), STR(hello_ok, config)),
    PAYLOAD(REGISTER, register, STR(register, task), STR(register, device_key),
            STR(register, device_model)),
    PAYLOAD(REGISTER_OK, register_ok, NO_STR),
    PAYLOAD(ERROR, error, STR(error, text)),
    EMPTY(STATUS),
    PAYLOAD(STATUS_DEVICE, status_device, STR(status_device, key), STR(status_device, model)),
    PAYLOAD(STATUS_TASK, status_task, STR(status_task, name)),
    EMPTY(END),
    PAYLOAD(TRACE_CTL, trace_ctl, NO_STR),
    EMPTY(TRACE_DUMP),
    PAYLOAD(TRACE_TASK, trace_task, STR(trace_task, name), STR(trace_task, device_model)),
    PAYLOAD(TRACE_EVENTS, trace_events, NO_STR),
    EMPTY(OK),
    PAYLOAD(ATTEST, attest, STR(attest, task), STR(attest, origin)),
    PAYLOAD(SLOT, slot, NO_STR),
    PAYLOAD(SLOT_FD, slot_fd, NO_STR),
};

static const struct msg_kind *kind_of(uint16_t type)
{
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++)
        if (kinds[i].type == type)
            return &kinds[i];
    return NULL;
}

size_t fikit_proto_payload_size(uint16_t type)
{
    const struct msg_kind *k = kind_of(type);
    return k ? k->size : SIZE_MAX;
}

/* Whether every string of the payload p of kind k ends within its field. */
static bool strings_terminated(const struct msg_kind *k, const char *p)
{
    for (int i = 0; i < 3 && k->str[i].len; i++)
        if (!memchr(p + k->str[i].off, '\0', k->str[i].len))
            return false;
    return true;
}

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
    const struct msg_kind *k = kind_of(h.type);
    if (!k)
        REJECT("unknown message type");
    if (h.len != len - sizeof h || h.len != k->size)
        REJECT("payload size does not match the type");
    const char *p = (const char *)buf + sizeof h;
    if (!strings_terminated(k, p))
        REJECT("unterminated string");
    switch (h.type) {
    case FIKIT_MSG_REGISTER: {
        const struct fikit_msg_register *m = (const void *)p;
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
        if (m->slot >= FIKIT_PROTO_SLOTS || m->slot_gen == 0 || m->slot_size == 0 || m->shm_size == 0)
            REJECT("slot out of range");
        break;
    }
    case FIKIT_MSG_SLOT: {
        const struct fikit_msg_slot *m = (const void *)p;
        if (m->slot >= FIKIT_PROTO_SLOTS || m->gen == 0)
            REJECT("slot out of range");
        break;
    }
    case FIKIT_MSG_SLOT_FD: {
        const struct fikit_msg_slot_fd *m = (const void *)p;
        if (m->part < FIKIT_PART_COMMONS || m->part > FIKIT_PART_PEER)
            REJECT("unknown part");
        if (m->part != FIKIT_PART_COMMONS && (m->slot >= FIKIT_PROTO_SLOTS || m->gen == 0))
            REJECT("slot out of range");
        if (m->size == 0)
            REJECT("empty part");
        break;
    }
    case FIKIT_MSG_ERROR: {
        const struct fikit_msg_error *m = (const void *)p;
        if (m->code >= 0)
            REJECT("error without an error code");
        break;
    }
    case FIKIT_MSG_TRACE_CTL: {
        const struct fikit_msg_trace_ctl *m = (const void *)p;
        if (m->op > FIKIT_TRACE_START)
            REJECT("unknown trace operation");
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
