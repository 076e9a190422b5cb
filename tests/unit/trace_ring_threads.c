/* The trace ring under many writers and a draining reader, as a task's
 * launching threads and its learner thread meet fikitd on one slot.
 *
 * Not a Criterion test: it runs under ThreadSanitizer too (make check-tsan),
 * whose runtime Criterion's runner cannot start under. Writers outrun the
 * reader so the ring wraps, writers wait for it, and a writer a lap ahead
 * writes the entry the reader reads. Checked:
 *   - no event is ever read torn: each one's fields agree with each other;
 *   - each writer's events come out in the order it wrote them;
 *   - every event written is either read or counted lost, never both;
 *   - with the reader stalled past the writers' bounded wait, writers
 *     still finish (they overwrite, and the loss is counted);
 *   - the reader never sticks on an entry that no writer will finish (a
 *     writer a lap behind must not put back an older number).
 * Exit 0 when all hold; otherwise the first failure and exit 1. */
#include "core/shm.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define WRITERS 8
#define EVENTS_PER_WRITER 6000
#define MIX 0x9e3779b97f4a7c15ull

static struct fikit_shm *seg;
static struct fikit_shm_slot *slot;
static atomic_int writers_left;
static atomic_int reader_stalled; /* while set, the reader reads nothing */

static void die(const char *what, uint64_t index, const struct fikit_trace_event *e)
{
    fprintf(stderr, "FAIL: %s at index %" PRIu64 ": t_ns %" PRIu64 " key %" PRIx64 " a %" PRIu64
                    " b %" PRIu64 " c %" PRIu64 " type %u reason %u\n",
            what, index, e->t_ns, e->key, e->a, e->b, e->c, e->type, e->reason);
    exit(1);
}

/* Every field is a function of one value: a torn read mixes two events. */
static struct fikit_trace_event event_of(uint32_t writer, uint32_t n)
{
    uint64_t v = (uint64_t)writer << 32 | n;
    return (struct fikit_trace_event){.t_ns = v, .key = v * MIX, .a = ~v, .b = v ^ MIX, .c = v + 7,
                                      .type = (uint16_t)(n & 0x7fff), .reason = (uint16_t)writer};
}

static void *writer_main(void *arg)
{
    uint32_t w = (uint32_t)(uintptr_t)arg;
    for (uint32_t n = 0; n < EVENTS_PER_WRITER; n++) {
        struct fikit_trace_event e = event_of(w, n);
        fikit_shm_trace(seg, slot, &e);
    }
    atomic_fetch_sub(&writers_left, 1);
    return NULL;
}

struct tally {
    uint64_t read, lost;
    int64_t last[WRITERS]; /* each writer's last event read, -1 before any */
};

/* fikitd's drain (fikitd/device.c): in order up to the first entry not
 * yet written; far behind, what is older than a ring is lost. */
static void drain(uint64_t *next, struct tally *t)
{
    uint64_t head = atomic_load(&slot->trace_head);
    if (head - *next > 2 * FIKIT_SHM_TRACE) {
        t->lost += head - FIKIT_SHM_TRACE - *next;
        *next = head - FIKIT_SHM_TRACE;
    }
    for (; *next < head; (*next)++) {
        struct fikit_trace_event e;
        int r = fikit_shm_trace_read(slot, *next, &e);
        if (r == FIKIT_TRACE_NOT_YET)
            break;
        if (r == FIKIT_TRACE_OVERWRITTEN) {
            t->lost++;
            continue;
        }
        uint32_t w = (uint32_t)(e.t_ns >> 32), n = (uint32_t)e.t_ns;
        struct fikit_trace_event want = event_of(w, n);
        if (w >= WRITERS || n >= EVENTS_PER_WRITER)
            die("an event no writer wrote", *next, &e);
        if (e.key != want.key || e.a != want.a || e.b != want.b || e.c != want.c || e.type != want.type ||
            e.reason != want.reason)
            die("a torn event (fields of two events)", *next, &e);
        if ((int64_t)n <= t->last[w])
            die("a writer's events out of order or twice", *next, &e);
        t->last[w] = n;
        t->read++;
    }
    atomic_store_explicit(&slot->trace_tail, *next, memory_order_release);
}

static void *reader_main(void *arg)
{
    struct tally *t = arg;
    uint64_t next = 0;
    struct timespec tick = {0, 50 * 1000}; /* fikitd drains on a timer, and on the bell */
    int idle_ticks = 0; /* since the writers finished, with nothing read */
    for (;;) {
        int done = atomic_load(&writers_left) == 0;
        uint64_t before = next;
        if (!atomic_load(&reader_stalled))
            drain(&next, t);
        if (done && next == atomic_load(&slot->trace_head))
            return NULL;
        idle_ticks = done && next == before ? idle_ticks + 1 : 0;
        if (idle_ticks > 100000) { /* 5 s and more: nobody will finish the entry */
            struct fikit_trace_event e = {0};
            fikit_shm_trace_read(slot, next, &e);
            die("the reader stuck on an entry no writer will finish (a stale number)", next, &e);
        }
        nanosleep(&tick, NULL);
    }
}

static struct tally run(const char *what, int stall_ms)
{
    atomic_store(&slot->trace_head, 0);
    atomic_store(&slot->trace_tail, 0);
    for (int i = 0; i < FIKIT_SHM_TRACE; i++)
        __atomic_store_n(&slot->trace[i].seq, 0, __ATOMIC_RELAXED);
    struct tally t = {0};
    for (int w = 0; w < WRITERS; w++)
        t.last[w] = -1;
    atomic_store(&writers_left, WRITERS);
    atomic_store(&reader_stalled, stall_ms > 0);
    pthread_t rd, wr[WRITERS];
    if (pthread_create(&rd, NULL, reader_main, &t) != 0) {
        perror("pthread_create");
        exit(1);
    }
    for (int w = 0; w < WRITERS; w++)
        if (pthread_create(&wr[w], NULL, writer_main, (void *)(uintptr_t)w) != 0) {
            perror("pthread_create");
            exit(1);
        }
    if (stall_ms > 0) {
        /* At least stall_ms, and until a writer gave up waiting (an entry
         * holds an event of the ring's second lap while nothing was read),
         * 30 s at most: on a loaded machine the bounded wait's sleeps last
         * longer than they ask, and 300 ms once ended before any writer
         * gave up (beside two busy loops). */
        struct timespec ts = {stall_ms / 1000, (long)(stall_ms % 1000) * 1000000L};
        nanosleep(&ts, NULL);
        for (int waited_ms = 0; waited_ms < 30000; waited_ms++) {
            bool gave_up = false;
            for (int i = 0; i < FIKIT_SHM_TRACE && !gave_up; i++)
                gave_up = (__atomic_load_n(&slot->trace[i].seq, __ATOMIC_RELAXED) & ~FIKIT_TRACE_BUSY) >
                          FIKIT_SHM_TRACE;
            if (gave_up || atomic_load(&writers_left) == 0)
                break;
            struct timespec ms = {0, 1000000L};
            nanosleep(&ms, NULL);
        }
        atomic_store(&reader_stalled, 0);
    }
    for (int w = 0; w < WRITERS; w++)
        pthread_join(wr[w], NULL);
    pthread_join(rd, NULL);
    uint64_t written = atomic_load(&slot->trace_head);
    printf("%-34s written %" PRIu64 ", read %" PRIu64 ", lost %" PRIu64 "\n", what, written, t.read,
           t.lost);
    if (written != (uint64_t)WRITERS * EVENTS_PER_WRITER) {
        fprintf(stderr, "FAIL: %s: %" PRIu64 " events taken, not %d\n", what, written,
                WRITERS * EVENTS_PER_WRITER);
        exit(1);
    }
    if (t.read + t.lost != written) {
        fprintf(stderr, "FAIL: %s: read %" PRIu64 " + lost %" PRIu64 " is not the %" PRIu64 " written\n",
                what, t.read, t.lost, written);
        exit(1);
    }
    return t;
}

int main(void)
{
    if (fikit_shm_local(&seg) != 0) {
        perror("fikit_shm_local");
        return 1;
    }
    slot = seg->slots[0];
    atomic_store(&seg->hdr->daemon_state, FIKIT_DAEMON_RUNNING);
    atomic_store(&seg->hdr->trace_on, 1u);

    run("a reader draining on its timer:", 0);
    /* Stalled for 30 bounded waits' worth: every writer gives up waiting. */
    struct tally t = run("a reader stalled for 300 ms:", 30 * FIKIT_TRACE_WAIT_NS / 1000000);
    if (t.lost == 0) {
        fprintf(stderr, "FAIL: with the reader stalled, no event was lost: the writers waited it out\n");
        return 1;
    }
    atomic_store(&seg->hdr->daemon_state, FIKIT_DAEMON_STOPPED);
    run("no daemon (writers never wait):", 0);
    fikit_shm_unmap(seg);
    printf("ok: no torn or reordered event, every event read or counted lost\n");
    return 0;
}
