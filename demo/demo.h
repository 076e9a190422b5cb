/* Shared by the demo programs, the OpenCL ones (C) and their CUDA twins
 * (C++) alike: the host side. The work's exact check (rounds of a 32-bit
 * linear congruential map are again such a map, x -> A x + C), the clock,
 * the options, the arrivals of requests and the lines each program prints.
 * demo_cl.h and cuda/demo_cuda.h add the device side. */
#ifndef FIKIT_DEMO_H
#define FIKIT_DEMO_H

#include <getopt.h>
#include <math.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define LCG_A 1664525u
#define LCG_C 1013904223u

/* DEMO_LAYERS kernels, layer0..layer15, doing the same work: a service
 * runs one per step of a request, as a network runs one per layer, so each
 * step is a distinct kernel to fikit. */
#define DEMO_LAYERS 16

/* (A, C) of n rounds. */
static inline void demo_affine(uint64_t n, uint32_t *A, uint32_t *C)
{
    uint32_t ra = 1, rc = 0, ba = LCG_A, bc = LCG_C;
    while (n) {
        if (n & 1) { /* r = b o r */
            rc = ba * rc + bc;
            ra = ba * ra;
        }
        bc = ba * bc + bc; /* b = b o b */
        ba = ba * ba;
        n >>= 1;
    }
    *A = ra;
    *C = rc;
}

static inline double demo_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* The q-quantile of sorted values (nearest rank). */
static inline double demo_quantile(const double *sorted, size_t n, double q)
{
    if (n == 0)
        return 0;
    size_t i = (size_t)(q * (double)(n - 1) + 0.5);
    return sorted[i < n ? i : n - 1];
}

/* ------------------------------------------------------------ the options */

/* What the service (requests ... seed) and the batch job (seconds ...
 * progress) are told; each takes its own options of one table. */
struct demo_opts {
    long requests, kernels, gap_us, work, size;
    long prep_us; /* the service's CPU work before each request's first kernel */
    double rate;
    unsigned seed;
    double seconds;
    long count;
    int json, progress;
    double on_ms, off_ms; /* --bursts: requests for on_ms, then none for off_ms; 0: always */
};

/* The service's options and the batch job's, and the letters of each. */
#define DEMO_SERVICE_OPTS "n:r:k:g:w:s:b:p:h"
#define DEMO_SERVICE_LONG "nrkgwsSjh"
/* The OpenCL service also takes --bursts and --prep-us. */
#define DEMO_SERVICE_LONG_BURSTS "nrkgwsSjbph"
#define DEMO_BATCH_OPTS "t:c:w:s:h"
#define DEMO_BATCH_LONG "tcwsjPh"

static inline void demo_usage(FILE *f, const char *prog, const char *about, const char *letters,
                              const struct demo_opts *d)
{
    /* Each option's lines, with its default where it has one. */
    static const struct {
        char letter;
        const char *text;
    } help[] = {
        {'n', "  -n, --requests N   requests to serve (default %ld)\n"},
        {'r', "  -r, --rate R       mean arrivals per second; 0 = back to back (default %g)\n"},
        {'k', "  -k, --kernels K    kernels per request, 1 to 16: layer0, layer1, ...\n"
              "                     (default %ld)\n"},
        {'g', "  -g, --gap-us G     host work after each kernel, microseconds (default %ld)\n"},
        {'p', "  -p, --prep-us P    CPU work of each request before its first kernel (its\n"
              "                     input's preparation), microseconds of the thread's CPU\n"
              "                     time (default %ld)\n"},
        {'t', "  -t, --seconds T    run for T seconds (default %g)\n"},
        {'c', "  -c, --count N      run exactly N kernels instead\n"},
        {'w', "  -w, --work W       rounds per element per kernel (default %ld)\n"},
        {'s', "  -s, --size S       elements (default %ld)\n"},
        {'S', "      --seed S       random seed (default %u)\n"},
        {'b', "  -b, --bursts ON:OFF  requests only for ON ms, then none for OFF ms, in\n"
              "                     turn (a bursty service; default: requests all along)\n"},
        {'j', "      --json         print the result as JSON\n"},
        {'J', "      --json         print the result as JSON, with t0 and t1: the measured\n"
              "                     window, CLOCK_MONOTONIC seconds, and service_ms: the mean\n"
              "                     time a request took from when it could start (its arrival,\n"
              "                     or the end of the one before) to its result, and every\n"
              "                     request's latency (latencies_ms)\n"},
        {'P', "      --progress     with --json, also when each kernel was done: \"progress\"\n"
              "                     holds [CLOCK_MONOTONIC seconds, kernels done] pairs, so\n"
              "                     a harness can take the throughput over another\n"
              "                     program's window; and writes \"ready\" to stderr once\n"
              "                     its kernel has run once, so a harness can start the other\n"
              "                     program then\n"},
        {'h', "  -h, --help         show this help\n"},
    };
    fprintf(f, "Usage: %s [OPTIONS]\n\n%s\n\nOptions:\n", prog, about);
    bool service = strchr(letters, 'S') != NULL; /* its --json says more */
    for (size_t i = 0; i < sizeof help / sizeof help[0]; i++) {
        char l = help[i].letter;
        if (l == 'J' ? !service : l == 'j' ? service : !strchr(letters, l))
            continue;
        switch (help[i].letter) {
        case 'n': fprintf(f, help[i].text, d->requests); break;
        case 'r': fprintf(f, help[i].text, d->rate); break;
        case 'k': fprintf(f, help[i].text, d->kernels); break;
        case 'g': fprintf(f, help[i].text, d->gap_us); break;
        case 'p': fprintf(f, help[i].text, d->prep_us); break;
        case 't': fprintf(f, help[i].text, d->seconds); break;
        case 'w': fprintf(f, help[i].text, d->work); break;
        case 's': fprintf(f, help[i].text, d->size); break;
        case 'S': fprintf(f, help[i].text, d->seed); break;
        default: fputs(help[i].text, f); break;
        }
    }
}

/* Parses a program's options (shortopts for getopt, letters: every option
 * it takes, DEMO_SERVICE_* or DEMO_BATCH_*) over the defaults in o;
 * --help prints prog's usage, about first. Returns -1 to run, else the exit
 * status: 0 after --help, 2 after a usage error. */
static inline int demo_options(int argc, char **argv, struct demo_opts *o, const char *prog,
                               const char *about, const char *shortopts, const char *letters)
{
    static const struct option opts[] = {
        {"requests", required_argument, 0, 'n'}, {"rate", required_argument, 0, 'r'},
        {"kernels", required_argument, 0, 'k'},  {"gap-us", required_argument, 0, 'g'},
        {"work", required_argument, 0, 'w'},     {"size", required_argument, 0, 's'},
        {"seed", required_argument, 0, 'S'},     {"seconds", required_argument, 0, 't'},
        {"count", required_argument, 0, 'c'},    {"json", no_argument, 0, 'j'},
        {"progress", no_argument, 0, 'P'},       {"bursts", required_argument, 0, 'b'},
        {"prep-us", required_argument, 0, 'p'},  {"help", no_argument, 0, 'h'},
        {0, 0, 0, 0}};
    const struct demo_opts defaults = *o;
    int c;
    while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
        if (c == '?' || !strchr(letters, c)) {
            demo_usage(stderr, prog, about, letters, &defaults);
            return 2;
        }
        switch (c) {
        case 'n': o->requests = atol(optarg); break;
        case 'r': o->rate = atof(optarg); break;
        case 'k': o->kernels = atol(optarg); break;
        case 'g': o->gap_us = atol(optarg); break;
        case 'p': o->prep_us = atol(optarg); break;
        case 'w': o->work = atol(optarg); break;
        case 's': o->size = atol(optarg); break;
        case 'S': o->seed = (unsigned)atol(optarg); break;
        case 't': o->seconds = atof(optarg); break;
        case 'c': o->count = atol(optarg); break;
        case 'j': o->json = 1; break;
        case 'P': o->progress = 1; break;
        case 'b':
            if (sscanf(optarg, "%lf:%lf", &o->on_ms, &o->off_ms) != 2 || o->on_ms <= 0 || o->off_ms <= 0) {
                fprintf(stderr, "%s: --bursts '%s': expected ON:OFF, milliseconds, both positive\n", prog, optarg);
                return 2;
            }
            break;
        default: demo_usage(stdout, prog, about, letters, &defaults); return 0; /* 'h' */
        }
    }
    if (o->requests < 0 || o->kernels < 0 || o->kernels > DEMO_LAYERS || o->gap_us < 0 || o->prep_us < 0 ||
        o->work < 1 || o->size < 1 || o->rate < 0 || (strchr(letters, 'n') && (o->requests < 1 || o->kernels < 1)) ||
        (strchr(letters, 't') && o->count <= 0 && o->seconds <= 0)) {
        fprintf(stderr, "%s: every count must be positive%s\n", prog,
                strchr(letters, 'k') ? ", kernels at most 16" : "");
        return 2;
    }
    return -1;
}

/* ------------------------------------------------------------ the service */

/* Request r's input: rand() words, seeded by --seed, marked with r. */
static inline void demo_request_input(uint32_t *in, long size, long r)
{
    for (long i = 0; i < size; i++)
        in[i] = (uint32_t)rand() ^ ((uint32_t)r << 16);
}

/* How many output elements are not x -> A x + C of their input. */
static inline long demo_wrong(const uint32_t *out, const uint32_t *in, long size, uint32_t A, uint32_t C)
{
    long bad = 0;
    for (long i = 0; i < size; i++)
        bad += out[i] != A * in[i] + C;
    return bad;
}

/* When the request after one that arrived at arrival arrives: requests
 * arrive as a Poisson process of rate per second, or back to back (now)
 * at rate 0. Takes rand(), seeded by --seed. */
static inline double demo_next_arrival(double rate, double arrival)
{
    if (rate <= 0)
        return demo_now_s();
    return arrival - log(1.0 - (rand() + 0.5) / ((double)RAND_MAX + 1.0)) / rate;
}

/* Prints the service's result: one line of text, or JSON with the
 * measured window (t0, t1: CLOCK_MONOTONIC seconds), service_ms (busy_s
 * per request) and every latency. lat: each request's latency in ms,
 * sorted here. Returns the exit status: 1 if any output was wrong. */
static inline int demo_service_report(const struct demo_opts *o, const char *prog, const char *device,
                                      double start, double elapsed, double *lat, double busy_s, long bad)
{
    size_t n = (size_t)o->requests;
    double mean = 0;
    for (size_t r = 0; r < n; r++)
        mean += lat[r] / (double)n;
    qsort(lat, n, sizeof *lat, cmp_double);
    double p50 = demo_quantile(lat, n, 0.5), p99 = demo_quantile(lat, n, 0.99);
    if (o->json) {
        printf("{\"program\":\"service\",\"device\":\"%s\",\"requests\":%ld,\"seconds\":%.3f,"
               "\"mean_ms\":%.4f,\"service_ms\":%.4f,\"p50_ms\":%.4f,\"p99_ms\":%.4f,\"max_ms\":%.4f,"
               "\"wrong\":%ld,\"t0\":%.6f,\"t1\":%.6f,\"latencies_ms\":[",
               device, o->requests, elapsed, mean, busy_s * 1e3 / (double)n, p50, p99, lat[n - 1], bad,
               start, start + elapsed);
        for (size_t r = 0; r < n; r++) /* sorted: the order is not needed */
            printf("%s%.4f", r ? "," : "", lat[r]);
        printf("]}\n");
    } else {
        printf("service: %ld requests on %s in %.2f s: latency mean %.3f ms, p50 %.3f ms, p99 %.3f ms; %s\n",
               o->requests, device, elapsed, mean, p50, p99, bad ? "WRONG OUTPUTS" : "all outputs correct");
    }
    if (bad)
        fprintf(stderr, "%s: %ld wrong output elements\n", prog, bad);
    return bad ? 1 : 0;
}

/* -------------------------------------------------------------- the batch */

/* SIGTERM or SIGINT end the batch's run; it prints its results then. */
static volatile sig_atomic_t demo_stop;
static inline void demo_on_signal(int sig)
{
    (void)sig;
    demo_stop = 1;
}

/* The batch's kernel was built and ran once: SIGTERM and SIGINT end the run
 * from now on, and with --progress "ready" goes to stderr, so that a
 * harness (run-demo) starts the other program then. */
static inline void demo_batch_ready(const struct demo_opts *o)
{
    signal(SIGTERM, demo_on_signal);
    signal(SIGINT, demo_on_signal);
    if (o->progress) {
        fputs("ready\n", stderr);
        fflush(stderr);
    }
}

/* Whether the batch goes on: not stopped, count kernels not yet done, or
 * before end without a count. */
static inline int demo_batch_more(const struct demo_opts *o, long done, double end)
{
    return !demo_stop && (o->count > 0 ? done < o->count : demo_now_s() < end);
}

/* --progress: when each kernel was done. */
struct demo_progress {
    double *at;
    size_t n, cap;
};

static inline void demo_progress_note(struct demo_progress *p, const char *prog)
{
    if (p->n == p->cap) {
        p->cap = p->cap ? 2 * p->cap : 1024;
        p->at = (double *)realloc(p->at, p->cap * sizeof *p->at);
        if (!p->at) {
            fprintf(stderr, "%s: out of memory for --progress\n", prog);
            exit(2);
        }
    }
    p->at[p->n++] = demo_now_s();
}

/* Prints the batch's result (JSON with --json, and with --progress when
 * each kernel was done: [CLOCK_MONOTONIC seconds, kernels done] pairs).
 * Returns the exit status: 1 if any output was wrong. */
static inline int demo_batch_report(const struct demo_opts *o, const char *prog, const char *device,
                                    double start, double elapsed, long done, long bad,
                                    const struct demo_progress *p)
{
    if (o->json) {
        printf("{\"program\":\"batch\",\"device\":\"%s\",\"kernels\":%ld,\"seconds\":%.3f,"
               "\"per_second\":%.3f,\"wrong\":%ld",
               device, done, elapsed, (double)done / elapsed, bad);
        if (o->progress) {
            printf(",\"progress\":[[%.6f,0]", start);
            for (size_t i = 0; i < p->n; i++)
                printf(",[%.6f,%zu]", p->at[i], i + 1);
            /* and at the end, so the marks reach the stop (SIGTERM) whatever
             * the last kernel's timing: nothing more was done by then */
            printf(",[%.6f,%zu]]", start + elapsed, p->n);
        }
        printf("}\n");
    } else {
        printf("batch: %ld kernels on %s in %.2f s: %.2f kernels/s; %s\n", done, device, elapsed,
               (double)done / elapsed, bad ? "WRONG OUTPUTS" : "all outputs correct");
    }
    if (bad)
        fprintf(stderr, "%s: %ld wrong output elements\n", prog, bad);
    return bad ? 1 : 0;
}

#endif
