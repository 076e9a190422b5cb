/* Two contexts on one device, each with its own program (kernels of the
 * same names), buffers and queue, launches interleaved between them; and an
 * enqueues that must fail: they fail the same way under fikit and are no
 * launches. */
#include "common.h"

enum { N = 256, ROUNDS = 12 };

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    cl_int err;
    cl_context ctx2 = clCreateContext(NULL, 1, &c.device, NULL, NULL, &err);
    CLERR(err);
    cl_command_queue q2 = clCreateCommandQueue(ctx2, c.device, 0, &err);
    CLERR(err);
    cl_program p1 = conf_build(&c, CONF_SRC_STEPS), p2 = conf_build_for(ctx2, 1, &c.device, CONF_SRC_STEPS);
    cl_kernel a1 = conf_kernel(p1, "add1"), t1 = conf_kernel(p1, "twice");
    cl_kernel a2 = conf_kernel(p2, "add1"), t2 = conf_kernel(p2, "twice");
    int init[N], w1[N], w2[N];
    for (int i = 0; i < N; i++)
        init[i] = w1[i] = w2[i] = i % 9;
    cl_mem b1 = conf_buffer(c.ctx, sizeof init, init), b2 = conf_buffer(ctx2, sizeof init, init);
    conf_arg_mem(a1, 0, b1);
    conf_arg_mem(t1, 0, b1);
    conf_arg_mem(a2, 0, b2);
    conf_arg_mem(t2, 0, b2);
    for (int r = 0; r < ROUNDS; r++) {
        /* context 1: add1 then twice; context 2: twice then add1 */
        conf_ndrange1(c.queue, a1, "add1", N, 0, NULL, NULL);
        conf_ndrange1(q2, t2, "twice", N, 0, NULL, NULL);
        conf_ndrange1(c.queue, t1, "twice", N, 0, NULL, NULL);
        conf_ndrange1(q2, a2, "add1", N, 0, NULL, NULL);
        for (int i = 0; i < N; i++) {
            w1[i] = (w1[i] + 1) * 2;
            w2[i] = (w2[i] * 2 + 1);
        }
        if (r % 4 == 3) { /* keep the numbers small: reset both on the host's side */
            CL(clFinish(c.queue));
            CL(clFinish(q2));
            CHECK(conf_read_check(c.queue, b1, w1, N, "context 1"), "context 1 after round %d", r);
            CHECK(conf_read_check(q2, b2, w2, N, "context 2"), "context 2 after round %d", r);
            for (int i = 0; i < N; i++)
                w1[i] = w2[i] = init[i];
            CL(clEnqueueWriteBuffer(c.queue, b1, CL_TRUE, 0, sizeof init, init, 0, NULL, NULL));
            CL(clEnqueueWriteBuffer(q2, b2, CL_TRUE, 0, sizeof init, init, 0, NULL, NULL));
        }
    }
    /* Enqueues that fail: no launch, and the same error under fikit. */
    cl_event e1;
    conf_ndrange1(c.queue, a1, "add1", N, 0, NULL, &e1);
    CL(clWaitForEvents(1, &e1));
    for (int i = 0; i < N; i++)
        w1[i] += 1;
    size_t n = N, too_big[1] = {0};
    CL(clGetDeviceInfo(c.device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof too_big[0], &too_big[0], NULL));
    too_big[0] *= 2;
    size_t big_gws = too_big[0] * 2;
    err = clEnqueueNDRangeKernel(q2, a2, 0, NULL, &n, NULL, 0, NULL, NULL);
    CHECK(err == CL_INVALID_WORK_DIMENSION, "work_dim 0 is refused with CL_INVALID_WORK_DIMENSION (%d)", err);
    err = clEnqueueNDRangeKernel(q2, a2, 1, NULL, &big_gws, too_big, 0, NULL, NULL);
    CHECK(err == CL_INVALID_WORK_GROUP_SIZE || err == CL_INVALID_WORK_ITEM_SIZE,
          "a local size over the device's maximum is refused (%d)", err);
    /* An event of context 1 in a wait list of context 2: the specification
     * says CL_INVALID_CONTEXT; not every runtime checks (PoCL 3.1 runs it). */
    err = clEnqueueNDRangeKernel(q2, a2, 1, NULL, &n, NULL, 1, &e1, NULL);
    printf("another context's event in a wait list: %d\n", err);
    if (err == CL_SUCCESS) {
        conf_count("add1", 1);
        for (int i = 0; i < N; i++)
            w2[i] += 1;
    }
    CL(clFinish(q2));
    CHECK(conf_read_check(c.queue, b1, w1, N, "context 1") && conf_read_check(q2, b2, w2, N, "context 2"),
          "the refused launches did not run");
    conf_release("emmkkkkppqc", e1, b1, b2, a1, t1, a2, t2, p1, p2, q2, ctx2);
    conf_close(&c);
    return conf_finish(true);
}
