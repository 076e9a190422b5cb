/* clEnqueueTask: a single work-item kernel, with and without events and
 * wait lists. Each task adds i + 1 to element i of 16, in order with an
 * NDRange kernel that doubles them. */
#include "common.h"

static const char *src = "__kernel void serial(__global int *x) {\n"
                         "    for (int i = 0; i < 16; i++) x[i] += i + 1; }\n" CONF_SRC_STEPS;

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    cl_program p = conf_build(&c, src);
    cl_kernel serial = conf_kernel(p, "serial"), twice = conf_kernel(p, "twice");
    int want[16] = {0};
    cl_mem buf = conf_buffer(c.ctx, sizeof want, want);
    conf_arg_mem(serial, 0, buf);
    conf_arg_mem(twice, 0, buf);
    cl_event prev = NULL;
    for (int r = 0; r < 10; r++) {
        cl_event ev;
        CL(clEnqueueTask(c.queue, serial, prev ? 1 : 0, prev ? &prev : NULL, &ev));
        conf_count("serial", 1);
        if (prev)
            CL(clReleaseEvent(prev));
        prev = ev;
        for (int i = 0; i < 16; i++)
            want[i] += i + 1;
        if (r % 3 == 2) {
            conf_ndrange1(c.queue, twice, "twice", 16, 0, NULL, NULL);
            for (int i = 0; i < 16; i++)
                want[i] *= 2;
        }
    }
    CL(clWaitForEvents(1, &prev));
    cl_int st;
    CL(clGetEventInfo(prev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof st, &st, NULL));
    CHECK(st == CL_COMPLETE, "the last task's event is complete after clWaitForEvents");
    cl_command_type type;
    CL(clGetEventInfo(prev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    CHECK(type == CL_COMMAND_TASK || type == CL_COMMAND_NDRANGE_KERNEL,
          "a task's event is of a kernel command");
    CL(clReleaseEvent(prev));
    /* Without an event at all. */
    CL(clEnqueueTask(c.queue, serial, 0, NULL, NULL));
    conf_count("serial", 1);
    for (int i = 0; i < 16; i++)
        want[i] += i + 1;
    CHECK(conf_read_check(c.queue, buf, want, 16, "tasks"), "11 tasks and 3 NDRanges ran in order");
    conf_release("mkkp", buf, serial, twice, p);
    conf_close(&c);
    return conf_finish(true);
}
