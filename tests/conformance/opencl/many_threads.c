/* Many threads on many queues: 16 threads, each with its own in-order
 * queue and buffer, each launching 16 order-sensitive kernels at once with
 * the others (behind a busy task, each thread's launches are held in their
 * own thread). */
#include "common.h"

#include <stdint.h>

enum { THREADS = 16, LAUNCHES = 16, N = 256 };

static struct conf c;
static cl_program prog;
static bool good[THREADS];

static void *worker(void *arg)
{
    int t = (int)(intptr_t)arg;
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(c.ctx, c.device, 0, &err);
    CLERR(err);
    cl_kernel add1 = conf_kernel(prog, "add1"), twice = conf_kernel(prog, "twice");
    int init[N], want[N];
    for (int i = 0; i < N; i++)
        init[i] = want[i] = (i + t) % 17;
    cl_mem buf = conf_buffer(c.ctx, sizeof init, init);
    conf_arg_mem(add1, 0, buf);
    conf_arg_mem(twice, 0, buf);
    for (int l = 0; l < LAUNCHES; l++) {
        /* each thread its own order of the two steps */
        bool add = ((t >> (l % 4)) & 1) == 0 || l % 3 == 0;
        conf_ndrange1(q, add ? add1 : twice, add ? "add1" : "twice", N, 0, NULL, NULL);
        for (int i = 0; i < N; i++)
            want[i] = add ? want[i] + 1 : want[i] * 2;
        if (l % 5 == 4)
            CL(clFlush(q));
    }
    CL(clFinish(q));
    good[t] = conf_read_check(q, buf, want, N, "thread");
    conf_release("mkkq", buf, add1, twice, q);
    return NULL;
}

int main(int argc, char **argv)
{
    conf_open(argc, argv, &c);
    prog = conf_build(&c, CONF_SRC_STEPS);
    pthread_t th[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&th[t], NULL, worker, (void *)(intptr_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(th[t], NULL);
    bool ok = true;
    for (int t = 0; t < THREADS; t++)
        ok = ok && good[t];
    CHECK(ok, "%d threads on %d queues, %d kernels each, every result in its thread's order", THREADS, THREADS, LAUNCHES);
    CL(clReleaseProgram(prog));
    conf_close(&c);
    return conf_finish(true);
}
