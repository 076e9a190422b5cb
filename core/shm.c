/* core/shm.h's layout and mapping: fikitd's memfds, the clients' read-only
 * and read-write mappings, the slots' fixed address range, and the local
 * view fikit sim and the tests use. The segment's other jobs are in
 * shm_publish.c, shm_waiter.c, shm_trace.c and shm_policy.c. */
#include "core/shm.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
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
    atomic_store_explicit(&shm->slots[s]->gen, gen, memory_order_relaxed);
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
    if (atomic_load_explicit(&shm->slots[s]->gen, memory_order_relaxed) != gen)
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
        atomic_store_explicit(&shm->slots[s]->gen, (uint64_t)s + 1, memory_order_relaxed);
        shm->slots[s]->index = (uint32_t)s;
        atomic_store(&shm->hdr->owner[s].gen, (uint64_t)s + 1);
        atomic_store(&shm->mapped[s], (uint64_t)s + 1);
    }
    *out = shm;
    return 0;
}

void fikit_shm_local_register(struct fikit_shm *shm, int s, int level)
{
    struct fikit_shm_owner *o = &shm->hdr->owner[s];
    o->level = level;
    o->pid = (int32_t)s + 1;
    atomic_store(&o->state, FIKIT_SLOT_ACTIVE);
    atomic_fetch_or(&shm->hdr->slot_mask, 1ull << s);
    atomic_fetch_or(&shm->hdr->level_mask, 1u << level);
    atomic_store(&shm->hdr->daemon_state, FIKIT_DAEMON_RUNNING);
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
