/* Event wait lists across queues: a chain of order-sensitive kernels that
 * alternates between two in-order queues of one context, each kernel
 * waiting for the one before on the other queue; then a join, a kernel
 * waiting for work of both queues at once. */
#include "common.h"

enum { N = 256, STEPS = 20 };

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    cl_int err;
    cl_command_queue qb = clCreateCommandQueue(c.ctx, c.device, 0, &err);
    CLERR(err);
    cl_command_queue qs[2] = {c.queue, qb};
    CONF_STEPS(&c, p, add1, twice);
    cl_kernel sum2 = conf_kernel(p, "sum2");
    int want[N], init[N];
    cl_mem buf = conf_steps_buffer(c.ctx, add1, twice, init, want, N, 11);
    static const char ops[] = "atatta";
    cl_event prev = NULL;
    for (int s = 0; s < STEPS; s++) {
        char op = ops[s % (sizeof ops - 1)];
        cl_event ev;
        conf_ndrange1(qs[s % 2], op == 'a' ? add1 : twice, op == 'a' ? "add1" : "twice", N, prev ? 1 : 0,
                      prev ? &prev : NULL, &ev);
        CL(clFlush(qs[s % 2]));
        if (prev)
            CL(clReleaseEvent(prev));
        prev = ev;
        for (int i = 0; i < N; i++)
            want[i] = conf_step(want[i], op);
    }
    CL(clWaitForEvents(1, &prev));
    CL(clReleaseEvent(prev));
    CHECK(conf_read_check(c.queue, buf, want, N, "chain"),
          "%d kernels alternating between two queues ran in the order of their wait lists", STEPS);

    /* Join: x and y are each made on their own queue; sum2 on the first
     * queue waits for both. */
    cl_kernel ax = conf_kernel(p, "add1"), ay = conf_kernel(p, "twice");
    cl_mem x = conf_buffer(c.ctx, sizeof init, init), y = conf_buffer(c.ctx, sizeof init, init);
    conf_arg_mem(ax, 0, x);
    conf_arg_mem(ay, 0, y);
    conf_arg_mem(sum2, 0, x);
    conf_arg_mem(sum2, 1, y);
    CL(clFinish(c.queue));
    cl_event both[2];
    conf_ndrange1(qb, ax, "add1", N, 0, NULL, &both[0]);
    conf_ndrange1(qb, ay, "twice", N, 0, NULL, &both[1]);
    CL(clFlush(qb));
    cl_event done;
    conf_ndrange1(c.queue, sum2, "sum2", N, 2, both, &done);
    CL(clWaitForEvents(1, &done));
    int wantx[N];
    for (int i = 0; i < N; i++)
        wantx[i] = init[i] + 1 + init[i] * 2;
    CHECK(conf_read_check(c.queue, x, wantx, N, "join"), "a kernel waiting for two kernels of another queue saw both");
    conf_release("eeemmmkkkkkpq", both[0], both[1], done, x, y, buf, ax, ay, add1, twice, sum2, p, qb);
    conf_close(&c);
    return conf_finish(true);
}
