/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * metrics.c - what metrics cost, each next to a baseline measured in the
 * same run:
 *
 *   counter  cw_counter_inc on one counter, from one thread and from two at
 *            once, against a bare relaxed atomic add on one shared word:
 *            the price of the backend table and the kind check.
 *   encode   cw_metrics_encode of a family of 10,000 series, per series,
 *            against snprintf of the same 10,000 lines into one buffer.
 *
 * Each figure is the best of a few runs.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cwrt/cwrt.h"

enum { INCREMENTS = 20000000, SERIES = 10000, REPEATS = 5 };

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- counter increments ---------------------------------------------------- */

static atomic_uint_fast64_t bare;

struct inc_job {
    cw_metric *counter; /* NULL: the bare atomic */
};

static void *inc_loop(void *arg)
{
    struct inc_job *j = arg;
    if (j->counter) {
        for (long i = 0; i < INCREMENTS; i++)
            cw_counter_inc(j->counter);
    } else {
        for (long i = 0; i < INCREMENTS; i++)
            atomic_fetch_add_explicit(&bare, 1, memory_order_relaxed);
    }
    return NULL;
}

/* Nanoseconds per increment, each of `threads` threads doing INCREMENTS. */
static double inc_ns(cw_metric *counter, int threads)
{
    double best = 1e30;
    for (int r = 0; r < REPEATS; r++) {
        struct inc_job job = {counter};
        pthread_t t[2];
        double t0 = now_ns();
        for (int i = 0; i < threads; i++)
            pthread_create(&t[i], NULL, inc_loop, &job);
        for (int i = 0; i < threads; i++)
            pthread_join(t[i], NULL);
        double ns = (now_ns() - t0) / INCREMENTS;
        best = ns < best ? ns : best;
    }
    return best;
}

static void bench_counter(cw_ctx *ctx)
{
    cw_metric *c = cw_counter(ctx, "bench", "increments");
    for (int threads = 1; threads <= 2; threads++) {
        double counter = inc_ns(c, threads);
        double atomic = inc_ns(NULL, threads);
        printf("bench metrics counter threads=%d: counter_inc_ns=%.2f atomic_add_ns=%.2f "
               "counter/atomic=%.2f\n",
               threads, counter, atomic, counter / atomic);
    }
    cw_metric_release(c);
}

/* ---- encode ---------------------------------------------------------------- */

static const char *const peer_label[] = {"peer"};

/* The baseline: the same lines written with snprintf, no registry. */
static double snprintf_ns(void)
{
    double best = 1e30;
    for (int r = 0; r < REPEATS; r++) {
        double t0 = now_ns();
        size_t cap = (size_t)SERIES * 64, len = 0;
        char *buf = malloc(cap);
        for (int i = 0; i < SERIES; i++)
            len += (size_t)snprintf(buf + len, cap - len,
                                    "bench_votes_total{epoch=\"1\",peer=\"p%05d\"} %d\n", i, i);
        double ns = (now_ns() - t0) / SERIES;
        if (len == 0)
            abort();
        free(buf);
        best = ns < best ? ns : best;
    }
    return best;
}

static void bench_encode(cw_ctx *ctx)
{
    cw_ctx *c = cw_with_attribute(cw_child(ctx, "bench"), "epoch", "1");
    cw_metric *f = cw_family(c, "votes", "votes per peer", CW_METRIC_COUNTER, peer_label, 1);
    for (int i = 0; i < SERIES; i++) {
        char peer[16];
        snprintf(peer, sizeof peer, "p%05d", i);
        const char *values[] = {peer};
        cw_counter_add(cw_family_get(f, values), (uint64_t)i);
    }
    double best = 1e30;
    size_t bytes = 0;
    for (int r = 0; r < REPEATS; r++) {
        double t0 = now_ns();
        char *text = cw_metrics_encode(ctx);
        double ns = (now_ns() - t0) / SERIES;
        bytes = strlen(text);
        free(text);
        best = ns < best ? ns : best;
    }
    double base = snprintf_ns();
    printf("bench metrics encode series=%d bytes=%zu: encode_ns_per_series=%.1f "
           "snprintf_ns_per_series=%.1f encode/snprintf=%.2f\n",
           SERIES, bytes, best, base, best / base);
    cw_metric_release(f);
    cw_ctx_release(c);
}

static void *root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    bench_counter(ctx);
    bench_encode(ctx);
    return NULL;
}

int main(void)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cw_run_result res;
    if (cw_start(cw_backend_deterministic(), &cfg, root, NULL, &res) != CW_OK) {
        fprintf(stderr, "bench metrics: %s\n", res.message);
        return 1;
    }
    return 0;
}
