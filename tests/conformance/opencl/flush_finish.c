/* clFlush and clFinish with held work: one thread enqueues kernels on a
 * queue (behind a busy priority-0 task, fikit holds its launches in the
 * enqueue call) while the main thread keeps calling clFlush and clFinish on
 * that queue and on another; neither may hang or return early for the work
 * that was enqueued, and the final clFinish sees every kernel done. */
#include "common.h"

#include <stdatomic.h>
#include <time.h>

enum { N = 256, LAUNCHES = 40 };

static struct conf c;
static cl_kernel add1;
static atomic_int enqueued;
static atomic_bool done;

static void *launcher(void *arg)
{
    (void)arg;
    for (int i = 0; i < LAUNCHES; i++) {
        conf_ndrange1(c.queue, add1, "add1", N, 0, NULL, NULL);
        atomic_fetch_add(&enqueued, 1);
    }
    atomic_store(&done, true);
    return NULL;
}

int main(int argc, char **argv)
{
    conf_open(argc, argv, &c);
    cl_int err;
    cl_command_queue other = clCreateCommandQueue(c.ctx, c.device, 0, &err);
    CLERR(err);
    cl_program p = conf_build(&c, CONF_SRC_STEPS);
    add1 = conf_kernel(p, "add1");
    cl_kernel twice = conf_kernel(p, "twice");
    int init[N], want[N], want2[N];
    for (int i = 0; i < N; i++)
        init[i] = i;
    cl_mem buf = conf_buffer(c.ctx, sizeof init, init), buf2 = conf_buffer(c.ctx, sizeof init, init);
    conf_arg_mem(add1, 0, buf);
    conf_arg_mem(twice, 0, buf2);
    pthread_t t;
    pthread_create(&t, NULL, launcher, NULL);
    long rounds = 0;
    bool monotonic = true;
    while (!atomic_load(&done)) {
        /* Everything enqueued before clFinish is done when it returns: the
         * buffer, read in order after it, holds at least that many adds. */
        int before = atomic_load(&enqueued);
        CL(clFlush(c.queue));
        CL(clFinish(c.queue));
        CL(clFlush(other));
        CL(clFinish(other));
        int head = -1;
        CL(clEnqueueReadBuffer(c.queue, buf, CL_TRUE, 0, sizeof head, &head, 0, NULL, NULL));
        monotonic = monotonic && head >= before;
        rounds++;
        struct timespec ts = {0, 200000}; /* pace the loop; no timing is checked */
        nanosleep(&ts, NULL);
    }
    pthread_join(t, NULL);
    CHECK(monotonic, "every clFinish returned with at least the kernels enqueued before it done");
    CL(clFinish(c.queue));
    for (int i = 0; i < N; i++)
        want[i] = init[i] + LAUNCHES;
    CHECK(conf_read_check(c.queue, buf, want, N, "after clFinish"), "the final clFinish saw all %d kernels done", LAUNCHES);

    /* One thread: enqueue, clFlush, then a blocking read waits for them. */
    for (int i = 0; i < 10; i++) {
        conf_ndrange1(other, twice, "twice", N, 0, NULL, NULL);
        CL(clFlush(other));
    }
    for (int i = 0; i < N; i++)
        want2[i] = init[i] * 1024;
    CHECK(conf_read_check(other, buf2, want2, N, "blocking read"), "a blocking read after clFlush saw 10 kernels done");
    fprintf(stderr, "measure finish_rounds %ld\n", rounds);
    conf_release("mmkkpq", buf, buf2, add1, twice, p, other);
    conf_close(&c);
    return conf_finish(true);
}
