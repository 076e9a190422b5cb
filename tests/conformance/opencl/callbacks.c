/* clSetEventCallback: callbacks for CL_SUBMITTED, CL_RUNNING and
 * CL_COMPLETE each run exactly once, the completion one with CL_COMPLETE;
 * on the program's first launch (the one fikit holds behind a busy task),
 * on a launch gated by a user event (none runs for CL_COMPLETE before the
 * event is set), and a callback that sets a user event that gates the next
 * kernel. */
#include "common.h"

#include <stdint.h>
#include <time.h>

enum { N = 128 };

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int calls[3];     /* per registered status: CL_COMPLETE, CL_RUNNING, CL_SUBMITTED */
static int complete_bad; /* completion callbacks that got another status */

static void CL_CALLBACK on_status(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    int which = (int)(intptr_t)user;
    pthread_mutex_lock(&lock);
    calls[which]++;
    if (which == CL_COMPLETE && status != CL_COMPLETE)
        complete_bad++;
    pthread_cond_broadcast(&cond);
    pthread_mutex_unlock(&lock);
}

static void CL_CALLBACK open_gate(cl_event ev, cl_int status, void *user)
{
    (void)ev;
    (void)status;
    clSetUserEventStatus((cl_event)user, CL_COMPLETE);
}

/* Waits until every registered callback has run (callbacks may run on a
 * runtime thread after clFinish returned); 60 s bounds a lost one. */
static bool wait_calls(int want)
{
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 60;
    pthread_mutex_lock(&lock);
    while ((calls[0] < want || calls[1] < want || calls[2] < want) &&
           pthread_cond_timedwait(&cond, &lock, &dl) == 0)
        ;
    bool ok = calls[0] == want && calls[1] == want && calls[2] == want && complete_bad == 0;
    if (!ok)
        fprintf(stderr, "callbacks: complete %d, running %d, submitted %d (want %d each), bad %d\n",
                calls[0], calls[1], calls[2], want, complete_bad);
    pthread_mutex_unlock(&lock);
    return ok;
}

static void watch(cl_event ev)
{
    CL(clSetEventCallback(ev, CL_SUBMITTED, on_status, (void *)(intptr_t)CL_SUBMITTED));
    CL(clSetEventCallback(ev, CL_RUNNING, on_status, (void *)(intptr_t)CL_RUNNING));
    CL(clSetEventCallback(ev, CL_COMPLETE, on_status, (void *)(intptr_t)CL_COMPLETE));
}

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    CONF_STEPS(&c, p, add1, twice);
    int init[N], want[N];
    cl_mem buf = conf_steps_buffer(c.ctx, add1, twice, init, want, N, 0);
    cl_int err;

    /* 1. The first launch. */
    cl_event ev;
    conf_ndrange1(c.queue, add1, "add1", N, 0, NULL, &ev);
    watch(ev);
    CL(clFinish(c.queue));
    CHECK(wait_calls(1), "first launch: each callback ran once, the completion one with CL_COMPLETE");
    CL(clReleaseEvent(ev));

    /* 2. Gated by a user event. */
    cl_event gate = clCreateUserEvent(c.ctx, &err);
    CLERR(err);
    conf_ndrange1(c.queue, twice, "twice", N, 1, &gate, &ev);
    watch(ev);
    CL(clFlush(c.queue));
    pthread_mutex_lock(&lock);
    int early = calls[0];
    pthread_mutex_unlock(&lock);
    CHECK(early == 1, "no completion callback before the user event is set");
    CL(clSetUserEventStatus(gate, CL_COMPLETE));
    CL(clFinish(c.queue));
    CHECK(wait_calls(2), "gated launch: each callback ran once after the event was set");
    CL(clReleaseEvent(ev));
    CL(clReleaseEvent(gate));

    /* 3. A completion callback opens the gate of the next kernel. */
    cl_event gate2 = clCreateUserEvent(c.ctx, &err), first, second;
    CLERR(err);
    conf_ndrange1(c.queue, add1, "add1", N, 0, NULL, &first);
    CL(clSetEventCallback(first, CL_COMPLETE, open_gate, gate2));
    cl_command_queue qb = clCreateCommandQueue(c.ctx, c.device, 0, &err);
    CLERR(err);
    conf_ndrange1(qb, twice, "twice", N, 1, &gate2, &second);
    CL(clFlush(c.queue));
    CL(clWaitForEvents(1, &second));
    for (int i = 0; i < N; i++)
        want[i] = ((want[i] + 1) * 2 + 1) * 2;
    CHECK(conf_read_check(c.queue, buf, want, N, "callbacks"),
          "a callback's clSetUserEventStatus released the next kernel, and every result is in order");
    conf_release("eeeqmkkp", first, second, gate2, qb, buf, add1, twice, p);
    conf_close(&c);
    return conf_finish(true);
}
