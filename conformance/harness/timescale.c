/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * timescale.c - how much slower than a plain machine this run is, so that
 * no verdict depends on the machine's speed or load (conformance/README.md,
 * "Time in cases").
 *
 * Every limit of the suite in real time (the per-case timeout, and the few
 * cases that give a thread a deadline) is multiplied by the time scale. By
 * default (--time-scale auto) the harness measures it at start: a fixed
 * piece of CPU and memory work, timed five times, its median divided by
 * what the same work takes on an idle core of an ordinary machine. A run
 * under valgrind, a sanitizer or qemu, or on a loaded machine, gets a
 * scale above 1 by itself; a run on an idle machine gets 1. The scale is
 * never below 1: a fast machine gets no shorter limits than the ones a
 * case was written for. A backend slowed down in ways the harness does not
 * share (its own sanitizer build under a plain harness) sets --time-scale.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness/cwc.h"

double cwc_time_scale = 1.0;
bool cwc_time_scale_measured;

/* What one round takes on an idle core of an ordinary x86-64 machine,
 * with headroom: 1.8 to 2.2 ms measured (release build, 2 cores); ASan
 * made it 10 times slower, valgrind 7, TSan 6. */
#define BASELINE_SECONDS 0.003
#define ROUNDS 5
#define MAX_SCALE 1000.0

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Work shaped like a case's: dependent arithmetic and writes over a
 * buffer bigger than a first-level cache, small allocations, and a lock
 * taken and given back, the three things a runtime does most (and the
 * three valgrind and the sanitizers slow down most). The result is
 * returned so that the compiler keeps the work. */
static uint64_t one_round(uint8_t *buf, size_t len)
{
    static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
    uint64_t x = 0x9e3779b97f4a7c15u;
    for (int pass = 0; pass < 8; pass++)
        for (size_t i = 0; i < len; i += 8) {
            x ^= x << 13, x ^= x >> 7, x ^= x << 17;
            memcpy(buf + i, &x, sizeof x);
            if ((i & 511) == 0) {
                pthread_mutex_lock(&lock);
                void *p = malloc(16 + (x & 255));
                if (p)
                    memcpy(p, &x, sizeof x);
                free(p);
                pthread_mutex_unlock(&lock);
            }
        }
    return x ^ buf[len / 2];
}

static int by_value(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double cwc_measure_time_scale(void)
{
    enum { LEN = 1 << 20 };
    uint8_t *buf = malloc(LEN);
    if (!buf)
        return 1.0;
    double took[ROUNDS];
    volatile uint64_t sink = 0;
    for (int i = 0; i < ROUNDS; i++) {
        double t0 = now_seconds();
        sink += one_round(buf, LEN);
        took[i] = now_seconds() - t0;
    }
    (void)sink;
    free(buf);
    qsort(took, ROUNDS, sizeof took[0], by_value);
    double scale = took[ROUNDS / 2] / BASELINE_SECONDS;
    return scale < 1.0 ? 1.0 : scale > MAX_SCALE ? MAX_SCALE : scale;
}

uint64_t cwc_scaled(uint64_t duration)
{
    double scaled = (double)duration * cwc_time_scale;
    return scaled >= (double)UINT64_MAX ? UINT64_MAX : (uint64_t)scaled;
}
