/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * iobuf.c - costs of buffers and pools, each next to a baseline measured in
 * the same run:
 *
 *   alloc   a pool alloc + release of a 4 KiB and a 64 KiB buffer (network
 *           defaults: cache-line aligned, per-thread caches; and again
 *           without the caches), against malloc + free and
 *           posix_memalign + free of the same size and alignment, on one
 *           thread and on two threads at once; then the same with one byte
 *           per page written each time, as a user of the buffer would.
 *   share   clone + slice + release of both, on a shared buffer of 64 B to
 *           1 MiB, against a memcpy of the same bytes: what handing a
 *           reader "these bytes" costs either way.
 *
 * Each figure is the best of a few runs.
 *
 * usage: iobuf [alloc|share ...]   (default: both)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cwrt/cwrt.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* Keep the compiler from dropping work whose result is unused. */
static void sink(void *p)
{
    __asm__ volatile("" : : "r"(p) : "memory");
}

static void touch(uint8_t *p, size_t size)
{
    for (size_t i = 0; i < size; i += 4096)
        p[i] = (uint8_t)i;
}

/* ---- alloc + release ---------------------------------------------------------- */

enum { ALLOC_ROUNDS = 1000000, REPEATS = 5 };

enum how { POOL, MALLOC, MEMALIGN };

struct alloc_job {
    enum how how;
    cw_bufpool *pool;
    size_t size, align;
    bool touch;
    double ns; /* per alloc + release */
};

static void *alloc_loop(void *arg)
{
    struct alloc_job *j = arg;
    double t0 = now_ns();
    for (long i = 0; i < ALLOC_ROUNDS; i++) {
        if (j->how == POOL) {
            cw_iobuf_mut m;
            if (cw_bufpool_try_alloc(j->pool, j->size, &m, NULL) != CW_OK)
                abort();
            if (j->touch)
                touch(m.data, j->size);
            sink(m.data);
            cw_iobuf_mut_release(&m);
        } else {
            void *p = NULL;
            if (j->how == MALLOC)
                p = malloc(j->size);
            else if (posix_memalign(&p, j->align, j->size) != 0)
                p = NULL;
            if (!p)
                abort();
            if (j->touch)
                touch(p, j->size);
            sink(p);
            free(p);
        }
    }
    j->ns = (now_ns() - t0) / ALLOC_ROUNDS;
    return NULL;
}

/* The mean cost per operation with `threads` threads running at once,
 * once. */
static double alloc_once(enum how how, cw_bufpool *pool, size_t size, int threads, bool touch)
{
    struct alloc_job jobs[2];
    pthread_t t[2];
    for (int i = 0; i < threads; i++) {
        jobs[i] = (struct alloc_job){how, pool, size, CW_CACHE_LINE_SIZE, touch, 0};
        if (pthread_create(&t[i], NULL, alloc_loop, &jobs[i]) != 0)
            abort();
    }
    double sum = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        sum += jobs[i].ns;
    }
    return sum / threads;
}

/* The best of a few runs: on a shared machine the others only add noise. */
static double alloc_ns(enum how how, cw_bufpool *pool, size_t size, int threads, bool touch)
{
    double best = alloc_once(how, pool, size, threads, touch);
    for (int i = 1; i < REPEATS; i++) {
        double ns = alloc_once(how, pool, size, threads, touch);
        best = ns < best ? ns : best;
    }
    return best;
}

static cw_bufpool *network_pool(bool thread_cache, int threads)
{
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cfg.parallelism = (uint32_t)threads;
    if (!thread_cache)
        cfg.thread_cache = 0;
    cw_bufpool *p;
    if (cw_bufpool_new(cw_backend_deterministic(), &cfg, &p) != CW_OK)
        abort();
    return p;
}

static void alloc_line(size_t size, int threads, bool touch)
{
    cw_bufpool *cached = network_pool(true, threads);
    cw_bufpool *locked = network_pool(false, threads);
    double pool = alloc_ns(POOL, cached, size, threads, touch);
    double nocache = alloc_ns(POOL, locked, size, threads, touch);
    double mall = alloc_ns(MALLOC, NULL, size, threads, touch);
    double memal = alloc_ns(MEMALIGN, NULL, size, threads, touch);
    printf("bench iobuf alloc%s %zuKiB threads=%d: pool_ns=%.1f pool_no_cache_ns=%.1f "
           "malloc_ns=%.1f posix_memalign_ns=%.1f malloc/pool=%.2f posix_memalign/pool=%.2f "
           "malloc/pool_no_cache=%.2f\n",
           touch ? "+touch" : "", size / 1024, threads, pool, nocache, mall, memal, mall / pool,
           memal / pool, mall / nocache);
    cw_bufpool_release(cached);
    cw_bufpool_release(locked);
}

static void bench_alloc(void)
{
    size_t sizes[2] = {4096, 65536};
    for (int touch = 0; touch < 2; touch++) {
        for (int threads = 1; threads <= 2; threads++) {
            for (int s = 0; s < 2; s++)
                alloc_line(sizes[s], threads, touch);
        }
    }
}

/* ---- share vs copy --------------------------------------------------------------- */

enum { SHARE_ROUNDS = 2000000 };

static double share_once(const cw_iobuf *b)
{
    double t0 = now_ns();
    for (long i = 0; i < SHARE_ROUNDS; i++) {
        cw_iobuf c = cw_iobuf_clone(b), s;
        if (cw_iobuf_slice(&c, 0, c.len, &s) != CW_OK)
            abort();
        sink(&s);
        cw_iobuf_release(&s);
        cw_iobuf_release(&c);
    }
    return (now_ns() - t0) / SHARE_ROUNDS;
}

static double copy_once(const cw_iobuf *b, uint8_t *dst)
{
    long rounds = (long)((64u << 20) / b->len); /* 64 MiB copied in all */
    if (rounds > SHARE_ROUNDS)
        rounds = SHARE_ROUNDS;
    double t0 = now_ns();
    for (long i = 0; i < rounds; i++) {
        memcpy(dst, b->data, b->len);
        sink(dst);
    }
    return (now_ns() - t0) / (double)rounds;
}

static double share_ns(const cw_iobuf *b)
{
    double best = share_once(b);
    for (int i = 1; i < REPEATS; i++) {
        double ns = share_once(b);
        best = ns < best ? ns : best;
    }
    return best;
}

static double copy_ns(const cw_iobuf *b, uint8_t *dst)
{
    double best = copy_once(b, dst);
    for (int i = 1; i < REPEATS; i++) {
        double ns = copy_once(b, dst);
        best = ns < best ? ns : best;
    }
    return best;
}

static void bench_share(void)
{
    uint8_t *dst = malloc(1 << 20);
    if (!dst)
        abort();
    for (size_t size = 64; size <= (1u << 20); size *= 4) {
        cw_iobuf_mut m;
        if (cw_iobuf_mut_zeroed(cw_backend_deterministic(), size, &m) != CW_OK)
            abort();
        cw_iobuf b;
        cw_iobuf_mut_freeze(&m, &b);
        double share = share_ns(&b), copy = copy_ns(&b, dst);
        printf("bench iobuf share %zuB: clone_slice_release_ns=%.1f memcpy_ns=%.1f "
               "memcpy/share=%.2f\n",
               size, share, copy, copy / share);
        cw_iobuf_release(&b);
    }
    free(dst);
}

int main(int argc, char **argv)
{
    bool all = argc < 2;
    for (int i = all ? 0 : 1; i < (all ? 1 : argc); i++) {
        if (all || !strcmp(argv[i], "alloc"))
            bench_alloc();
        if (all || !strcmp(argv[i], "share"))
            bench_share();
    }
    return 0;
}
