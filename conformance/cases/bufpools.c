/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * bufpools.c - buffer pools and the run's two pools (spec/12-buffers.md,
 * BUF-019 .. BUF-027), with test_buffer_pooler of the original interface.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cases/buffers.h"

static cw_bufpool_config small_config(void)
{
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cfg.min_size = 64;
    cfg.max_size = 1024;
    cfg.max_per_class = 2;
    cfg.alignment = 64;
    cfg.thread_cache = 0;
    return cfg;
}

static bool same_config(const cw_bufpool_config *a, const cw_bufpool_config *b)
{
    return a->min_size == b->min_size && a->max_size == b->max_size &&
           a->max_per_class == b->max_per_class && a->alignment == b->alignment &&
           a->pool_min_size == b->pool_min_size && a->thread_cache == b->thread_cache &&
           a->parallelism == b->parallelism && a->prefill == b->prefill;
}

static void stats(cw_bufpool *p, size_t cls, cw_bufpool_stats *st)
{
    ck_assert_int_eq(cw_bufpool_class_stats(p, cls, st), CW_OK);
}

/* ---- BUF-019: configurations -------------------------------------------------------------- */

CWC_CASE(bufpool_config_check, "buffers", "BUF-019 RUN-008", CWC_REPEATED)
{
    cwc_buffer_ops();
    cw_bufpool_config good = small_config(), bad;
    cw_bufpool *p;
    struct {
        size_t field;
        size_t value;
    } breaks[] = {
        {offsetof(cw_bufpool_config, alignment), 48},
        {offsetof(cw_bufpool_config, min_size), 96},
        {offsetof(cw_bufpool_config, max_size), 1000},
        {offsetof(cw_bufpool_config, max_size), 32},
        {offsetof(cw_bufpool_config, alignment), 128},
        {offsetof(cw_bufpool_config, pool_min_size), 65},
        {offsetof(cw_bufpool_config, max_size), (SIZE_MAX >> 1) + 1},
    };
    for (size_t i = 0; i < sizeof breaks / sizeof breaks[0]; i++) {
        bad = good;
        memcpy((char *)&bad + breaks[i].field, &breaks[i].value, sizeof(size_t));
        ck_assert_ptr_nonnull(cw_bufpool_config_check(&bad));
        ck_assert_int_eq(cw_bufpool_new(cwc_backend, &bad, &p), CW_ERR_INVALID);
        ck_assert_ptr_null(p);
    }
    bad = good;
    bad.max_per_class = 0;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &bad, &p), CW_ERR_INVALID);
    bad = good;
    bad.parallelism = 0;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &bad, &p), CW_ERR_INVALID);

    ck_assert_ptr_null(cw_bufpool_config_check(&good));
    good.prefill = true;
    good.pool_min_size = 64;
    CWC_OK(cw_bufpool_new(cwc_backend, &good, &p));
    cw_bufpool_config back;
    cw_bufpool_get_config(p, &back);
    ck_assert(same_config(&back, &good));
    cw_bufpool_stats st;
    stats(p, 4, &st); /* prefilled: every buffer exists and is parked */
    ck_assert_uint_eq(st.size, 1024);
    ck_assert_uint_eq(st.created, 2);
    ck_assert_uint_eq(st.idle, 2);
    ck_assert_int_eq(cw_bufpool_class_stats(p, 5, &st), CW_ERR_INVALID);
    cw_bufpool_release(p);
}

/* ---- BUF-020 .. BUF-023: allocation, return, fallback, counters ---------------------------- */

CWC_CASE(bufpool_try_alloc, "buffers", "BUF-020 RUN-008", CWC_REPEATED)
{
    cw_bufpool_config cfg = small_config();
    cfg.pool_min_size = 16;
    cw_bufpool *p;
    CWC_OK(cw_bufpool_new(cwc_backend, &cfg, &p));
    size_t asks[][2] = {{16, 64}, {64, 64}, {65, 128}, {200, 256}, {512, 512}, {1024, 1024}};
    for (size_t i = 0; i < 6; i++) {
        cw_iobuf_mut m;
        int why = -1;
        CWC_OK(cw_bufpool_try_alloc(p, asks[i][0], &m, &why));
        ck_assert_int_eq(why, 0);
        ck_assert_uint_eq(m.len, 0);
        ck_assert_uint_eq(m.cap, asks[i][1]);
        ck_assert_uint_eq((uintptr_t)m.data % 64, 0);
        ck_assert(cw_iobuf_mut_is_pooled(&m));
        cw_iobuf_mut_release(&m);
    }

    /* A parked buffer is reused before a new one is made. */
    cw_iobuf_mut a, b, c;
    CWC_OK(cw_bufpool_try_alloc(p, 100, &a, NULL));
    uint8_t *first = a.data;
    cw_iobuf_mut_release(&a);
    CWC_OK(cw_bufpool_try_alloc(p, 100, &a, NULL));
    ck_assert_ptr_eq(a.data, first);
    cw_bufpool_stats st;
    stats(p, 1, &st);
    ck_assert_uint_eq(st.created, 1);

    /* Exhausted: no buffer of a larger class is taken instead. */
    CWC_OK(cw_bufpool_try_alloc(p, 100, &b, NULL));
    int why = 0;
    ck_assert_int_eq(cw_bufpool_try_alloc(p, 100, &c, &why), CW_ERR_POOL);
    ck_assert_int_eq(why, CW_BUFPOOL_EXHAUSTED);
    ck_assert_uint_eq(c.cap, 0);
    stats(p, 2, &st);
    ck_assert_uint_eq(st.created, 1); /* the 256-byte class made only its first one */
    ck_assert_int_eq(cw_bufpool_try_alloc(p, 1025, &c, &why), CW_ERR_POOL);
    ck_assert_int_eq(why, CW_BUFPOOL_OVERSIZED);
    ck_assert_str_eq(cw_bufpool_strfailure(CW_BUFPOOL_OVERSIZED),
                     "requested capacity exceeds maximum buffer size");
    ck_assert_str_eq(cw_bufpool_strfailure(CW_BUFPOOL_EXHAUSTED),
                     "pool exhausted for required size class");

    /* Zero and small requests leave the classes alone. */
    CWC_OK(cw_bufpool_try_alloc(p, 0, &c, NULL));
    ck_assert_uint_eq(c.cap, 0);
    CWC_OK(cw_bufpool_try_alloc(p, 15, &c, NULL));
    ck_assert_uint_ge(c.cap, 15);
    ck_assert(!cw_iobuf_mut_is_pooled(&c));
    cw_iobuf_mut_release(&c);
    stats(p, 0, &st);
    ck_assert_uint_eq(st.created, 1); /* the one 64-byte buffer of the first loop */
    cw_iobuf_mut_release(&a);
    cw_iobuf_mut_release(&b);
    cw_bufpool_release(p);
}

static void *release_elsewhere(void *arg)
{
    cw_iobuf_release(arg);
    return NULL;
}

CWC_CASE(bufpool_return, "buffers", "BUF-021 RUN-008", CWC_REPEATED)
{
    cw_bufpool_config cfg = small_config();
    cfg.max_per_class = 1;
    cw_bufpool *p;
    CWC_OK(cw_bufpool_new(cwc_backend, &cfg, &p));
    cw_iobuf_mut m, again;
    cw_iobuf frozen, slice;
    for (int way = 0; way < 3; way++) {
        CWC_OK(cw_bufpool_try_alloc(p, 64, &m, NULL));
        CWC_OK(cw_iobuf_mut_put(&m, "returning", 9));
        cw_iobuf_mut_freeze(&m, &frozen);
        CWC_OK(cw_iobuf_slice(&frozen, 2, 5, &slice));
        cw_iobuf_release(&frozen);
        ck_assert_int_eq(cw_bufpool_try_alloc(p, 64, &again, NULL), CW_ERR_POOL);
        if (way == 0) {
            cw_iobuf_release(&slice); /* the last reference is a slice */
        } else if (way == 1) {
            cw_iobufs *l = cw_iobufs_new(cwc_backend);
            CWC_OK(cw_iobufs_append(l, &slice));
            cw_iobufs_release(l); /* ... held by a list */
        } else {
            pthread_t t; /* ... released on another thread */
            ck_assert_int_eq(pthread_create(&t, NULL, release_elsewhere, &slice), 0);
            pthread_join(t, NULL);
        }
        CWC_OK(cw_bufpool_try_alloc(p, 64, &again, NULL));
        cw_iobuf_mut_release(&again);
    }
    cw_bufpool_stats st;
    stats(p, 0, &st);
    ck_assert_uint_eq(st.created, 1);
    cw_bufpool_release(p);
}

CWC_CASE(bufpool_alloc_fallback, "buffers", "BUF-022 RUN-008", CWC_REPEATED)
{
    cw_bufpool_config cfg = small_config();
    cfg.max_per_class = 1;
    cw_bufpool *p;
    CWC_OK(cw_bufpool_new(cwc_backend, &cfg, &p));
    cw_iobuf_mut a, b, big;
    CWC_OK(cw_bufpool_alloc(p, 100, &a));
    ck_assert(cw_iobuf_mut_is_pooled(&a));
    CWC_OK(cw_bufpool_alloc(p, 100, &b)); /* the class is exhausted */
    ck_assert(!cw_iobuf_mut_is_pooled(&b));
    ck_assert_uint_ge(b.cap, 100);
    ck_assert_uint_eq((uintptr_t)b.data % 64, 0);
    CWC_OK(cw_bufpool_alloc(p, 5000, &big)); /* oversized */
    ck_assert(!cw_iobuf_mut_is_pooled(&big));
    ck_assert_uint_ge(big.cap, 5000);
    ck_assert_uint_eq((uintptr_t)big.data % 64, 0);
    memset(big.data, 7, big.cap);
    cw_iobuf_mut_release(&big);
    cw_iobuf_mut_release(&b);
    cw_iobuf_mut_release(&a);
    cw_bufpool_stats st;
    stats(p, 1, &st);
    ck_assert_uint_eq(st.created, 1); /* fallbacks are not the class's */
    cw_bufpool_release(p);
}

CWC_CASE(bufpool_stats, "buffers", "BUF-023 RUN-008", CWC_REPEATED)
{
    cw_bufpool *p = cwc_small_pool(2);
    cw_iobuf_mut m[3];
    CWC_OK(cw_bufpool_try_alloc(p, 300, &m[0], NULL));
    CWC_OK(cw_bufpool_try_alloc(p, 300, &m[1], NULL));
    ck_assert_int_eq(cw_bufpool_try_alloc(p, 300, &m[2], NULL), CW_ERR_POOL);
    ck_assert_int_eq(cw_bufpool_try_alloc(p, 300, &m[2], NULL), CW_ERR_POOL);
    ck_assert_int_eq(cw_bufpool_try_alloc(p, 9999, &m[2], NULL), CW_ERR_POOL);
    cw_iobuf_mut_release(&m[0]);
    cw_bufpool_stats st;
    stats(p, 3, &st);
    ck_assert_uint_eq(st.size, 512);
    ck_assert_uint_eq(st.max_buffers, 2);
    ck_assert_uint_eq(st.created, 2);
    ck_assert_uint_eq(st.exhausted, 2);
    ck_assert_uint_eq(st.idle, 1);
    ck_assert_uint_eq(st.oversized, 1);
    stats(p, 0, &st);
    ck_assert_uint_eq(st.size, 64);
    ck_assert_uint_eq(st.created, 0);
    ck_assert_uint_eq(st.exhausted, 0);
    cw_iobuf_mut_release(&m[1]);
    cw_bufpool_release(p);
}

/* ---- BUF-024: buffers outlive their pool ------------------------------------------------- */

static void *alloc_and_return(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_iobuf_mut m;
    CWC_OK(cw_bufpool_try_alloc(cw_network_buffer_pool(ctx), 2000, &m, NULL));
    CWC_OK(cw_iobuf_mut_put(&m, "outlives the run", 16));
    cw_iobuf *b = malloc(sizeof *b);
    cw_iobuf_mut_freeze(&m, b);
    return b;
}

CWC_CASE(bufpool_outlives_owner, "buffers", "BUF-024 RUN-008", CWC_REPEATED)
{
    cw_bufpool *p = cwc_small_pool(2);
    cw_iobuf_mut m;
    cw_iobuf b;
    CWC_OK(cw_bufpool_try_alloc(p, 64, &m, NULL));
    cw_iobuf_mut_release(&m); /* parked: freed with the pool */
    CWC_OK(cw_bufpool_try_alloc(p, 128, &m, NULL));
    CWC_OK(cw_iobuf_mut_put(&m, "still here", 10));
    cw_iobuf_mut_freeze(&m, &b);
    cw_iobuf c = cw_iobuf_clone(&b);
    cw_bufpool_release(p);
    /* Whatever the pool's release gave back to the heap is taken and
     * scribbled over: a pool that did not wait for its buffers shows. */
    enum { SCRIBBLES = 512 };
    static void *scribble[SCRIBBLES];
    for (size_t i = 0; i < SCRIBBLES; i++) {
        scribble[i] = malloc(16 * (i % 256 + 1));
        ck_assert_ptr_nonnull(scribble[i]);
        memset(scribble[i], 0xff, 16 * (i % 256 + 1));
    }
    ck_assert(cw_iobuf_equal_bytes(&c, "still here", 10));
    cw_iobuf_release(&b);
    ck_assert(cw_iobuf_equal_bytes(&c, "still here", 10));
    cw_iobuf_release(&c); /* the pool's last buffer: the pool goes now */
    for (size_t i = 0; i < SCRIBBLES; i++)
        free(scribble[i]);

    cw_iobuf *kept = cwc_run_ok(NULL, alloc_and_return, NULL);
    ck_assert(cw_iobuf_equal_bytes(kept, "outlives the run", 16));
    ck_assert(cw_iobuf_is_pooled(kept));
    cw_iobuf_release(kept);
    free(kept);
}

/* ---- BUF-025: threads and thread caches -------------------------------------------------- */

struct cached {
    cw_bufpool *pool;
    atomic_int bad;
};

static void *churn(void *arg)
{
    struct cached *c = arg;
    for (int i = 0; i < 500; i++) {
        cw_iobuf_mut m;
        if (cw_bufpool_try_alloc(c->pool, 64u << (i % 4), &m, NULL) != CW_OK)
            continue;
        memset(m.data, i, m.cap);
        cw_iobuf b;
        m.len = m.cap;
        cw_iobuf_mut_freeze(&m, &b);
        for (size_t k = 0; k < b.len; k++)
            if (b.data[k] != (uint8_t)i)
                atomic_fetch_add(&c->bad, 1);
        cw_iobuf_release(&b);
    }
    return NULL;
}

static void *alloc_release_exit(void *arg)
{
    cw_iobuf_mut m;
    ck_assert_int_eq(cw_bufpool_try_alloc(arg, 64, &m, NULL), CW_OK);
    cw_iobuf_mut_release(&m); /* parked in this thread's cache, if it has one */
    return NULL;
}

CWC_CASE(bufpool_threads, "buffers", "BUF-025 RUN-008", CWC_REPEATED)
{
    cw_bufpool_config cfg = small_config();
    cfg.max_per_class = 16;
    cfg.thread_cache = CW_BUFPOOL_CACHE_AUTO;
    cfg.parallelism = 4;
    struct cached c = {.bad = 0};
    CWC_OK(cw_bufpool_new(cwc_backend, &cfg, &c.pool));
    pthread_t t[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, churn, &c), 0);
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    ck_assert_int_eq(atomic_load(&c.bad), 0);
    cw_bufpool_stats st;
    for (size_t i = 0; i < 4; i++) {
        stats(c.pool, i, &st);
        ck_assert_uint_le(st.created, 16);
        ck_assert_uint_eq(st.idle, st.created); /* every thread's cache came back */
    }
    cw_bufpool_release(c.pool);

    /* One buffer, cached by a thread that exits: the pool has it again. */
    cfg.max_per_class = 1;
    cfg.thread_cache = 1;
    cw_bufpool *p;
    CWC_OK(cw_bufpool_new(cwc_backend, &cfg, &p));
    ck_assert_int_eq(pthread_create(&t[0], NULL, alloc_release_exit, p), 0);
    pthread_join(t[0], NULL);
    cw_iobuf_mut m;
    CWC_OK(cw_bufpool_try_alloc(p, 64, &m, NULL));
    cw_iobuf_mut_release(&m);
    CWC_OK(cw_bufpool_try_alloc(p, 64, &m, NULL)); /* this thread finds its own first */
    cw_iobuf_mut_release(&m);
    cw_bufpool_release(p);
}

/* A thread cache that fills and spills, round after round on one thread:
 * the class can still hand out all its buffers, each a different one, and
 * every one comes back idle. */
CWC_CASE(bufpool_thread_cache_spills, "buffers", "BUF-020 BUF-021 BUF-023 RUN-008", CWC_REPEATED)
{
    enum { MAX = 8, ROUNDS = 12 };
    cw_bufpool_config cfg = small_config();
    cfg.max_size = 64;
    cfg.max_per_class = MAX;
    cfg.thread_cache = 4;
    cw_bufpool *p;
    CWC_OK(cw_bufpool_new(cwc_backend, &cfg, &p));
    for (int round = 0; round < ROUNDS; round++) {
        cw_iobuf_mut m[MAX];
        for (int i = 0; i < MAX; i++) {
            ck_assert_msg(cw_bufpool_try_alloc(p, 64, &m[i], NULL) == CW_OK,
                          "round %d: buffer %d of %d refused", round, i, MAX);
            memset(m[i].data, 'a' + i, 64);
        }
        int why = 0;
        cw_iobuf_mut more;
        ck_assert_int_eq(cw_bufpool_try_alloc(p, 64, &more, &why), CW_ERR_POOL);
        ck_assert_int_eq(why, CW_BUFPOOL_EXHAUSTED);
        for (int i = 0; i < MAX; i++) /* no buffer handed out twice */
            for (int k = 0; k < 64; k++)
                ck_assert_int_eq(m[i].data[k], 'a' + i);
        for (int i = 0; i < MAX; i++) /* released in an order that changes each round */
            cw_iobuf_mut_release(&m[(i * 3 + round) % MAX]);
        cw_bufpool_stats st;
        stats(p, 0, &st);
        ck_assert_uint_eq(st.created, MAX);
        ck_assert_uint_eq(st.idle, MAX);
    }
    cw_bufpool_release(p);
}

/* ---- BUF-026, BUF-027: the run's pools and their defaults ---------------------------------- */

struct pooler_case {
    uint32_t network_max, storage_max;
};

/* test_buffer_pooler of the original interface, run once per configuration. */
static void *buffer_pooler_root(cw_ctx *ctx, void *arg)
{
    const struct pooler_case *want = arg;
    cw_iobuf_mut net, storage;
    /* The network pool works and is cache-line aligned. */
    CWC_OK(cw_bufpool_try_alloc(cw_network_buffer_pool(ctx), 1024, &net, NULL));
    ck_assert_uint_ge(net.cap, 1024);
    ck_assert_uint_eq((uintptr_t)net.data % CW_CACHE_LINE_SIZE, 0);
    /* The storage pool works and is page aligned. */
    CWC_OK(cw_bufpool_try_alloc(cw_storage_buffer_pool(ctx), 1024, &storage, NULL));
    ck_assert_uint_ge(storage.cap, 4096);
    ck_assert_uint_eq((uintptr_t)storage.data % cw_page_size(), 0);
    /* Every class of each pool has the configured limit. */
    cw_bufpool_stats st;
    for (size_t i = 0; cw_bufpool_class_stats(cw_network_buffer_pool(ctx), i, &st) == CW_OK; i++)
        ck_assert_uint_eq(st.max_buffers, want->network_max);
    for (size_t i = 0; cw_bufpool_class_stats(cw_storage_buffer_pool(ctx), i, &st) == CW_OK; i++)
        ck_assert_uint_eq(st.max_buffers, want->storage_max);
    cw_iobuf_mut_release(&net);
    cw_iobuf_mut_release(&storage);
    return NULL;
}

CWC_CASE(buffer_pooler, "buffers", "BUF-026 BUF-027 RUN-008", CWC_REPEATED)
{
    /* The original runs a default and a custom runner on each of its two
     * runtimes; here each configuration runs as given and again with the
     * pools sized for four threads, as a multi-threaded runner sets them. */
    const struct pooler_case defaults = {4096, 64}, custom = {64, 8};
    for (int threads = 1; threads <= 4; threads += 3) {
        cw_config cfg = cwc_config();
        cfg.network_buffer_pool.parallelism = (uint32_t)threads;
        cfg.storage_buffer_pool.parallelism = (uint32_t)threads;
        cwc_run_ok(&cfg, buffer_pooler_root, (void *)&defaults);
        cfg.network_buffer_pool.max_per_class = 64;
        cfg.storage_buffer_pool.max_per_class = 8;
        cwc_run_ok(&cfg, buffer_pooler_root, (void *)&custom);
    }
}

static void *pool_of_child(cw_ctx *ctx, void *arg)
{
    (void)arg;
    return cw_network_buffer_pool(ctx);
}

static void *same_pools_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_bufpool *net = cw_network_buffer_pool(ctx), *sto = cw_storage_buffer_pool(ctx);
    ck_assert_ptr_nonnull(net);
    ck_assert_ptr_nonnull(sto);
    ck_assert_ptr_ne(net, sto);
    ck_assert_ptr_eq(cw__backend_of(net), cwc_backend);
    cw_bufpool_config cfg;
    cw_bufpool_get_config(net, &cfg);
    ck_assert_uint_eq(cfg.max_size, 2048);
    cw_handle *h = cw_spawn(cw_child(ctx, "child"), pool_of_child, NULL);
    void *theirs = NULL;
    CWC_OK(cw_join(h, &theirs));
    cw_handle_release(h);
    ck_assert_ptr_eq(theirs, net);
    ck_assert_ptr_null(cw_runtime_bufpool(ctx, 7));
    return NULL;
}

CWC_CASE(bufpool_runtime_pools, "buffers", "BUF-026 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.network_buffer_pool.max_size = 2048;
    cwc_run_ok(&cfg, same_pools_root, NULL);

    cfg.storage_buffer_pool.alignment = 3;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, same_pools_root, NULL, &res), CW_ERR_INVALID);
    ck_assert_msg(strstr(res.message, "storage_buffer_pool"), "message '%s'", res.message);
    ck_assert_msg(strstr(res.message, "BUF-019"), "message '%s'", res.message);
}

CWC_CASE(bufpool_defaults, "buffers", "BUF-027 RUN-008", CWC_REPEATED)
{
    cw_bufpool_config n, s;
    cw_bufpool_config_network(&n);
    cw_bufpool_config_storage(&s);
    size_t page = cw_page_size();
    ck_assert_uint_eq(n.min_size, 1024);
    ck_assert_uint_eq(n.max_size, 128 * 1024);
    ck_assert_uint_eq(cw_bufpool_config_classes(&n), 8);
    ck_assert_uint_eq(n.max_per_class, 4096);
    ck_assert_uint_eq(n.alignment, CW_CACHE_LINE_SIZE);
    ck_assert_uint_eq(s.min_size, page);
    ck_assert_uint_eq(s.max_size, 8 * 1024 * 1024);
    ck_assert_uint_eq(s.max_per_class, 64);
    ck_assert_uint_eq(s.alignment, page);
    if (page == 4096)
        ck_assert_uint_eq(cw_bufpool_config_classes(&s), 12);
    for (int i = 0; i < 2; i++) {
        const cw_bufpool_config *c = i ? &s : &n;
        ck_assert_uint_eq(c->pool_min_size, 0);
        ck_assert_uint_eq(c->thread_cache, CW_BUFPOOL_CACHE_AUTO);
        ck_assert_uint_eq(c->parallelism, 1);
        ck_assert(!c->prefill);
        ck_assert_ptr_null(cw_bufpool_config_check(c));
    }
    cw_config cfg;
    cw_config_default(&cfg);
    ck_assert(same_config(&cfg.network_buffer_pool, &n));
    ck_assert(same_config(&cfg.storage_buffer_pool, &s));
}
