/* Queues with and without CL_QUEUE_PROFILING_ENABLE. fikit turns profiling
 * on in every queue it times; the program must still see exactly what it
 * asked for: the properties it gave, profiling info where it enabled it
 * (in order: queued <= submit <= start <= end, on the first launch, the
 * one held behind a busy task), CL_PROFILING_INFO_NOT_AVAILABLE where it
 * did not, and the same answers for a command not yet complete and for
 * user events. Every error code is printed, so the runs must agree on
 * them. */
#include "common.h"

enum { N = 256 };

static const cl_profiling_info params[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                           CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};

/* Prints the answer to each query (not the times, which differ per run). */
static void show(const char *what, cl_event ev, cl_ulong t[4])
{
    printf("%s:", what);
    for (int i = 0; i < 4; i++) {
        t[i] = 0;
        size_t size = 0;
        cl_int e = clGetEventProfilingInfo(ev, params[i], sizeof t[i], &t[i], &size);
        printf(" %d", e);
        if (e == CL_SUCCESS && size != sizeof(cl_ulong))
            printf("(size %zu)", size);
    }
    printf("\n");
}

static void show_props(const char *what, cl_command_queue q)
{
    cl_command_queue_properties props = 0;
    CL(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof props, &props, NULL));
    size_t size = 0;
    cl_queue_properties arr[16] = {0};
    cl_int e = clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, sizeof arr, arr, &size);
    printf("%s: CL_QUEUE_PROPERTIES %#lx; CL_QUEUE_PROPERTIES_ARRAY %d, %zu bytes:", what, (unsigned long)props, e, size);
    for (size_t i = 0; e == CL_SUCCESS && i < size / sizeof *arr && i < 16; i++)
        printf(" %#lx", (unsigned long)arr[i]);
    printf("\n");
}

static bool ordered(const cl_ulong t[4]) { return t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3]; }

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    cl_int err;
    cl_command_queue qp = clCreateCommandQueue(c.ctx, c.device, CL_QUEUE_PROFILING_ENABLE, &err);
    CLERR(err);
    cl_queue_properties with[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_queue_properties without[] = {CL_QUEUE_PROPERTIES, 0, 0};
    cl_command_queue qw = clCreateCommandQueueWithProperties(c.ctx, c.device, with, &err);
    CLERR(err);
    cl_command_queue qn = clCreateCommandQueueWithProperties(c.ctx, c.device, without, &err);
    CLERR(err);
    cl_command_queue qnull = clCreateCommandQueueWithProperties(c.ctx, c.device, NULL, &err);
    CLERR(err);
    cl_program p = conf_build(&c, CONF_SRC_STEPS);
    cl_kernel add1 = conf_kernel(p, "add1");
    int init[N], want[N];
    for (int i = 0; i < N; i++)
        init[i] = want[i] = i;
    cl_mem buf = conf_buffer(c.ctx, sizeof init, init);
    conf_arg_mem(add1, 0, buf);
    cl_ulong t[4];

    /* The first launch: on the profiling queue. */
    cl_event ev;
    conf_ndrange1(qp, add1, "add1", N, 0, NULL, &ev);
    CL(clWaitForEvents(1, &ev));
    show("profiling queue, first launch", ev, t);
    CHECK(ordered(t), "first launch: queued <= submit <= start <= end");
    for (int j = 0; j < N; j++)
        want[j] += 1;
    size_t size = 0;
    CL(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, 0, NULL, &size));
    CHECK(size == sizeof(cl_ulong), "the size alone can be asked for");
    CL(clReleaseEvent(ev));

    /* Every queue, a launch each. */
    struct {
        const char *name;
        cl_command_queue q;
        bool profiling;
    } qs[] = {{"clCreateCommandQueue(0)", c.queue, false},
              {"clCreateCommandQueue(PROFILING)", qp, true},
              {"WithProperties {PROPERTIES, PROFILING}", qw, true},
              {"WithProperties {PROPERTIES, 0}", qn, false},
              {"WithProperties NULL", qnull, false}};
    for (size_t i = 0; i < sizeof qs / sizeof *qs; i++) {
        show_props(qs[i].name, qs[i].q);
        conf_ndrange1(qs[i].q, add1, "add1", N, 0, NULL, &ev);
        CL(clWaitForEvents(1, &ev));
        show(qs[i].name, ev, t);
        if (qs[i].profiling)
            CHECK(ordered(t), "%s: queued <= submit <= start <= end", qs[i].name);
        else
            CHECK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t[0], &t[0], NULL) ==
                      CL_PROFILING_INFO_NOT_AVAILABLE,
                  "%s: CL_PROFILING_INFO_NOT_AVAILABLE", qs[i].name);
        CL(clReleaseEvent(ev));
        CL(clFinish(qs[i].q));
        for (int j = 0; j < N; j++)
            want[j] += 1;
    }

    /* Not complete yet: gated by a user event. */
    cl_event gate = clCreateUserEvent(c.ctx, &err);
    CLERR(err);
    conf_ndrange1(qp, add1, "add1", N, 1, &gate, &ev);
    CL(clFlush(qp));
    /* CL_PROFILING_INFO_NOT_AVAILABLE on PoCL; NVIDIA's driver answers: printed. */
    printf("end time of a command not yet complete: %d\n",
           clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t[3], &t[3], NULL));
    show("user event", gate, t);
    CL(clSetUserEventStatus(gate, CL_COMPLETE));
    CL(clWaitForEvents(1, &ev));
    show("profiling queue, after its user event", ev, t);
    CHECK(ordered(t), "gated launch: queued <= submit <= start <= end");
    for (int j = 0; j < N; j++)
        want[j] += 1;
    CL(clReleaseEvent(ev));
    CL(clReleaseEvent(gate));

    /* A marker on each kind of queue. */
    cl_event m;
    CL(clEnqueueMarkerWithWaitList(qp, 0, NULL, &m));
    CL(clWaitForEvents(1, &m));
    show("marker on the profiling queue", m, t);
    CL(clReleaseEvent(m));
    CL(clEnqueueMarkerWithWaitList(qn, 0, NULL, &m));
    CL(clWaitForEvents(1, &m));
    show("marker on a queue without profiling", m, t);
    CL(clReleaseEvent(m));

    CHECK(conf_read_check(c.queue, buf, want, N, "profiling"), "every kernel ran once");
    conf_release("mkpqqqq", buf, add1, p, qp, qw, qn, qnull);
    conf_close(&c);
    return conf_finish(true);
}
