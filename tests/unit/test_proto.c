/* The protocol decoder against the fuzz corpus's seed messages: each seed is
 * a valid message of the current protocol, so the fuzzer starts from inside
 * the decoder. A protocol change that makes the seeds stale (other version,
 * other payload size) fails here rather than leaving fuzz_proto to test the
 * first check only, as happened from protocol version 2 to 3. */
#include "core/proto.h"

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <sys/socket.h>
#include <unistd.h>
#include <stdio.h>
#include <string.h>

#define CORPUS FIKIT_SOURCE_DIR "/tests/fuzz/corpus/proto"

Test(proto, every_seed_is_a_message_of_this_version)
{
    DIR *d = opendir(CORPUS);
    cr_assert_not_null(d, "%s", CORPUS);
    int seeds = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[4096], buf[FIKIT_MSG_MAX];
        snprintf(path, sizeof path, "%s/%s", CORPUS, e->d_name);
        FILE *f = fopen(path, "rb");
        cr_assert_not_null(f, "%s", path);
        size_t n = fread(buf, 1, sizeof buf, f);
        fclose(f);
        uint16_t type;
        const char *why = "";
        cr_expect_eq(fikit_proto_check(buf, n, &type, &why), 0, "seed %s rejected: %s", e->d_name, why);
        seeds++;
    }
    closedir(d);
    cr_assert_geq(seeds, 5, "the seeds are there (%d)", seeds);
}

/* Descriptors a peer passes beyond the one expected are closed, never left
 * open in the receiver (fikitd at its descriptor limit refused root). */
static int open_fds(void)
{
    int n = 0;
    DIR *d = opendir("/proc/self/fd");
    cr_assert_not_null(d);
    while (readdir(d))
        n++;
    closedir(d);
    return n;
}

/* Sends a HELLO (valid or not) carrying nfds descriptors of /dev/null, split
 * into cmsgs of at most per_cmsg each. */
static void send_with_fds(int sock, bool valid, int nfds, int per_cmsg)
{
    struct fikit_msg_hdr h = {.magic = FIKIT_PROTO_MAGIC, .version = FIKIT_PROTO_VERSION,
                              .type = FIKIT_MSG_HELLO, .len = valid ? 0 : 3};
    char pkt[sizeof h + 3] = {0};
    memcpy(pkt, &h, sizeof h);
    struct iovec iov = {.iov_base = pkt, .iov_len = sizeof h + (valid ? 0 : 3)};
    static char ctl[CMSG_SPACE(sizeof(int) * 256) * 8];
    memset(ctl, 0, sizeof ctl);
    struct msghdr msg = {.msg_iov = &iov, .msg_iovlen = 1, .msg_control = ctl, .msg_controllen = sizeof ctl};
    struct cmsghdr *c = CMSG_FIRSTHDR(&msg);
    size_t used = 0;
    int fds[256];
    for (int i = 0; i < nfds; i++)
        cr_assert_geq(fds[i] = open("/dev/null", O_RDONLY | O_CLOEXEC), 0);
    for (int done = 0; done < nfds; c = CMSG_NXTHDR(&msg, c)) {
        int k = nfds - done < per_cmsg ? nfds - done : per_cmsg;
        c->cmsg_level = SOL_SOCKET;
        c->cmsg_type = SCM_RIGHTS;
        c->cmsg_len = CMSG_LEN(sizeof(int) * (size_t)k);
        memcpy(CMSG_DATA(c), fds + done, sizeof(int) * (size_t)k);
        used += CMSG_SPACE(sizeof(int) * (size_t)k);
        done += k;
    }
    msg.msg_controllen = used;
    if (!nfds) {
        msg.msg_control = NULL;
        msg.msg_controllen = 0;
    }
    cr_assert_geq(sendmsg(sock, &msg, 0), 0, "%s", strerror(errno));
    for (int i = 0; i < nfds; i++)
        close(fds[i]);
}

Test(proto, every_passed_fd_beyond_the_expected_one_is_closed)
{
    int sv[2];
    cr_assert_eq(socketpair(AF_UNIX, SOCK_SEQPACKET, 0, sv), 0);
    char buf[FIKIT_MSG_MAX];
    uint16_t type;
    int base = open_fds(), fd = -1;

    send_with_fds(sv[0], true, 1, 1);
    cr_assert_eq(fikit_proto_recv(sv[1], buf, &type, &fd, 1000), 0);
    cr_assert_geq(fd, 0, "the one expected descriptor is handed over");
    close(fd);
    cr_assert_eq(open_fds(), base);

    send_with_fds(sv[0], true, 1, 1);
    cr_assert_eq(fikit_proto_recv(sv[1], buf, &type, NULL, 1000), 0);
    cr_assert_eq(open_fds(), base, "an fd nobody asked for is closed");

    const struct { int n, per; bool valid; } cases[] = {
        {2, 2, true}, {2, 1, true}, {3, 3, true}, {5, 2, true}, {200, 200, true}, {2, 2, false},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        for (int want = 0; want < 2; want++) {
            fd = -1;
            send_with_fds(sv[0], cases[i].valid, cases[i].n, cases[i].per);
            int r = fikit_proto_recv(sv[1], buf, &type, want ? &fd : NULL, 1000);
            cr_assert_eq(r, -EPROTO, "%d fds (%d a cmsg): a message carries one at most (got %d)",
                         cases[i].n, cases[i].per, r);
            cr_assert_eq(fd, -1);
            cr_assert_eq(open_fds(), base, "%d fds (%d a cmsg, %s): none is left open", cases[i].n,
                         cases[i].per, want ? "fd wanted" : "no fd wanted");
        }
    }
    close(sv[0]);
    close(sv[1]);
}

/* Task names are checked where fikitd reads them: a newline would forge a
 * line of fikitd's log, an escape sequence a row of fikit status. */
Test(proto, register_takes_printable_bounded_names)
{
    struct {
        struct fikit_msg_hdr h;
        struct fikit_msg_register m;
    } p;
    const char *tasks[] = {"serve", "a.b-c_9", "evil\nfikit[1]: forged", "tab\there", "esc\x1b[2J",
                           "sp ace", "\xc3\xa9t\xc3\xa9"};
    const bool ok[] = {true, true, false, false, false, false, false};
    for (size_t i = 0; i < sizeof tasks / sizeof tasks[0]; i++) {
        memset(&p, 0, sizeof p);
        p.h = (struct fikit_msg_hdr){.magic = FIKIT_PROTO_MAGIC, .version = FIKIT_PROTO_VERSION,
                                     .type = FIKIT_MSG_REGISTER, .len = sizeof p.m};
        snprintf(p.m.task, sizeof p.m.task, "%s", tasks[i]);
        snprintf(p.m.device_key, sizeof p.m.device_key, "opencl:0");
        snprintf(p.m.device_model, sizeof p.m.device_model, "cpu-haswell (PoCL)");
        p.m.level = 5;
        p.m.backend = 3;
        uint16_t type;
        const char *why = "";
        int rc = fikit_proto_check(&p, sizeof p, &type, &why);
        cr_expect_eq(rc == 0, ok[i], "task '%s': %s", tasks[i], rc ? why : "accepted");
    }
    memset(&p.m.task, 0, sizeof p.m.task);
    strcpy(p.m.task, "serve");
    strcpy(p.m.device_model, "model\nforged");
    uint16_t type;
    cr_assert_eq(fikit_proto_check(&p, sizeof p, &type, NULL), -EPROTO, "a model with a newline");
}

/* A task record (FIKIT_MSG_ATTEST) is checked as fully as a registration:
 * a name fikit.ini accepts, a printable origin, levels in range. */
static int check_attest(int32_t pid, int32_t level, int32_t ceiling, const char *task, const char *origin)
{
    char buf[sizeof(struct fikit_msg_hdr) + sizeof(struct fikit_msg_attest)];
    struct fikit_msg_hdr h = {.magic = FIKIT_PROTO_MAGIC, .version = FIKIT_PROTO_VERSION,
                              .type = FIKIT_MSG_ATTEST, .len = sizeof(struct fikit_msg_attest)};
    struct fikit_msg_attest m = {.pid = pid, .level = level, .ceiling = ceiling};
    snprintf(m.task, sizeof m.task, "%s", task);
    snprintf(m.origin, sizeof m.origin, "%s", origin);
    memcpy(buf, &h, sizeof h);
    memcpy(buf + sizeof h, &m, sizeof m);
    uint16_t type;
    const char *why = "";
    return fikit_proto_check(buf, sizeof buf, &type, &why);
}

Test(proto, attest_ranges)
{
    cr_expect_eq(check_attest(10, 0, 5, "serve", "slurm job 1 step 0"), 0);
    cr_expect_eq(check_attest(10, -1, 0, "serve", ""), 0, "-1: the client's own request");
    cr_expect_eq(check_attest(0, 0, 5, "serve", ""), -EPROTO, "pid 0");
    cr_expect_eq(check_attest(10, -2, 5, "serve", ""), -EPROTO, "level -2");
    cr_expect_eq(check_attest(10, 10, 5, "serve", ""), -EPROTO, "level 10");
    cr_expect_eq(check_attest(10, 0, 10, "serve", ""), -EPROTO, "ceiling 10");
    cr_expect_eq(check_attest(10, 0, 5, "a b", ""), -EPROTO, "task name with a space");
    cr_expect_eq(check_attest(10, 0, 5, "serve", "job\n1"), -EPROTO, "origin with a newline");
}

/* Every message that carries a string is refused when a string does not
 * end within its field (a payload of 'A's ends none of them). */
Test(proto, unterminated_strings_are_refused_in_every_message)
{
    const uint16_t types[] = {FIKIT_MSG_HELLO_OK,    FIKIT_MSG_REGISTER,    FIKIT_MSG_ERROR,
                              FIKIT_MSG_STATUS_DEVICE, FIKIT_MSG_STATUS_TASK, FIKIT_MSG_TRACE_TASK,
                              FIKIT_MSG_ATTEST};
    for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
        size_t n = fikit_proto_payload_size(types[i]);
        char buf[FIKIT_MSG_MAX];
        cr_assert_leq(sizeof(struct fikit_msg_hdr) + n, sizeof buf);
        struct fikit_msg_hdr h = {.magic = FIKIT_PROTO_MAGIC, .version = FIKIT_PROTO_VERSION,
                                  .type = types[i], .len = (uint32_t)n};
        memcpy(buf, &h, sizeof h);
        memset(buf + sizeof h, 'A', n);
        uint16_t type;
        const char *why = "";
        cr_expect_eq(fikit_proto_check(buf, sizeof h + n, &type, &why), -EPROTO, "type %u", types[i]);
        cr_expect_str_eq(why, "unterminated string", "type %u", types[i]);
    }
}
