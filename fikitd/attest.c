/* See attest.h. */
#include "fikitd/attest.h"

#include <errno.h>
#include <stdbool.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static struct fikitd_attest records[FIKITD_ATTEST_MAX];
static int nrecords;

int fikitd_proc_stat(pid_t pid, uint64_t *start, pid_t *ppid)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return errno == ENOENT ? -ESRCH : -errno;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    int e = errno;
    close(fd);
    if (n <= 0)
        return n < 0 ? -e : -ESRCH;
    buf[n] = '\0';
    /* The command name may hold spaces and parentheses: the fields start
     * after the last ')'. Then: state (3), ppid (4), ... starttime (22). */
    char *p = strrchr(buf, ')');
    if (!p)
        return -EPROTO;
    p++;
    long long v[20];
    char state;
    int got = sscanf(p, " %c %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld %lld "
                        "%lld %lld %lld %lld",
                     &state, &v[0], &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7], &v[8], &v[9],
                     &v[10], &v[11], &v[12], &v[13], &v[14], &v[15], &v[16], &v[17]);
    if (got != 19)
        return -EPROTO;
    if (state == 'Z' || state == 'X')
        return -ESRCH;
    if (ppid)
        *ppid = (pid_t)v[0];
    if (start)
        *start = (uint64_t)v[17];
    return 0;
}

static bool alive(const struct fikitd_attest *r)
{
    uint64_t start;
    return fikitd_proc_stat(r->pid, &start, NULL) == 0 && start == r->start;
}

int fikitd_attest_add(const struct fikit_msg_attest *m)
{
    uint64_t start;
    int rc = fikitd_proc_stat(m->pid, &start, NULL);
    if (rc)
        return rc;
    /* Drop what is stale: the process is gone or its pid was reused. */
    int k = 0;
    for (int i = 0; i < nrecords; i++) {
        if (records[i].pid == m->pid || !alive(&records[i]))
            continue;
        records[k++] = records[i];
    }
    nrecords = k;
    if (nrecords == FIKITD_ATTEST_MAX)
        return -ENOSPC;
    struct fikitd_attest *r = &records[nrecords++];
    memset(r, 0, sizeof *r);
    r->pid = m->pid;
    r->start = start;
    r->level = m->level;
    r->ceiling = m->ceiling;
    snprintf(r->task, sizeof r->task, "%s", m->task);
    snprintf(r->origin, sizeof r->origin, "%s", m->origin);
    return 0;
}

const struct fikitd_attest *fikitd_attest_find(pid_t pid)
{
    for (int depth = 0; depth < FIKITD_ATTEST_DEPTH && pid > 1; depth++) {
        uint64_t start;
        pid_t ppid;
        if (fikitd_proc_stat(pid, &start, &ppid))
            return NULL;
        for (int i = 0; i < nrecords; i++)
            if (records[i].pid == pid && records[i].start == start)
                return &records[i];
        pid = ppid;
    }
    return NULL;
}

int fikitd_attest_count(void) { return nrecords; }
