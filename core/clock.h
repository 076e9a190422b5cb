/* Owns: time: CLOCK_MONOTONIC in nanoseconds, which all processes on a node
 * share. Everything that decides by time takes the time as an argument
 * (core/admit.h, core/sched.h), so tests and the replay tool drive it by
 * passing their own. */
#ifndef FIKIT_CORE_CLOCK_H
#define FIKIT_CORE_CLOCK_H

#include <stdint.h>

/* CLOCK_MONOTONIC in ns; a vDSO call, no system call on Linux. */
uint64_t fikit_now_ns(void);

/* The calling thread's CPU time in ns (CLOCK_THREAD_CPUTIME_ID, a system
 * call): how much host work a thread did between two points, what a
 * burst's request took on the CPU before its first launch (interpose/burst.c). */
uint64_t fikit_thread_cpu_ns(void);

#define FIKIT_NS_PER_US 1000ull
#define FIKIT_NS_PER_MS 1000000ull
#define FIKIT_NS_PER_S 1000000000ull

#endif
