#include "interpose/client.h"
#include "interpose/burst.h"
#include "interpose/gate.h"

#include "core/clock.h"
#include "core/log.h"
#include "core/profile.h"
#include "core/proto.h"
#include "interpose/fault.h"
#include "interpose/learn.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct fikit_client fikit_client = {.lock = PTHREAD_MUTEX_INITIALIZER, .sock = -1,
                                    .learner = FIKIT_LEARNER_INIT};

static pthread_once_t init_once = PTHREAD_ONCE_INIT;

static void start_housekeeping(struct fikit_client *c);
static void save_profiles(bool force);

static uint32_t wants_mask(enum fikit_backend_choice b)
{
    switch (b) {
    case FIKIT_BACKEND_CHOICE_AUTO:
        return 1u << FIKIT_BACKEND_CUDA | 1u << FIKIT_BACKEND_HIP | 1u << FIKIT_BACKEND_OPENCL;
    case FIKIT_BACKEND_CHOICE_CUDA: return 1u << FIKIT_BACKEND_CUDA;
    case FIKIT_BACKEND_CHOICE_HIP: return 1u << FIKIT_BACKEND_HIP;
    case FIKIT_BACKEND_CHOICE_OPENCL: return 1u << FIKIT_BACKEND_OPENCL;
    }
    return 0;
}

static void after_fork_child(void)
{
    /* The child is a new task: it registers under its own pid at its first
     * launch. The parent's registrations and learner are not its own. */
    struct fikit_client *c = &fikit_client;
    pthread_mutex_init(&c->lock, NULL);
    if (c->sock >= 0)
        close(c->sock);
    c->sock = -1;
    atomic_store(&c->ndevs, 0);
    atomic_store(&c->daemon_lost, false);
    c->housekeeping = false; /* the parent's thread is not in the child */
    fikit_learn_reset(&c->learner);
    fikit_gate_after_fork_child();
}

/* CUDA_MPS_ACTIVE_THREAD_PERCENTAGE as this process's environment has it:
 * the number, or -1 where it is unset, empty or not a whole number. */
static long env_thread_cap(const char **text)
{
    const char *cap = getenv("CUDA_MPS_ACTIVE_THREAD_PERCENTAGE");
    *text = cap;
    char *end = NULL;
    long v = cap && *cap ? strtol(cap, &end, 10) : -1;
    return end && *end ? -1 : v;
}

/* share = beside lets the task run while higher levels are active, which is
 * safe only with the MPS thread cap that keeps it off part of the SMs: the
 * cap must be in this process's environment (fikit-launch puts it there). */
static bool thread_cap_in_force(const char *task, int thread_pct)
{
    if (!thread_pct)
        return false;
    const char *cap;
    long v = env_thread_cap(&cap);
    if (v >= 1 && v <= thread_pct)
        return true;
    fikit_warn("task %s: share = beside, but CUDA_MPS_ACTIVE_THREAD_PERCENTAGE is %s%s%s (want 1 to "
               "%d; start the task with fikit-launch): it shares only the gaps of higher levels",
               task, cap ? "'" : "not set", cap ? cap : "", cap ? "'" : "", thread_pct);
    return false;
}

/* mps_lower_cap = launches: fikit confines the launches, unless a thread
 * cap is in the environment anyway (green contexts cannot be made under
 * one), which then keeps the task to its share instead. */
static void confine_or_cap(struct fikit_client *c, struct fikit_task_sharing *s)
{
    const char *cap;
    long v = env_thread_cap(&cap);
    if (v < 0 || v >= 100) {
        c->confine_pct = (uint32_t)s->confine_pct;
        return;
    }
    fikit_debug("task %s: CUDA_MPS_ACTIVE_THREAD_PERCENTAGE=%s keeps it to its share; its launches are "
                "not confined", c->task, cap);
    s->thread_pct = s->confine_pct;
}

/* The slot says the task shares only gaps once confining failed (fikitd's
 * status reads it). */
static void tell_gaps_only(const struct fikit_client *c, struct fikit_registration *r)
{
    if (r && atomic_load(&c->confine_failed))
        atomic_fetch_or(&r->slot->flags, FIKIT_SLOT_GAPS_ONLY);
}

void fikit_client_confine_failed(const char *why)
{
    struct fikit_client *c = &fikit_client;
    bool was = false;
    if (!atomic_compare_exchange_strong(&c->confine_failed, &was, true))
        return;
    fikit_warn("task %s: cannot confine its launches to %u%% of the device (%s): it shares only the gaps "
               "of higher levels", c->task, c->confine_pct, why);
    pthread_mutex_lock(&c->lock);
    for (int i = 0; i < atomic_load(&c->ndevs); i++)
        tell_gaps_only(c, atomic_load(&c->devs[i]->reg));
    pthread_mutex_unlock(&c->lock);
}

static void init_once_fn(void)
{
    struct fikit_client *c = &fikit_client;
    struct fikit_err err;
    const char *lvl = getenv("FIKIT_LOG");
    if (fikit_config_load(NULL, &c->cfg, &err) != 0) {
        fikit_warn("%s; running unscheduled (passthrough)", err.msg);
        c->disabled = true;
        atomic_store_explicit(&c->wants, FIKIT_CLIENT_WANTS_KNOWN, memory_order_release);
        return;
    }
    enum fikit_log_level level = c->cfg.log_level;
    if (lvl)
        fikit_log_parse_level(lvl, &level);
    fikit_log_set_level(level);

    const char *task = getenv("FIKIT_TASK");
    if (task && fikit_task_name_valid(task)) {
        snprintf(c->task, sizeof c->task, "%s", task);
    } else {
        /* Without fikit-launch: the program's name. */
        char comm[64] = "program";
        FILE *f = fopen("/proc/self/comm", "re");
        if (f) {
            if (fgets(comm, sizeof comm, f))
                comm[strcspn(comm, "\n")] = '\0';
            fclose(f);
        }
        for (char *p = comm; *p; p++)
            if (!fikit_task_name_valid((char[]){*p, 0}))
                *p = '_';
        snprintf(c->task, sizeof c->task, "%s", comm[0] ? comm : "program");
    }
    const struct fikit_task_conf *tc = fikit_config_task(&c->cfg, c->task);
    c->priority = tc ? tc->priority : c->cfg.default_priority;
    const char *prio = getenv("FIKIT_PRIORITY");
    if (prio && *prio) {
        char *end;
        long v = strtol(prio, &end, 10);
        if (!*end && v >= 0 && v < FIKIT_LEVELS)
            c->priority = (int)v;
        else
            fikit_warn("FIKIT_PRIORITY=%s is not a priority from 0 to 9; using %d", prio,
                       c->priority);
    }
    struct fikit_task_sharing sharing;
    fikit_config_task_sharing(&c->cfg, tc, c->priority, &sharing);
    if (sharing.share == FIKIT_SHARE_BESIDE && sharing.confine_pct)
        confine_or_cap(c, &sharing);
    c->beside = sharing.share == FIKIT_SHARE_BESIDE &&
                (c->confine_pct || thread_cap_in_force(c->task, sharing.thread_pct));
    const char *measure = getenv("FIKIT_MEASURE");
    c->measure = measure && strcmp(measure, "1") == 0;
    c->backend = c->cfg.backend;
    const char *be = getenv("FIKIT_BACKEND");
    if (be && *be && fikit_backend_choice_parse(be, &c->backend))
        fikit_warn("FIKIT_BACKEND=%s is not one of %s; using %s", be, FIKIT_BACKEND_CHOICE_NAMES,
                   fikit_backend_choice_name(c->backend));
    c->sample_period = c->cfg.sample_rate > 0 ? (uint32_t)(1.0 / c->cfg.sample_rate + 0.5) : 0;
    if (c->sample_period == 0 && c->cfg.sample_rate > 0)
        c->sample_period = 1;
    atomic_store(&c->sample_countdown, c->sample_period);
    fikit_config_socket_path(&c->cfg, c->socket_path, sizeof c->socket_path);
    pthread_atfork(NULL, NULL, after_fork_child);
    fikit_debug("task %s, priority %d%s%s, backend %s, socket %s", c->task, c->priority,
                c->measure ? ", measuring" : "", c->beside ? ", beside higher levels" : "",
                fikit_backend_choice_name(c->backend), c->socket_path);
    /* Last: a thread that sees KNOWN skips pthread_once and reads every
     * field above without a lock, so they must all be written by now. */
    atomic_store_explicit(&c->wants, wants_mask(c->backend) | FIKIT_CLIENT_WANTS_KNOWN,
                          memory_order_release);
}

void fikit_client_init(void) { pthread_once(&init_once, init_once_fn); }

bool fikit_client_learns(void)
{
    fikit_client_init();
    return !fikit_client.disabled && (fikit_client.measure || fikit_client.sample_period);
}

bool fikit_client_wants(enum fikit_backend_kind kind)
{
    /* Every launch asks: once initialised, one load. */
    uint32_t m = atomic_load_explicit(&fikit_client.wants, memory_order_acquire);
    if (!(m & FIKIT_CLIENT_WANTS_KNOWN)) {
        fikit_client_init();
        m = atomic_load_explicit(&fikit_client.wants, memory_order_acquire);
    }
    return (m >> kind) & 1u;
}

/* ---------------------------------------------------------- registration */

static void warn_missing(struct fikit_client *c, int err)
{
    if (c->warned_missing)
        return;
    c->warned_missing = true;
    fikit_warn("cannot reach fikitd at %s (%s): task %s runs unscheduled (passthrough)%s",
               c->socket_path, strerror(-err), c->task,
               err == -EACCES ? "; the socket admits fikitd's own user and the members of [daemon] "
                                "socket_group in its fikit.ini (as root, the group fikit): ask to be "
                                "added, or start a fikitd of your own" : "");
}

/* Connects if needed. Called with c->lock held. */
static int ensure_connected(struct fikit_client *c)
{
    if (c->sock >= 0)
        return 0;
    int fd = fikit_proto_connect(c->socket_path);
    if (fd < 0)
        return fd;
    c->sock = fd;
    return 0;
}

/* Receives a SLOT_FD of the part expected (of slot and gen, for a slot):
 * its fd, or a negative errno. Called with c->lock held. */
static int recv_part(struct fikit_client *c, uint32_t part, uint32_t slot, uint64_t gen)
{
    char buf[FIKIT_MSG_MAX];
    uint16_t type;
    int fd = -1;
    int rc = fikit_proto_recv(c->sock, buf, &type, &fd, 5000);
    if (rc < 0)
        return rc;
    const struct fikit_msg_slot_fd *m = fikit_proto_payload(buf);
    if (type != FIKIT_MSG_SLOT_FD || fd < 0 || m->part != part ||
        (part != FIKIT_PART_COMMONS && (m->slot != slot || m->gen != gen))) {
        if (fd >= 0)
            close(fd);
        return type == FIKIT_MSG_ERROR ? ((const struct fikit_msg_error *)m)->code : -EPROTO;
    }
    return fd;
}

bool fikit_client_fetch_slots(struct fikit_registration *r, uint64_t want)
{
    struct fikit_client *c = &fikit_client;
    bool mapped = false;
    /* Never behind a registration or a reconnection: the launch holds
     * instead, and a later one asks. */
    if (pthread_mutex_trylock(&c->lock) != 0)
        return false;
    for (; want && c->sock >= 0 && !atomic_load(&c->daemon_lost); want &= want - 1) {
        int s = __builtin_ctzll(want);
        uint64_t gen = atomic_load(&r->shm->hdr->owner[s].gen);
        /* Once per owner: a refusal is not asked again on every launch. */
        if (!gen || r->asked[s] == gen)
            continue;
        r->asked[s] = gen;
        struct fikit_msg_slot m = {.device_index = r->device_index, .slot = (uint32_t)s, .gen = gen};
        if (fikit_proto_send(c->sock, FIKIT_MSG_SLOT, &m, sizeof m, -1) != 0)
            break;
        int fd = recv_part(c, FIKIT_PART_PEER, (uint32_t)s, gen);
        if (fd == -ETIMEDOUT || fd == -ECONNRESET || fd == -EPROTO)
            break; /* the connection is not what it was: the housekeeper sees to it */
        if (fd < 0)
            continue;
        int rc = fikit_shm_map_slot(r->shm, s, gen, fd, false);
        close(fd);
        if (rc)
            fikit_debug("slot %d of %s could not be mapped: %s", s, r->shm->hdr->device_key, strerror(-rc));
        mapped |= rc == 0;
    }
    pthread_mutex_unlock(&c->lock);
    return mapped;
}

static int do_register(struct fikit_client *c, struct fikit_client_device *d,
                       struct fikit_registration **out)
{
    struct fikit_msg_register m = {.level = c->priority, .backend = d->ops->kind,
                                   .flags = (c->measure ? FIKIT_REGISTER_MEASURE : 0) |
                                            (d->on_host ? FIKIT_REGISTER_DEVICE_ON_HOST : 0) |
                                            (c->beside ? FIKIT_REGISTER_BESIDE : 0)};
    snprintf(m.task, sizeof m.task, "%s", c->task);
    snprintf(m.device_key, sizeof m.device_key, "%s", d->key);
    snprintf(m.device_model, sizeof m.device_model, "%s", d->model);
    /* fikitd takes printable ASCII only (it logs and shows these): a
     * driver's other bytes become '_'. */
    for (char *p = m.device_key; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            *p = '_';
    for (char *p = m.device_model; *p; p++)
        if (*p < 0x20 || *p > 0x7e)
            *p = '_';
    int rc = fikit_proto_send(c->sock, FIKIT_MSG_REGISTER, &m, sizeof m, -1);
    if (rc)
        return rc;
    fikit_fault_point(FIKIT_FAULT_REGISTER);
    char buf[FIKIT_MSG_MAX];
    uint16_t type;
    int fd = -1;
    rc = fikit_proto_recv(c->sock, buf, &type, &fd, 5000);
    if (rc < 0)
        return rc;
    if (type == FIKIT_MSG_ERROR) {
        const struct fikit_msg_error *e = fikit_proto_payload(buf);
        fikit_warn("fikitd refused task %s on %s: %s", c->task, d->key, e->text);
        if (fd >= 0)
            close(fd);
        return e->code < 0 ? e->code : -EPROTO; /* fikit_proto_check keeps it negative */
    }
    if (type != FIKIT_MSG_REGISTER_OK || fd < 0) {
        if (fd >= 0)
            close(fd);
        if (!atomic_exchange(&c->warned_register, true))
            fikit_warn("fikitd answered task %s's registration on %s with message %u%s: it runs "
                       "unscheduled there", c->task, d->key, (unsigned)type, fd < 0 ? " and no segment" : "");
        return -EPROTO;
    }
    struct fikit_msg_register_ok ok = *(const struct fikit_msg_register_ok *)fikit_proto_payload(buf);
    /* Then the commons and the task's own slot, each with its fd. */
    int com_fd = recv_part(c, FIKIT_PART_COMMONS, 0, 0), slot_fd = -1;
    if (com_fd >= 0)
        slot_fd = recv_part(c, FIKIT_PART_OWN, ok.slot, ok.slot_gen);
    struct fikit_shm *shm = NULL;
    rc = com_fd < 0 ? com_fd : slot_fd < 0 ? slot_fd : fikit_shm_map(fd, com_fd, &shm);
    if (!rc && (rc = fikit_shm_map_slot(shm, (int)ok.slot, ok.slot_gen, slot_fd, true)) != 0) {
        fikit_shm_unmap(shm);
        shm = NULL;
    }
    close(fd);
    if (com_fd >= 0)
        close(com_fd);
    if (slot_fd >= 0)
        close(slot_fd);
    if (rc) {
        /* Memory of another version, or a part missing: never without a
         * word. */
        if (!atomic_exchange(&c->warned_register, true))
            fikit_warn("the shared segment fikitd gave task %s for %s cannot be used (%s: %s): it runs "
                       "unscheduled there (said once)", c->task, d->key, strerror(-rc),
                       rc == -EPROTO ? "its header is not this libfikit's" : "mapping failed");
        return rc;
    }
    struct fikit_registration *r = aligned_alloc(64, sizeof *r);
    if (r)
        memset(r, 0, sizeof *r);
    if (!r) {
        fikit_shm_unmap(shm);
        return -ENOMEM;
    }
    r->shm = shm;
    r->hdr = shm->hdr;
    r->slot = shm->slots[ok.slot];
    r->slot_index = (int)ok.slot;
    r->level = ok.level;
    r->generation = ok.generation;
    r->device_index = ok.device_index;
    /* Another program of this task name on the device learns into the same
     * profile: say so, once per device (fikitd's log names both pids). */
    for (int s = 0; s < FIKIT_SHM_SLOTS; s++) {
        const struct fikit_shm_owner *o = &shm->hdr->owner[s];
        if (s != r->slot_index && atomic_load(&o->state) == FIKIT_SLOT_ACTIVE && o->pid != getpid() &&
            strncmp(o->name, c->task, sizeof o->name) == 0) {
            fikit_warn("task %s also runs in pid %d on %s: both learn into one profile, each saving "
                       "over the other's records; give one another name (fikit-launch --task NAME)",
                       c->task, (int)o->pid, d->key);
            break;
        }
    }
    fikit_burst_publish_ref(d, r);
    if (ok.level != ok.requested_level)
        fikit_warn("task %s asked for priority %d; fikitd allows it %d at most (fikit.ini [limits], "
                   "or a cluster partition's ceiling): running at %d", c->task, ok.requested_level,
                   ok.level, ok.level);
    *out = r;
    return 0;
}

static void load_profile(struct fikit_client *c, struct fikit_client_device *d)
{
    char dir[PATH_MAX];
    if (fikit_config_profile_dir(&c->cfg, dir, sizeof dir) ||
        fikit_profile_path(d->profile_path, sizeof d->profile_path, dir, c->task, d->model)) {
        d->profile_path[0] = '\0';
        return;
    }
    if (c->measure)
        return; /* a measuring run starts afresh */
    struct fikit_err err;
    struct fikit_profile_meta meta;
    int rc = fikit_profile_load(d->profile_path, &meta, &d->store, &err);
    if (rc == 0) {
        fikit_predictor_load(d->pred, &d->store);
        if (fikit_slowdown_init(&d->slow, &d->store))
            fikit_warn("no memory for the slowdown references of %s", d->profile_path);
        atomic_store(&d->idle_after_ns, fikit_measure_idle_gap(&d->store));
        fikit_debug("loaded %s: %zu kernels, %zu gaps", d->profile_path,
                    fikit_measure_kernel_count(&d->store), fikit_measure_gap_count(&d->store));
    } else if (rc != -ENOENT) {
        fikit_warn("%s; continuing without this profile", err.msg);
    }
}

struct fikit_client_device *fikit_client_device(const struct fikit_backend_ops *ops,
                                                const struct fikit_launch_desc *l)
{
    struct fikit_client *c = &fikit_client;
    int n = atomic_load_explicit(&c->ndevs, memory_order_acquire);
    for (int i = 0; i < n; i++)
        if (c->devs[i]->handle == l->device && c->devs[i]->ops == ops)
            return c->devs[i];
    if (c->disabled)
        return NULL;

    pthread_mutex_lock(&c->lock);
    n = atomic_load(&c->ndevs);
    for (int i = 0; i < n; i++) {
        if (c->devs[i]->handle == l->device && c->devs[i]->ops == ops) {
            pthread_mutex_unlock(&c->lock);
            return c->devs[i];
        }
    }
    struct fikit_client_device *d = NULL;
    if (n == FIKIT_CLIENT_MAX_DEVICES)
        goto out;
    d = aligned_alloc(64, sizeof *d);
    if (!d)
        goto out;
    memset(d, 0, sizeof *d);
    d->ops = ops;
    d->handle = l->device;
    d->level = c->priority;
    pthread_mutex_init(&d->store_lock, NULL);
    pthread_mutex_init(&d->burst_lock, NULL);
    d->pred = fikit_predictor_new();
    if (!d->pred || fikit_measure_init(&d->store) ||
        ops->device_identity(l, d->key, sizeof d->key, d->model, sizeof d->model)) {
        fikit_predictor_free(d->pred);
        fikit_measure_destroy(&d->store); /* safe on a store never initialised (zeroed) */
        free(d);
        d = NULL;
        goto out;
    }
    d->on_host = ops->device_on_host && ops->device_on_host(l);
    load_profile(c, d);
    int rc = ensure_connected(c);
    struct fikit_registration *r = NULL;
    if (rc == 0)
        rc = do_register(c, d, &r);
    if (rc == 0) {
        tell_gaps_only(c, r);
        atomic_store(&d->reg, r);
        d->level = r->level;
        fikit_debug("registered on %s (%s) in slot %d at priority %d", d->key, d->model,
                    r->slot_index, r->level);
    } else if (rc == -ENOENT || rc == -ECONNREFUSED || rc == -ENOTCONN || rc == -ECONNRESET ||
               rc == -EACCES || rc == -ETIMEDOUT) {
        warn_missing(c, rc);
        if (c->sock >= 0) {
            close(c->sock);
            c->sock = -1;
        }
        atomic_store(&c->daemon_lost, true);
    }
    c->devs[n] = d;
    atomic_store_explicit(&c->ndevs, n + 1, memory_order_release);
    start_housekeeping(c);
out:
    pthread_mutex_unlock(&c->lock);
    return d;
}

/* --------------------------------------------------------- housekeeping */

#define SAVE_PERIOD_NS (30ull * FIKIT_NS_PER_S)

/* The process's one thread of fikit's own: learns from timed launches,
 * notices a lost daemon and rejoins a new one, keeps profiles current. */
static void *housekeeping(void *arg)
{
    struct fikit_client *c = arg;
    uint64_t next_check = 0;
    while (fikit_learn_wait(&c->learner)) {
        fikit_learn_drain(&c->learner, false);
        uint64_t now = fikit_now_ns();
        if (now < next_check)
            continue;
        next_check = now + 100 * FIKIT_NS_PER_MS;
        fikit_client_check_daemon();
        /* Long measuring runs keep their profile current. */
        for (int i = 0; i < atomic_load(&c->ndevs); i++) {
            struct fikit_client_device *d = c->devs[i];
            if (d->dirty && now - d->saved_ns > SAVE_PERIOD_NS && d->saved_ns) {
                save_profiles(false);
                break;
            }
            if (!d->saved_ns)
                d->saved_ns = now;
        }
    }
    return NULL;
}

static void at_exit(void)
{
    struct fikit_client *c = &fikit_client;
    pthread_mutex_lock(&c->lock);
    c->exiting = true;
    bool started = c->housekeeping;
    pthread_mutex_unlock(&c->lock);
    fikit_learn_stop(&c->learner);
    if (started)
        pthread_join(c->housekeeper, NULL);
    /* What finished is learned; what is still running is left alone. */
    fikit_learn_drain(&c->learner, true);
    save_profiles(true);
}

/* Under c->lock: the thread, once (again in a forked child). */
static void start_housekeeping(struct fikit_client *c)
{
    if (!c->exit_handler) {
        atexit(at_exit);
        c->exit_handler = true;
    }
    if (!c->housekeeping && !c->exiting &&
        pthread_create(&c->housekeeper, NULL, housekeeping, c) == 0)
        c->housekeeping = true;
}

/* ------------------------------------------------------------- liveness */

void fikit_client_check_daemon(void)
{
    struct fikit_client *c = &fikit_client;
    static uint64_t next_try;
    pthread_mutex_lock(&c->lock);
    if (!atomic_load(&c->daemon_lost) && c->sock >= 0) {
        struct pollfd p = {.fd = c->sock, .events = POLLRDHUP};
        bool stopped = false;
        for (int i = 0; i < atomic_load(&c->ndevs); i++) {
            struct fikit_registration *r = atomic_load(&c->devs[i]->reg);
            if (r && atomic_load(&r->shm->hdr->daemon_state) != FIKIT_DAEMON_RUNNING)
                stopped = true;
        }
        /* Gone is what fikitd's socket says: the segment's daemon_state can
         * be written by any task of the device (fikitd puts it back within
         * 10 ms), and dropping the registration for it left the task
         * unscheduled. fikitd's own stop marks the segments stopped and
         * closes the connections right after: wait a moment for that. */
        if (poll(&p, 1, stopped ? 20 : 0) == 1 && (p.revents & (POLLHUP | POLLRDHUP | POLLERR))) {
            fikit_warn("fikitd went away: task %s runs unscheduled (passthrough) until it is back",
                       c->task);
            atomic_store(&c->daemon_lost, true);
            for (int i = 0; i < atomic_load(&c->ndevs); i++)
                atomic_store(&c->devs[i]->reg, NULL);
            close(c->sock);
            c->sock = -1;
            next_try = fikit_now_ns() + FIKIT_NS_PER_S;
        }
    } else if (atomic_load(&c->daemon_lost) && fikit_now_ns() >= next_try) {
        /* Rejoin a (new) daemon. Old mappings stay: a launch may read them. */
        next_try = fikit_now_ns() + FIKIT_NS_PER_S;
        if (ensure_connected(c) == 0) {
            int joined = 0, n = atomic_load(&c->ndevs);
            for (int i = 0; i < n; i++) {
                struct fikit_registration *r = NULL;
                if (do_register(c, c->devs[i], &r) == 0) {
                    c->devs[i]->level = r->level;
                    tell_gaps_only(c, r);
                    atomic_store(&c->devs[i]->reg, r);
                    joined++;
                }
            }
            if (joined == n) {
                atomic_store(&c->daemon_lost, false);
                if (n)
                    fikit_warn("fikitd is back: task %s is scheduled again", c->task);
            } else {
                close(c->sock);
                c->sock = -1;
            }
        }
    }
    pthread_mutex_unlock(&c->lock);
}

static void save_profiles(bool force)
{
    struct fikit_client *c = &fikit_client;
    int n = atomic_load(&c->ndevs);
    bool saved[FIKIT_CLIENT_MAX_DEVICES] = {0};
    for (int i = 0; i < n; i++) {
        struct fikit_client_device *d = c->devs[i];
        pthread_mutex_lock(&d->store_lock);
        if (d->profile_path[0] && (d->dirty || (force && c->measure))) {
            struct fikit_profile_meta meta = {.backend = d->ops->kind};
            snprintf(meta.task, sizeof meta.task, "%.63s", c->task);
            snprintf(meta.device_model, sizeof meta.device_model, "%.127s", d->model);
            struct fikit_err err;
            if (fikit_profile_save(d->profile_path, &meta, &d->store, &err) == 0) {
                d->dirty = false;
                d->saved_ns = fikit_now_ns();
                fikit_debug("saved %s", d->profile_path);
                saved[i] = true;
            } else {
                fikit_warn("%s", err.msg);
            }
        }
        pthread_mutex_unlock(&d->store_lock);
        /* What it took alone may have grown: fikitd judges by the newest. */
        struct fikit_registration *r = atomic_load(&d->reg);
        if (saved[i] && r)
            fikit_burst_publish_ref(d, r);
    }
}
