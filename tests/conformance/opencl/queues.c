/* In-order and out-of-order queues. In order: kernels with no events run
 * in the order enqueued. Out of order: the order the program needs is given
 * only by events, and kernels with no dependency on each other may run in
 * any order; the results show both. */
#include "common.h"

enum { N = 512, STEPS = 24 };

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    CONF_STEPS(&c, p, add1, twice);
    static const char ops[] = "aatatttaatatatta";
    int want[N], init[N];

    /* In order: a fixed, order-sensitive sequence without events. */
    cl_mem buf = conf_steps_buffer(c.ctx, add1, twice, init, want, N, 7);
    for (int s = 0; s < STEPS; s++) {
        char op = ops[s % (sizeof ops - 1)];
        conf_ndrange1(c.queue, op == 'a' ? add1 : twice, op == 'a' ? "add1" : "twice", N, 0, NULL, NULL);
        for (int i = 0; i < N; i++)
            want[i] = conf_step(want[i], op);
    }
    CL(clFinish(c.queue));
    CHECK(conf_read_check(c.queue, buf, want, N, "in order"), "in-order queue: %d kernels ran in order", STEPS);

    /* Out of order: the same sequence ordered by a chain of events, beside
     * independent kernels on a second buffer. */
    cl_int err;
    cl_command_queue qo = clCreateCommandQueue(c.ctx, c.device, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, &err);
    if (err == CL_INVALID_VALUE || err == CL_INVALID_QUEUE_PROPERTIES) {
        printf("out-of-order queues: not supported by the device\n");
    } else {
        CLERR(err);
        cl_command_queue_properties props = 0;
        CL(clGetCommandQueueInfo(qo, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
        CHECK(props == CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, "out-of-order queue reports properties %#lx",
              (unsigned long)props);
        cl_kernel a2 = conf_kernel(p, "add1"), other = conf_kernel(p, "add1");
        cl_mem buf2 = conf_buffer(c.ctx, sizeof init, init), buf3 = conf_buffer(c.ctx, sizeof init, init);
        conf_arg_mem(a2, 0, buf2);
        conf_arg_mem(twice, 0, buf2);
        conf_arg_mem(other, 0, buf3);
        int want2[N], want3[N];
        for (int i = 0; i < N; i++)
            want2[i] = want3[i] = init[i];
        cl_event prev = NULL;
        for (int s = 0; s < STEPS; s++) {
            char op = ops[s % (sizeof ops - 1)];
            cl_event ev;
            conf_ndrange1(qo, op == 'a' ? a2 : twice, op == 'a' ? "add1" : "twice", N, prev ? 1 : 0,
                          prev ? &prev : NULL, &ev);
            if (prev)
                CL(clReleaseEvent(prev));
            prev = ev;
            for (int i = 0; i < N; i++)
                want2[i] = conf_step(want2[i], op);
            if (s % 4 == 0) { /* independent work, no event: any order */
                conf_ndrange1(qo, other, "add1", N, 0, NULL, NULL);
                for (int i = 0; i < N; i++)
                    want3[i] += 1;
            }
        }
        CL(clWaitForEvents(1, &prev));
        CL(clReleaseEvent(prev));
        CL(clFinish(qo));
        CHECK(conf_read_check(qo, buf2, want2, N, "out of order chain"),
              "out-of-order queue: %d kernels ordered by events ran in that order", STEPS);
        CHECK(conf_read_check(qo, buf3, want3, N, "out of order independent"),
              "out-of-order queue: %d independent kernels all ran", (STEPS + 3) / 4);
        conf_release("mmkkq", buf2, buf3, a2, other, qo);
    }
    conf_release("mkkp", buf, add1, twice, p);
    conf_close(&c);
    return conf_finish(true);
}
