/* Kernels released, programs rebuilt and kernels re-created while launches
 * are held. The main thread launches one kernel ("steady"), releasing and
 * re-creating it every few launches; another thread builds a new program
 * each round, creates its one kernel (gen_a, gen_b or gen_c in turn: the
 * handle of a released kernel is often reused for the next), launches it
 * and releases kernel and program at once, while the launch may still be
 * pending. Each kernel adds its own amount, so the results show which ran;
 * the suite checks that fikit named every launch by the kernel that ran. */
#include "common.h"

enum { N = 64, ROUNDS = 24 };

static struct conf c;
static cl_mem gen_buf;

static void *rebuilder(void *arg)
{
    (void)arg;
    static const char *names[] = {"gen_a", "gen_b", "gen_c"};
    static const int adds[] = {1, 10, 100};
    cl_int err;
    cl_command_queue q = clCreateCommandQueue(c.ctx, c.device, 0, &err);
    CLERR(err);
    for (int r = 0; r < ROUNDS; r++) {
        char src[256];
        snprintf(src, sizeof src, "__kernel void %s(__global int *x) { x[get_global_id(0)] += %d; }\n",
                 names[r % 3], adds[r % 3]);
        cl_program p = conf_build(&c, src);
        cl_kernel k = conf_kernel(p, names[r % 3]);
        conf_arg_mem(k, 0, gen_buf);
        conf_ndrange1(q, k, names[r % 3], N, 0, NULL, NULL);
        CL(clReleaseKernel(k));
        CL(clReleaseProgram(p));
    }
    CL(clFinish(q));
    CL(clReleaseCommandQueue(q));
    return NULL;
}

int main(int argc, char **argv)
{
    conf_open(argc, argv, &c);
    static const char *steady_src = "__kernel void steady(__global int *x) { x[get_global_id(0)] += 7; }\n";
    cl_program p = conf_build(&c, steady_src);
    int zero[N] = {0}, want[N];
    cl_mem buf = conf_buffer(c.ctx, sizeof zero, zero);
    gen_buf = conf_buffer(c.ctx, sizeof zero, zero);
    cl_kernel k = conf_kernel(p, "steady");
    conf_arg_mem(k, 0, buf);
    pthread_t t;
    pthread_create(&t, NULL, rebuilder, NULL);
    for (int r = 0; r < ROUNDS; r++) {
        conf_ndrange1(c.queue, k, "steady", N, 0, NULL, NULL);
        if (r % 4 == 3) { /* released with its launch maybe still pending */
            CL(clReleaseKernel(k));
            k = conf_kernel(p, "steady");
            conf_arg_mem(k, 0, buf);
        }
    }
    pthread_join(t, NULL);
    CL(clFinish(c.queue));
    for (int i = 0; i < N; i++)
        want[i] = 7 * ROUNDS;
    CHECK(conf_read_check(c.queue, buf, want, N, "steady"), "%d launches of a kernel re-created every 4", ROUNDS);
    for (int i = 0; i < N; i++)
        want[i] = (ROUNDS / 3) * (1 + 10 + 100);
    CHECK(conf_read_check(c.queue, gen_buf, want, N, "rebuilt"),
          "%d launches of kernels of programs rebuilt each round, each the kernel it was", ROUNDS);
    conf_release("kmmp", k, buf, gen_buf, p);
    conf_close(&c);
    return conf_finish(true);
}
