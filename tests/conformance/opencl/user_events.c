/* User events gating launches. The program's first launch waits for a user
 * event (behind a busy priority-0 task that is the launch fikit holds): it
 * must not run before the event is set, nor may the kernel queued after it
 * in order; once set, both run, in order. Then a user event set by another
 * thread while this one waits, and one user event gating kernels on two
 * queues. */
#include "common.h"

enum { N = 256 };

static cl_event gate2;
static void *set_later(void *arg)
{
    (void)arg;
    CL(clSetUserEventStatus(gate2, CL_COMPLETE));
    return NULL;
}

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    CONF_STEPS(&c, p, add1, twice);
    int init[N], want[N];
    cl_mem buf = conf_steps_buffer(c.ctx, add1, twice, init, NULL, N, 0);
    cl_int err;

    /* 1. The first launch, gated. */
    cl_event gate = clCreateUserEvent(c.ctx, &err);
    CLERR(err);
    cl_event k1, k2;
    conf_ndrange1(c.queue, add1, "add1", N, 1, &gate, &k1);
    conf_ndrange1(c.queue, twice, "twice", N, 0, NULL, &k2);
    CL(clFlush(c.queue));
    CHECK(conf_status(k1) > CL_RUNNING, "the gated kernel has not started before its user event");
    CHECK(conf_status(k2) > CL_RUNNING, "the kernel after it in order has not started either");
    CL(clSetUserEventStatus(gate, CL_COMPLETE));
    CL(clWaitForEvents(1, &k2));
    CHECK(conf_status(k1) == CL_COMPLETE && conf_status(k2) == CL_COMPLETE, "both ran once the user event was set");
    for (int i = 0; i < N; i++)
        want[i] = (init[i] + 1) * 2;
    CHECK(conf_read_check(c.queue, buf, want, N, "gated"), "in order: add1 then twice");
    conf_release("eee", k1, k2, gate);

    /* 2. Set by another thread while this one waits for the kernel. */
    gate2 = clCreateUserEvent(c.ctx, &err);
    CLERR(err);
    cl_event k3;
    conf_ndrange1(c.queue, add1, "add1", N, 1, &gate2, &k3);
    pthread_t t;
    pthread_create(&t, NULL, set_later, NULL);
    CL(clWaitForEvents(1, &k3));
    pthread_join(t, NULL);
    for (int i = 0; i < N; i++)
        want[i] += 1;
    CHECK(conf_read_check(c.queue, buf, want, N, "set by a thread"), "a user event set by another thread released its kernel");
    CL(clReleaseEvent(k3));
    CL(clReleaseEvent(gate2));

    /* 3. One user event gating kernels on two queues. */
    cl_command_queue qb = clCreateCommandQueue(c.ctx, c.device, 0, &err);
    CLERR(err);
    cl_mem other = conf_buffer(c.ctx, sizeof init, init);
    cl_kernel add_other = conf_kernel(p, "add1");
    conf_arg_mem(add_other, 0, other);
    cl_event gate3 = clCreateUserEvent(c.ctx, &err);
    CLERR(err);
    cl_event ka, kb;
    conf_ndrange1(c.queue, twice, "twice", N, 1, &gate3, &ka);
    conf_ndrange1(qb, add_other, "add1", N, 1, &gate3, &kb);
    CL(clFlush(c.queue));
    CL(clFlush(qb));
    CHECK(conf_status(ka) > CL_RUNNING && conf_status(kb) > CL_RUNNING, "kernels on two queues wait for one user event");
    CL(clSetUserEventStatus(gate3, CL_COMPLETE));
    cl_event both[2] = {ka, kb};
    CL(clWaitForEvents(2, both));
    int want_other[N];
    for (int i = 0; i < N; i++) {
        want[i] *= 2;
        want_other[i] = init[i] + 1;
    }
    CHECK(conf_read_check(c.queue, buf, want, N, "first queue") && conf_read_check(qb, other, want_other, N, "second queue"),
          "both ran once it was set");
    conf_release("eeemkqmkkp", ka, kb, gate3, other, add_other, qb, buf, add1, twice, p);
    conf_close(&c);
    return conf_finish(true);
}
