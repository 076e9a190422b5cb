/* 10 000 cycles of create a kernel, set its argument, launch it, release
 * it (its launch still pending): the kernel handles come and go as in a
 * program that creates kernels on the fly. In the first 1 000 the program
 * itself is rebuilt every 250. Every launch must run and be named right,
 * and memory must stay flat over the last 9 000: the growth of the heap in
 * use (glibc's main arena, where the launching thread allocates) and of the
 * resident size is printed to stderr for the suite to compare with the run
 * without fikit; this program fails by itself only past a bound no runtime
 * should need (256 bytes a cycle). */
#include "common.h"

#include <dirent.h>
#include <malloc.h>
#include <unistd.h>

enum { N = 64, CYCLES = 10000, WARM = 1000, REBUILD = 250 };

/* Open descriptors of this process. */
static long fds(void)
{
    DIR *d = opendir("/proc/self/fd");
    long n = 0;
    while (d && readdir(d))
        n++;
    if (d)
        closedir(d);
    return n;
}

static const char *src = "__kernel void inc_a(__global int *x) { x[get_global_id(0)] += 1; }\n"
                         "__kernel void inc_b(__global int *x) { x[get_global_id(0)] += 3; }\n";

static long rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static long heap_bytes(void)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 33))
    struct mallinfo2 m = mallinfo2();
    return (long)m.uordblks + (long)m.hblkhd;
#else
    return -1;
#endif
}

/* Everything launched done, and a moment for what works on it afterwards
 * (fikit's learner reads each timed launch's event once it completed, and
 * holds the event until then: thousands at once under --measure), so that
 * the heap is compared at rest, not by how far behind that work was. */
static void settle(struct conf *c)
{
    CL(clFinish(c->queue));
    usleep(300 * 1000);
}

int main(int argc, char **argv)
{
    struct conf c;
    conf_open(argc, argv, &c);
    cl_program p = conf_build(&c, src);
    int zero[N] = {0}, want[N];
    cl_mem buf = conf_buffer(c.ctx, sizeof zero, zero);
    /* --cycles N: more than the suite's 10 000 (integration.kernels_flat). */
    long cycles_all = CYCLES;
    for (int i = 1; i + 1 < argc; i++)
        if (!strcmp(argv[i], "--cycles"))
            cycles_all = atol(argv[i + 1]);
    if (cycles_all <= WARM)
        cycles_all = CYCLES;
    long total = 0, heap0 = 0, rss0 = 0, fds0 = 0;
    for (long i = 0; i < cycles_all; i++) {
        if (i % REBUILD == 0 && i && i < WARM) {
            CL(clFinish(c.queue));
            CL(clReleaseProgram(p));
            p = conf_build(&c, src);
        }
        const char *name = i % 2 ? "inc_b" : "inc_a";
        cl_kernel k = conf_kernel(p, name);
        conf_arg_mem(k, 0, buf);
        conf_ndrange1(c.queue, k, name, N, 0, NULL, NULL);
        CL(clReleaseKernel(k));
        total += i % 2 ? 3 : 1;
        if (i % 500 == 499)
            CL(clFinish(c.queue));
        if (i + 1 == WARM) {
            settle(&c);
            heap0 = heap_bytes();
            rss0 = rss_kb();
            fds0 = fds();
        }
    }
    settle(&c);
    long heap1 = heap_bytes(), rss1 = rss_kb(), fds1 = fds();
    for (int i = 0; i < N; i++)
        want[i] = (int)total;
    CHECK(conf_read_check(c.queue, buf, want, N, "cycles"), "%ld kernels created, launched and released", cycles_all);
    long cycles = cycles_all - WARM;
    fprintf(stderr, "measure heap_growth %ld\nmeasure rss_growth_kb %ld\nmeasure cycles %ld\nmeasure fd_growth %ld\n",
            heap1 - heap0, rss1 - rss0, cycles, fds1 - fds0);
    bool flat = true;
    if (heap0 >= 0 && heap1 - heap0 > 256 * cycles) {
        fprintf(stderr, "the heap grew by %ld bytes over %ld cycles, more than 256 a cycle\n", heap1 - heap0, cycles);
        flat = false;
    }
    if (rss1 - rss0 > 256 * cycles / 1024) {
        fprintf(stderr, "the resident size grew by %ld KB over %ld cycles, more than 256 bytes a cycle\n",
                rss1 - rss0, cycles);
        flat = false;
    }
    CL(clReleaseMemObject(buf));
    CL(clReleaseProgram(p));
    conf_close(&c);
    return conf_finish(flat);
}
