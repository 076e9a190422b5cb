#include "core/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

/* The slots' address range: each slot has a fixed place in it, so a
 * slot's mapping is replaced in place (MAP_FIXED), never leaving a hole a
 * reader of the old one could fall into. PROT_NONE until mapped. */
static void *reserve_range(void)
{
    void *p = mmap(NULL, FIKIT_SHM_SLOTS * FIKIT_SHM_SLOT_SIZE, PROT_NONE,
                   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    return p == MAP_FAILED ? NULL : p;
}

/* Each slot's fixed place in the view's range. */
static void place_slots(struct fikit_shm *shm)
{
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++)
        shm->slots[s] = (struct fikit_shm_slot *)((char *)shm->range + (size_t)s * FIKIT_SHM_SLOT_SIZE);
}

static struct fikit_shm *new_view(void)
{
    struct fikit_shm *shm = calloc(1, sizeof *shm);
    if (!shm)
        return NULL;
    shm->range = reserve_range();
    if (!shm->range) {
        free(shm);
        return NULL;
    }
    place_slots(shm);
    return shm;
}

static void init_header(struct fikit_shm_header *h, const char *device_key, const char *device_model,
                        uint64_t generation)
{
    memset(h, 0, sizeof *h);
    h->magic = FIKIT_SHM_MAGIC;
    h->version = FIKIT_SHM_VERSION;
    h->nslots = FIKIT_SHM_SLOTS;
    h->size = FIKIT_SHM_SIZE;
    h->generation = generation;
    snprintf(h->device_key, sizeof h->device_key, "%s", device_key);
    snprintf(h->device_model, sizeof h->device_model, "%s", device_model);
    atomic_store(&h->daemon_state, FIKIT_DAEMON_RUNNING);
}

/* A memfd of size bytes that nobody can resize under the mappings, of the
 * given mode (a memfd is 0777 by default: anyone holding a read-only fd of
 * it could reopen it read-write through /proc/PID/fd). */
static int new_memfd(const char *name, size_t size, mode_t mode)
{
    int fd = memfd_create(name, MFD_CLOEXEC | MFD_ALLOW_SEALING);
    if (fd < 0)
        return -errno;
    if (fchmod(fd, mode) != 0 || ftruncate(fd, (off_t)size) != 0 ||
        fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) != 0) {
        int e = errno;
        close(fd);
        return -e;
    }
    return fd;
}

int fikit_shm_reopen_ro(int fd)
{
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", fd);
    int ro = open(path, O_RDONLY | O_CLOEXEC);
    return ro < 0 ? -errno : ro;
}

/* A new memfd of SIZE and MODE mapped writable here: 0 with *fd and *map
 * set, or -errno with *fd closed and -1. */
static int new_mapped_memfd(const char *name, size_t size, mode_t mode, int *fd, void **map)
{
    *fd = new_memfd(name, size, mode);
    if (*fd < 0)
        return *fd;
    void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
    if (p == MAP_FAILED) {
        int e = errno;
        close(*fd);
        *fd = -1;
        return -e;
    }
    *map = p;
    return 0;
}

int fikit_shm_create(const char *device_key, const char *device_model, uint64_t generation,
                     int *hdr_ro, int *com_fd, struct fikit_shm **out)
{
    struct fikit_shm *shm = new_view();
    if (!shm)
        return -ENOMEM;
    int hfd, cfd = -1, ro = -1;
    void *hdr = NULL, *com = NULL;
    int rc = new_mapped_memfd("fikit-device", FIKIT_SHM_SIZE, 0400, &hfd, &hdr);
    if (rc < 0)
        goto fail;
    shm->hdr = hdr;
    init_header(shm->hdr, device_key, device_model, generation);
    /* From here only this mapping writes it: no writable mapping, no
     * write(2), whoever holds an fd of it. */
    if (fcntl(hfd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) != 0) {
        rc = -errno;
        goto fail;
    }
    ro = fikit_shm_reopen_ro(hfd);
    if (ro < 0) {
        rc = ro;
        goto fail;
    }
    rc = new_mapped_memfd("fikit-commons", FIKIT_SHM_COMMONS_SIZE, 0600, &cfd, &com);
    if (rc < 0)
        goto fail;
    shm->com = com;
    close(hfd);
    *hdr_ro = ro;
    *com_fd = cfd;
    *out = shm;
    return 0;
fail:
    if (hfd >= 0)
        close(hfd);
    if (cfd >= 0)
        close(cfd);
    if (ro >= 0)
        close(ro);
    fikit_shm_unmap(shm);
    return rc;
}

static int map_slot_at(struct fikit_shm *shm, int s, int fd, bool writable)
{
    void *p = mmap(shm->slots[s], FIKIT_SHM_SLOT_SIZE, PROT_READ | (writable ? PROT_WRITE : 0),
                   MAP_SHARED | MAP_FIXED, fd, 0);
    return p == MAP_FAILED ? -errno : 0;
}

int fikit_shm_slot_create(struct fikit_shm *shm, int s, uint64_t gen, int *fd_out)
{
    int fd = new_memfd("fikit-slot", FIKIT_SHM_SLOT_SIZE, 0600);
    if (fd < 0)
        return fd;
    atomic_store(&shm->mapped[s], 0);
    int rc = map_slot_at(shm, s, fd, true);
    if (rc) {
        close(fd);
        fikit_shm_slot_drop(shm, s);
        return rc;
    }
    shm->slots[s]->gen = gen;
    shm->slots[s]->index = (uint32_t)s;
    atomic_store(&shm->mapped[s], gen);
    *fd_out = fd;
    return 0;
}

void fikit_shm_slot_drop(struct fikit_shm *shm, int s)
{
    atomic_store(&shm->mapped[s], 0);
    if (!shm->local)
        mmap(shm->slots[s], FIKIT_SHM_SLOT_SIZE, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED |
             MAP_NORESERVE, -1, 0);
}

int fikit_shm_map(int hdr_fd, int com_fd, struct fikit_shm **out)
{
    struct stat st, cst;
    if (fstat(hdr_fd, &st) != 0 || fstat(com_fd, &cst) != 0)
        return -errno;
    if ((uint64_t)st.st_size != FIKIT_SHM_SIZE || (uint64_t)cst.st_size != FIKIT_SHM_COMMONS_SIZE)
        return -EPROTO;
    struct fikit_shm *shm = new_view();
    if (!shm)
        return -ENOMEM;
    shm->hdr = mmap(NULL, FIKIT_SHM_SIZE, PROT_READ, MAP_SHARED, hdr_fd, 0);
    shm->com = mmap(NULL, FIKIT_SHM_COMMONS_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, com_fd, 0);
    int rc = 0;
    if (shm->hdr == MAP_FAILED || shm->com == MAP_FAILED)
        rc = -errno;
    if (shm->hdr == MAP_FAILED)
        shm->hdr = NULL;
    if (shm->com == MAP_FAILED)
        shm->com = NULL;
    if (!rc && (shm->hdr->magic != FIKIT_SHM_MAGIC || shm->hdr->version != FIKIT_SHM_VERSION ||
                shm->hdr->size != FIKIT_SHM_SIZE || shm->hdr->nslots != FIKIT_SHM_SLOTS))
        rc = -EPROTO;
    if (rc) {
        fikit_shm_unmap(shm);
        return rc;
    }
    *out = shm;
    return 0;
}

int fikit_shm_map_slot(struct fikit_shm *shm, int s, uint64_t gen, int fd, bool writable)
{
    struct stat st;
    if (s < 0 || s >= FIKIT_SHM_SLOTS || !gen)
        return -EINVAL;
    if (fstat(fd, &st) != 0)
        return -errno;
    if ((uint64_t)st.st_size != FIKIT_SHM_SLOT_SIZE)
        return -EPROTO;
    /* Readers check mapped[s] before and after they read: 0 while the
     * mapping changes under them. */
    atomic_store(&shm->mapped[s], 0);
    int rc = map_slot_at(shm, s, fd, writable);
    if (rc)
        return rc;
    if (__atomic_load_n(&shm->slots[s]->gen, __ATOMIC_RELAXED) != gen)
        return -EPROTO;
    atomic_store(&shm->mapped[s], gen);
    return 0;
}

int fikit_shm_local(struct fikit_shm **out)
{
    struct fikit_shm *shm = calloc(1, sizeof *shm);
    if (!shm)
        return -ENOMEM;
    shm->local = true;
    shm->hdr = calloc(1, sizeof *shm->hdr);
    shm->com = calloc(1, sizeof *shm->com);
    shm->range = calloc(FIKIT_SHM_SLOTS, FIKIT_SHM_SLOT_SIZE);
    if (!shm->hdr || !shm->com || !shm->range) {
        fikit_shm_unmap(shm);
        return -ENOMEM;
    }
    init_header(shm->hdr, "local", "local", 1);
    place_slots(shm);
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
        shm->slots[s]->gen = (uint64_t)s + 1;
        shm->slots[s]->index = (uint32_t)s;
        atomic_store(&shm->hdr->owner[s].gen, (uint64_t)s + 1);
        atomic_store(&shm->mapped[s], (uint64_t)s + 1);
    }
    *out = shm;
    return 0;
}

void fikit_shm_unmap(struct fikit_shm *shm)
{
    if (!shm)
        return;
    if (shm->local) {
        free(shm->hdr);
        free(shm->com);
        free(shm->range);
    } else {
        if (shm->hdr)
            munmap(shm->hdr, FIKIT_SHM_SIZE);
        if (shm->com)
            munmap(shm->com, FIKIT_SHM_COMMONS_SIZE);
        if (shm->range)
            munmap(shm->range, FIKIT_SHM_SLOTS * FIKIT_SHM_SLOT_SIZE);
    }
    free(shm);
}

/* Field by field with relaxed atomics: the seqlock orders them, and no
 * reader or race detector ever sees a torn 64-bit value. */
static void copy_launch(struct fikit_shm_launch *dst, const struct fikit_shm_launch *src)
{
    __atomic_store_n(&dst->launches, __atomic_load_n(&src->launches, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    __atomic_store_n(&dst->last_launch_ns, __atomic_load_n(&src->last_launch_ns, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&dst->busy_until_ns, __atomic_load_n(&src->busy_until_ns, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    __atomic_store_n(&dst->last_key, __atomic_load_n(&src->last_key, __ATOMIC_RELAXED), __ATOMIC_RELAXED);
    __atomic_store_n(&dst->idle_after_ns, __atomic_load_n(&src->idle_after_ns, __ATOMIC_RELAXED),
                     __ATOMIC_RELAXED);
    for (int i = 0; i < FIKIT_GAP_POINTS; i++)
        __atomic_store_n(&dst->gap.q_ns[i], __atomic_load_n(&src->gap.q_ns[i], __ATOMIC_RELAXED),
                         __ATOMIC_RELAXED);
}

static void pub_lock(struct fikit_shm_slot *slot)
{
    while (atomic_exchange_explicit(&slot->pub_lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&slot->pub_lock, memory_order_relaxed))
            fikit_cpu_relax();
}

static void pub_write(struct fikit_shm_slot *slot, const struct fikit_shm_launch *pub)
{
    uint64_t seq = atomic_load_explicit(&slot->pub_seq, memory_order_relaxed);
    atomic_store_explicit(&slot->pub_seq, seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    copy_launch(&slot->pub, pub);
    atomic_store_explicit(&slot->pub_seq, seq + 2, memory_order_release);
}

uint64_t fikit_shm_publish_launch(struct fikit_shm_slot *slot, uint64_t now, uint64_t dur_ns,
                                  uint64_t key, const struct fikit_gap_pred *gap,
                                  uint64_t idle_after_ns)
{
    pub_lock(slot);
    /* Only two fields carry over; the rest is this launch's. */
    struct fikit_shm_launch p = {
        .launches = __atomic_load_n(&slot->pub.launches, __ATOMIC_RELAXED) + 1,
        .last_launch_ns = now,
        .busy_until_ns = fikit_busy_until(__atomic_load_n(&slot->pub.busy_until_ns, __ATOMIC_RELAXED),
                                          now, dur_ns),
        .last_key = key,
        .idle_after_ns = idle_after_ns,
        .gap = *gap,
    };
    pub_write(slot, &p);
    atomic_store_explicit(&slot->pub_lock, 0, memory_order_release);
    return p.busy_until_ns;
}

/* Between the task's own threads, as pub_lock was for the slot. */
static void own_lock(struct fikit_shm_own *own)
{
    while (atomic_exchange_explicit(&own->lock, 1, memory_order_acquire))
        while (atomic_load_explicit(&own->lock, memory_order_relaxed))
            fikit_cpu_relax();
}

static void own_unlock(struct fikit_shm_own *own)
{
    atomic_store_explicit(&own->lock, 0, memory_order_release);
}

static void write_pub(struct fikit_shm_slot *slot, struct fikit_shm_own *own, const struct fikit_shm_launch *p,
                      uint64_t now)
{
    /* The seqlock's number from here too: one left odd in the slot by
     * another program is written over, not followed. */
    atomic_store_explicit(&slot->pub_seq, own->seq + 1, memory_order_relaxed);
    atomic_thread_fence(memory_order_release);
    copy_launch(&slot->pub, p);
    own->seq += 2;
    atomic_store_explicit(&slot->pub_seq, own->seq, memory_order_release);
    __atomic_store_n(&own->published_ns, now, __ATOMIC_RELAXED);
}

uint64_t fikit_shm_publish_own(struct fikit_shm_slot *slot, struct fikit_shm_own *own, uint64_t now,
                               uint64_t dur_ns, uint64_t key, const struct fikit_gap_pred *gap,
                               uint64_t idle_after_ns, uint64_t *ticket)
{
    own_lock(own);
    /* Built in the other of the two records: the last stays for a withdrawal. */
    struct fikit_shm_launch *p = &own->rec[own->cur ^ 1];
    *p = (struct fikit_shm_launch){
        .launches = ++own->launches,
        .last_launch_ns = now,
        .busy_until_ns = fikit_busy_until(own->busy_until_ns, now, dur_ns),
        .last_key = key,
        .idle_after_ns = idle_after_ns,
        .gap = *gap,
    };
    own->cur ^= 1;
    own->prev_busy_until_ns = own->busy_until_ns;
    own->last_published = true;
    if (ticket)
        *ticket = ++own->updates;
    else
        ++own->updates;
    uint64_t busy = p->busy_until_ns; /* p is another thread's to rewrite once unlocked */
    __atomic_store_n(&own->busy_until_ns, busy, __ATOMIC_RELAXED);
    write_pub(slot, own, p, now);
    own_unlock(own);
    return busy;
}

uint64_t fikit_shm_own_count(struct fikit_shm_own *own, uint64_t now, uint64_t dur_ns, uint64_t *ticket)
{
    own_lock(own);
    own->launches++;
    own->prev_busy_until_ns = own->busy_until_ns;
    own->last_published = false;
    if (ticket)
        *ticket = ++own->updates;
    else
        ++own->updates;
    uint64_t busy = fikit_busy_until(own->busy_until_ns, now, dur_ns);
    __atomic_store_n(&own->busy_until_ns, busy, __ATOMIC_RELAXED);
    own_unlock(own);
    return busy;
}

void fikit_shm_own_drained(struct fikit_shm_own *own, uint64_t now)
{
    own_lock(own);
    if (own->busy_until_ns > now)
        __atomic_store_n(&own->busy_until_ns, now, __ATOMIC_RELAXED);
    own_unlock(own);
}

bool fikit_shm_withdraw_own(struct fikit_shm_slot *slot, struct fikit_shm_own *own, uint64_t ticket,
                            uint64_t now)
{
    own_lock(own);
    if (own->updates != ticket || !own->launches) {
        own_unlock(own);
        return false;
    }
    own->updates++; /* taken back once */
    own->launches--;
    __atomic_store_n(&own->busy_until_ns, own->prev_busy_until_ns, __ATOMIC_RELAXED);
    if (own->last_published) {
        /* The record before it, with the count and the work as they are now. */
        own->cur ^= 1;
        struct fikit_shm_launch *p = &own->rec[own->cur];
        p->launches = own->launches;
        p->busy_until_ns = own->prev_busy_until_ns;
        write_pub(slot, own, p, now);
        own->last_published = false;
    }
    own_unlock(own);
    return true;
}

uint64_t fikit_shm_fill_lock(struct fikit_shm *shm, uint64_t now)
{
    uint64_t v = atomic_fetch_or(&shm->com->fill_until_ns, FIKIT_FILL_LOCK) & ~FIKIT_FILL_LOCK;
    /* Any client of the device may have written it: no further out than a
     * fill could reach, and put back so (even: the lock bit stays clear). */
    if (v > now + FIKIT_FILL_AHEAD_MAX_NS) {
        v = (now + FIKIT_FILL_AHEAD_MAX_NS) & ~FIKIT_FILL_LOCK;
        atomic_store(&shm->com->fill_until_ns, v | FIKIT_FILL_LOCK);
    }
    return v;
}

void fikit_shm_fill_unlock(struct fikit_shm *shm, uint64_t granted_until)
{
    atomic_store(&shm->hdr->granted_until_ns, granted_until);
    /* Given back 2 ns later than taken: a client that read granted_until_ns
     * before the lock cannot then take the room with the value it saw. */
    uint64_t held = atomic_load(&shm->com->fill_until_ns) & ~FIKIT_FILL_LOCK;
    atomic_store(&shm->com->fill_until_ns, held + 2);
}

bool fikit_shm_fill_commit(struct fikit_shm *shm, uint64_t seen, uint64_t until)
{
    if (seen & FIKIT_FILL_LOCK)
        return false; /* fikitd was deciding: fikit_admit does not fill then */
    return atomic_compare_exchange_strong(&shm->com->fill_until_ns, &seen, until);
}

/* The record and the seqlock number it was written under. */
static bool read_launch(const struct fikit_shm_slot *slot, struct fikit_shm_launch *out, uint64_t *seq)
{
    for (int tries = 0; tries < 64; tries++) {
        uint64_t s1 = atomic_load_explicit(&slot->pub_seq, memory_order_acquire);
        if (s1 & 1) {
            fikit_cpu_relax();
            continue;
        }
        copy_launch(out, &slot->pub);
        atomic_thread_fence(memory_order_acquire);
        if (atomic_load_explicit(&slot->pub_seq, memory_order_relaxed) == s1) {
            *seq = s1;
            return true;
        }
    }
    return false;
}

bool fikit_shm_read_launch(const struct fikit_shm_slot *slot, struct fikit_shm_launch *out)
{
    uint64_t seq;
    return read_launch(slot, out, &seq);
}

int fikit_futex_wait(_Atomic uint32_t *addr, uint32_t expected, uint64_t timeout_ns)
{
    struct timespec ts = {.tv_sec = (time_t)(timeout_ns / 1000000000ull),
                          .tv_nsec = (long)(timeout_ns % 1000000000ull)};
    long rc = syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAIT, expected,
                      timeout_ns == UINT64_MAX ? NULL : &ts, NULL, 0);
    return rc == 0 ? 0 : -errno;
}

void fikit_futex_wake(_Atomic uint32_t *addr, int n)
{
    syscall(SYS_futex, (uint32_t *)addr, FUTEX_WAKE, n, NULL, NULL, 0);
}

void fikit_shm_ring_arbiter(struct fikit_shm *shm)
{
    atomic_fetch_add(&shm->com->arbiter_futex, 1);
    fikit_futex_wake(&shm->com->arbiter_futex, 1);
}

void fikit_shm_trace(struct fikit_shm *shm, struct fikit_shm_slot *slot,
                     const struct fikit_trace_event *ev)
{
    if (!atomic_load_explicit(&shm->hdr->trace_on, memory_order_relaxed))
        return;
    uint64_t i = atomic_fetch_add_explicit(&slot->trace_head, 1, memory_order_acq_rel);
    /* fikitd drains on a timer, which a burst from many threads outruns:
     * the writer that takes the event at each eighth past half full rings
     * its bell, and one that would overwrite an unread event waits for it
     * to be read, a bounded time (then it overwrites, and fikitd counts the
     * loss). Tracing is for looking at scheduling; losing its events would
     * make what it shows wrong, a short wait only makes a burst slower. The
     * bell is a system call: only at these crossings, only while tracing. */
    uint64_t unread = i + 1 - atomic_load_explicit(&slot->trace_tail, memory_order_acquire);
    if (unread >= FIKIT_SHM_TRACE / 2 && unread % (FIKIT_SHM_TRACE / 8) == 0)
        fikit_shm_ring_arbiter(shm);
    if (unread > FIKIT_SHM_TRACE) {
        fikit_shm_ring_arbiter(shm);
        for (int n = 0; n < FIKIT_TRACE_WAIT_NS / FIKIT_TRACE_WAIT_STEP_NS; n++) {
            if (i + 1 - atomic_load_explicit(&slot->trace_tail, memory_order_acquire) <= FIKIT_SHM_TRACE ||
                atomic_load_explicit(&shm->hdr->daemon_state, memory_order_relaxed) != FIKIT_DAEMON_RUNNING)
                break;
            struct timespec step = {0, FIKIT_TRACE_WAIT_STEP_NS};
            nanosleep(&step, NULL);
        }
    }
    /* Each entry is a seqlock that one writer at a time owns. A writer a lap
     * ahead whose wait ran out, or one a lap behind that was descheduled
     * between taking its index and writing, comes to an entry another writer
     * may be on: each takes it by compare-and-swap into a busy mark, so no
     * two ever write one entry (their fields would mix under a valid
     * number). One that finds a later lap's number drops its event (fikitd
     * counts it lost); one that finds a writer busy waits for it (it is
     * writing, never waiting, in that window), a bounded time, since a
     * scribbled entry may stay busy for good. The fields are relaxed
     * atomics: fikitd reads them while a writer may be on the entry, and the
     * number read before and after tells it whether to keep them. */
    struct fikit_trace_event *e = &slot->trace[i % FIKIT_SHM_TRACE];
    uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
    for (int waited = 0;;) {
        if ((seq & ~FIKIT_TRACE_BUSY) > i + 1)
            return; /* a later event has the entry: this one is lost */
        if (seq & FIKIT_TRACE_BUSY) {
            if (++waited > FIKIT_TRACE_WAIT_NS / FIKIT_TRACE_WAIT_STEP_NS)
                return;
            struct timespec step = {0, FIKIT_TRACE_WAIT_STEP_NS};
            nanosleep(&step, NULL);
            seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
            continue;
        }
        if (__atomic_compare_exchange_n(&e->seq, &seq, (i + 1) | FIKIT_TRACE_BUSY, false,
                                        __ATOMIC_RELAXED, __ATOMIC_RELAXED))
            break;
    }
    atomic_thread_fence(memory_order_release);
    __atomic_store_n(&e->t_ns, ev->t_ns, __ATOMIC_RELAXED);
    __atomic_store_n(&e->key, ev->key, __ATOMIC_RELAXED);
    __atomic_store_n(&e->a, ev->a, __ATOMIC_RELAXED);
    __atomic_store_n(&e->b, ev->b, __ATOMIC_RELAXED);
    __atomic_store_n(&e->c, ev->c, __ATOMIC_RELAXED);
    __atomic_store_n(&e->type, ev->type, __ATOMIC_RELAXED);
    __atomic_store_n(&e->slot, ev->slot, __ATOMIC_RELAXED);
    __atomic_store_n(&e->reason, ev->reason, __ATOMIC_RELAXED);
    __atomic_store_n(&e->level, ev->level, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, i + 1, __ATOMIC_RELEASE);
}

/* What an entry's number says of event i: there, not yet (or being)
 * written, or replaced by a later lap's event. */
static int trace_entry_state(uint64_t seq, uint64_t i)
{
    if ((seq & ~FIKIT_TRACE_BUSY) > i + 1)
        return FIKIT_TRACE_OVERWRITTEN;
    return seq == i + 1 ? FIKIT_TRACE_READ : FIKIT_TRACE_NOT_YET;
}

int fikit_shm_trace_read(const struct fikit_shm_slot *slot, uint64_t i,
                         struct fikit_trace_event *out)
{
    const struct fikit_trace_event *e = &slot->trace[i % FIKIT_SHM_TRACE];
    uint64_t seq = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
    int state = trace_entry_state(seq, i);
    if (state != FIKIT_TRACE_READ)
        return state;
    out->seq = seq;
    out->t_ns = __atomic_load_n(&e->t_ns, __ATOMIC_RELAXED);
    out->key = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
    out->a = __atomic_load_n(&e->a, __ATOMIC_RELAXED);
    out->b = __atomic_load_n(&e->b, __ATOMIC_RELAXED);
    out->c = __atomic_load_n(&e->c, __ATOMIC_RELAXED);
    out->type = __atomic_load_n(&e->type, __ATOMIC_RELAXED);
    out->slot = __atomic_load_n(&e->slot, __ATOMIC_RELAXED);
    out->reason = __atomic_load_n(&e->reason, __ATOMIC_RELAXED);
    out->level = __atomic_load_n(&e->level, __ATOMIC_RELAXED);
    atomic_thread_fence(memory_order_acquire);
    /* Changed meanwhile: only a later lap's writer takes an entry that
     * holds event i, so what was read is gone. */
    seq = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
    return seq == i + 1 ? FIKIT_TRACE_READ : FIKIT_TRACE_OVERWRITTEN;
}

void fikit_shm_set_params(struct fikit_shm_header *hdr, const struct fikit_sched_params *p,
                          uint64_t spin_ns)
{
    atomic_store(&hdr->policy, p->policy);
    atomic_store(&hdr->idle_after_ns, fikit_params_idle_after(p));
    atomic_store(&hdr->idle_learned, (fikit_params_idle_learned(p) ? FIKIT_SHM_IDLE_LEARNED : 0u) |
                                         (p->pauses ? FIKIT_SHM_IDLE_PAUSES : 0u));
    atomic_store(&hdr->spin_ns, spin_ns);
    atomic_store(&hdr->fill_overhead_ns, p->substrate_cost_ns + p->safety_margin_ns);
    atomic_store(&hdr->gap_confidence_ppm, (uint32_t)(p->gap_confidence * 1e6 + 0.5));
    atomic_store(&hdr->max_queued_ns, p->max_queued_ns);
    atomic_store(&hdr->beside_max_slowdown_ppm, (uint32_t)(p->beside_max_slowdown * 1e6 + 0.5));
    atomic_store(&hdr->max_wait_ns, p->max_wait_ns);
}

void fikit_shm_view(const struct fikit_shm *shm, int slot_index, int level, bool beside,
                    struct fikit_view *v, struct fikit_admit_task *tasks, uint64_t *unmapped)
{
    const struct fikit_shm_header *h = shm->hdr;
    memset(v, 0, sizeof *v);
    v->level = level;
    v->running = atomic_load_explicit(&h->daemon_state, memory_order_relaxed) == FIKIT_DAEMON_RUNNING;
    v->policy = (enum fikit_policy)atomic_load_explicit(&h->policy, memory_order_relaxed);
    v->level_mask = atomic_load_explicit(&h->level_mask, memory_order_relaxed);
    v->tasks = tasks;
    if (!v->running || v->policy == FIKIT_POLICY_PASSTHROUGH || level <= 0 ||
        !(v->level_mask & ((1u << level) - 1u)))
        return;
    v->beside = beside;
    uint32_t idle = atomic_load_explicit(&h->idle_learned, memory_order_relaxed);
    v->idle_learned = idle & FIKIT_SHM_IDLE_LEARNED;
    v->pauses = idle & FIKIT_SHM_IDLE_PAUSES;
    v->idle_after_ns = atomic_load_explicit(&h->idle_after_ns, memory_order_relaxed);
    v->gap_confidence = atomic_load_explicit(&h->gap_confidence_ppm, memory_order_relaxed) / 1e6;
    v->max_queued_ns = atomic_load_explicit(&h->max_queued_ns, memory_order_relaxed);
    v->fill_overhead_ns = atomic_load_explicit(&h->fill_overhead_ns, memory_order_relaxed);
    v->beside_max_slowdown_ppm = atomic_load_explicit(&h->beside_max_slowdown_ppm, memory_order_relaxed);
    v->queued = atomic_load_explicit(&h->queued, memory_order_relaxed);
    v->fill_until_ns = atomic_load(&shm->com->fill_until_ns);
    v->granted_until_ns = atomic_load(&h->granted_until_ns);
    const struct fikit_shm_slot *own = shm->slots[slot_index];
    v->own_busy_until_ns = __atomic_load_n(&own->pub.busy_until_ns, __ATOMIC_RELAXED);
    fikit_shm_get_knobs(shm, slot_index, &v->knobs);
    uint64_t slots = atomic_load_explicit(&h->slot_mask, memory_order_acquire) & ~(1ull << slot_index);
    for (; slots; slots &= slots - 1) {
        int s = __builtin_ctzll(slots);
        const struct fikit_shm_owner *o = &h->owner[s];
        const struct fikit_shm_slot *sl = shm->slots[s];
        int olevel = o->level;
        if (olevel >= level || atomic_load_explicit(&o->state, memory_order_acquire) != FIKIT_SLOT_ACTIVE)
            continue;
        struct fikit_admit_task *t = &tasks[v->ntasks++];
        memset(t, 0, sizeof *t);
        struct fikit_shm_launch pub;
        t->level = olevel;
        /* Read only through a mapping of its owner's generation, before
         * and after (the mapping may be replaced meanwhile). */
        uint64_t gen = atomic_load_explicit(&o->gen, memory_order_acquire);
        bool current = gen && atomic_load_explicit(&shm->mapped[s], memory_order_acquire) == gen;
        t->unreadable = !current || !fikit_shm_read_launch(sl, &pub);
        if (current && beside) {
            t->slowdown_ppm = atomic_load_explicit(&sl->slowdown_ppm, memory_order_relaxed);
            t->slowdown_ns = atomic_load_explicit(&sl->slowdown_ns, memory_order_relaxed);
            t->waited_ns = atomic_load_explicit(&sl->waited_ns, memory_order_relaxed);
        }
        if (current) {
            atomic_thread_fence(memory_order_acquire);
            if (atomic_load_explicit(&shm->mapped[s], memory_order_relaxed) != gen)
                t->unreadable = true, t->slowdown_ppm = 0;
        } else if (unmapped) {
            *unmapped |= 1ull << s;
        }
        if (!t->unreadable) {
            t->launches = pub.launches;
            t->last_launch_ns = pub.last_launch_ns;
            t->busy_until_ns = pub.busy_until_ns;
            t->idle_after_ns = pub.idle_after_ns;
            t->gap = pub.gap;
        }
    }
}

void fikit_shm_set_knobs(struct fikit_shm *shm, int s, const struct fikit_lower_knobs *k)
{
    struct fikit_shm_owner *o = &shm->hdr->owner[s];
    atomic_store_explicit(&o->knob_inflight_ns, k->inflight_ns, memory_order_relaxed);
    atomic_store_explicit(&o->knob_sm_pct, k->sm_pct, memory_order_relaxed);
    atomic_store_explicit(&o->knob_flags, k->flags, memory_order_relaxed);
    atomic_store_explicit(&o->knob_mode, k->mode, memory_order_relaxed);
}

void fikit_shm_get_knobs(const struct fikit_shm *shm, int s, struct fikit_lower_knobs *k)
{
    const struct fikit_shm_owner *o = &shm->hdr->owner[s];
    k->mode = atomic_load_explicit(&o->knob_mode, memory_order_relaxed);
    k->sm_pct = atomic_load_explicit(&o->knob_sm_pct, memory_order_relaxed);
    k->flags = atomic_load_explicit(&o->knob_flags, memory_order_relaxed);
    k->inflight_ns = atomic_load_explicit(&o->knob_inflight_ns, memory_order_relaxed);
}

struct fikit_shm_waiter *fikit_shm_waiter_post(struct fikit_shm_slot *slot, uint64_t stream,
                                               uint64_t key, uint64_t dur_ns, uint64_t now)
{
    struct fikit_shm_waiter *w = NULL;
    for (int i = 0; i < FIKIT_SHM_WAITERS && !w; i++) {
        uint32_t expect = FIKIT_WAITER_FREE;
        if (atomic_compare_exchange_strong(&slot->waiters[i].state, &expect, FIKIT_WAITER_CLAIMED))
            w = &slot->waiters[i];
    }
    if (!w)
        return NULL;
    w->stream = stream;
    w->key = key;
    w->dur_ns = dur_ns;
    w->posted_ns = now;
    w->grant_reason = 0;
    atomic_store_explicit(&w->futex, 0, memory_order_relaxed);
    atomic_store_explicit(&w->sleeping, 0, memory_order_relaxed);
    atomic_store_explicit(&w->state, FIKIT_WAITER_POSTED, memory_order_release);
    return w;
}

void fikit_shm_waiter_free(struct fikit_shm_waiter *w)
{
    atomic_store_explicit(&w->state, FIKIT_WAITER_FREE, memory_order_release);
}

bool fikit_shm_waiter_posted(const struct fikit_shm_waiter *w, struct fikit_shm_posted *out)
{
    if (atomic_load_explicit(&w->state, memory_order_acquire) != FIKIT_WAITER_POSTED)
        return false;
    *out = (struct fikit_shm_posted){.stream = w->stream, .key = w->key, .dur_ns = w->dur_ns,
                                     .posted_ns = w->posted_ns};
    return true;
}

bool fikit_shm_waiter_queue(struct fikit_shm_waiter *w)
{
    uint32_t posted = FIKIT_WAITER_POSTED;
    return atomic_compare_exchange_strong_explicit(&w->state, &posted, FIKIT_WAITER_QUEUED,
                                                   memory_order_acq_rel, memory_order_relaxed);
}

bool fikit_shm_waiter_grant(struct fikit_shm_waiter *w, uint32_t reason, uint64_t at_ns)
{
    w->grant_reason = reason;
    w->granted_ns = at_ns;
    atomic_store_explicit(&w->state, FIKIT_WAITER_GRANTED, memory_order_release);
    /* Sequentially consistent, against the waiter's store of sleeping and
     * its load of state: either it sees the grant or we see it asleep. */
    atomic_fetch_add(&w->futex, 1);
    return atomic_load(&w->sleeping) != 0;
}

void fikit_shm_waiter_wake(struct fikit_shm_waiter *w)
{
    if (atomic_load(&w->sleeping))
        fikit_futex_wake(&w->futex, 1);
}

void fikit_shm_waiter_nudge(struct fikit_shm_waiter *w)
{
    atomic_fetch_add(&w->futex, 1);
    fikit_futex_wake(&w->futex, 1);
}

void fikit_shm_decide(struct fikit_shm *shm, struct fikit_sched *s, uint64_t now,
                      void (*apply)(void *user, const struct fikit_grant *g, size_t n), void *user,
                      uint64_t *wake_ns)
{
    struct fikit_grant grants[64];
    bool deciding = s->nreq != 0;
    if (deciding)
        s->client_fill_until_ns = fikit_shm_fill_lock(shm, now);
    size_t n;
    do {
        n = fikit_sched_decide(s, now, grants, 64, wake_ns);
        if (deciding && n < 64)
            fikit_shm_fill_unlock(shm, fikit_sched_granted_until(s));
        apply(user, grants, n);
    } while (n == 64);
    atomic_store(&shm->hdr->queued, (uint32_t)s->nreq);
}

int fikit_shm_take_record(const struct fikit_shm_slot *slot, struct fikit_sched *s, uint32_t id,
                          uint64_t now, uint64_t *seen)
{
    /* A new record is a new seqlock number: a withdrawn launch (a refused
     * one) republishes the record before it, whose count may equal one seen. */
    struct fikit_shm_launch pub;
    uint64_t seq;
    if (!read_launch(slot, &pub, &seq) || seq == *seen)
        return 0;
    struct fikit_launch_record rec = {.launches = pub.launches, .last_launch_ns = pub.last_launch_ns,
                                      .busy_until_ns = pub.busy_until_ns,
                                      .idle_after_ns = pub.idle_after_ns, .gap = pub.gap};
    int rc = fikit_sched_note_record(s, id, now, &rec);
    if (rc == 0)
        *seen = seq;
    return rc;
}
