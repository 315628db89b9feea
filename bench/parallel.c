/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * parallel.c - a strategy's fold next to the same sum done by a plain loop
 * and by OpenMP, on the same array of 10^8 integers, in one run:
 *
 *   fold    sum of 10^8 uint32 into a uint64: a strategy of parallelism 2
 *           awaited from a task of the native backend, a single-threaded
 *           loop, and `#pragma omp parallel for reduction(+:sum)` with two
 *           threads (built with -fopenmp). Best of five runs each.
 *
 * usage: parallel
 */
#include <omp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "cwrt/cwrt.h"

enum { N = 100000000, THREADS = 2, ROUNDS = 5 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static uint32_t *data;

/* The one loop all three run (OpenMP's is the same body under its pragma). */
static uint64_t sum_range(size_t lo, size_t hi)
{
    uint64_t s = 0;
    for (size_t i = lo; i < hi; i++)
        s += data[i];
    return s;
}

static void fold_identity(void *acc, void *arg)
{
    (void)arg;
    *(uint64_t *)acc = 0;
}

static void fold_range(void *acc, size_t begin, size_t end, void *arg)
{
    (void)arg;
    *(uint64_t *)acc += sum_range(begin, end);
}

static void fold_reduce(void *acc, void *other, void *arg)
{
    (void)arg;
    *(uint64_t *)acc += *(uint64_t *)other;
}

struct result {
    double best_ns;
    uint64_t sum;
};

static void *fold_root(cw_ctx *ctx, void *arg)
{
    struct result *r = arg;
    cw_strategy *s = NULL;
    if (cw_strategy_new(ctx, THREADS, &s) != CW_OK)
        abort();
    cw_fold f = {sizeof(uint64_t), fold_identity, fold_range, fold_reduce, NULL, NULL};
    r->best_ns = 1e30;
    for (int round = 0; round < ROUNDS; round++) {
        double t0 = now_ns();
        if (cw_strategy_fold(s, ctx, 0, N, &f, &r->sum) != CW_OK)
            abort();
        double t = now_ns() - t0;
        r->best_ns = t < r->best_ns ? t : r->best_ns;
    }
    cw_strategy_release(s);
    return NULL;
}

static struct result bench_cwrt(void)
{
    struct result r;
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.worker_threads = 1;
    cw_run_result res;
    if (cw_start(cw_backend_native(), &cfg, fold_root, &r, &res) != CW_OK) {
        fprintf(stderr, "bench: run failed: %s\n", res.message);
        exit(1);
    }
    return r;
}

static struct result bench_loop(void)
{
    struct result r = {1e30, 0};
    for (int round = 0; round < ROUNDS; round++) {
        double t0 = now_ns();
        r.sum = sum_range(0, N);
        double t = now_ns() - t0;
        r.best_ns = t < r.best_ns ? t : r.best_ns;
    }
    return r;
}

static struct result bench_openmp(void)
{
    struct result r = {1e30, 0};
    omp_set_num_threads(THREADS);
    for (int round = 0; round < ROUNDS; round++) {
        double t0 = now_ns();
        uint64_t s = 0;
#pragma omp parallel for reduction(+ : s)
        for (long i = 0; i < N; i++)
            s += data[i];
        double t = now_ns() - t0;
        r.sum = s;
        r.best_ns = t < r.best_ns ? t : r.best_ns;
    }
    return r;
}

int main(void)
{
    data = malloc((size_t)N * sizeof *data);
    if (!data)
        abort();
    uint32_t x = 1;
    for (size_t i = 0; i < N; i++) {
        x = x * 1664525u + 1013904223u;
        data[i] = x >> 8;
    }
    struct result loop = bench_loop();
    struct result omp = bench_openmp();
    struct result cw = bench_cwrt();
    if (cw.sum != loop.sum || omp.sum != loop.sum) {
        fprintf(stderr, "bench: sums differ\n");
        return 1;
    }
    printf("bench parallel fold n=%d p=%d: strategy_ms=%.1f loop_ms=%.1f openmp_ms=%.1f "
           "loop/strategy=%.2f openmp/strategy=%.2f\n",
           N, THREADS, cw.best_ns / 1e6, loop.best_ns / 1e6, omp.best_ns / 1e6,
           loop.best_ns / cw.best_ns, omp.best_ns / cw.best_ns);
    free(data);
    return 0;
}
