/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Unit tests for buffer pools and shared buffers used from several OS
 * threads at once (reference/buffers/). Meant to be run under
 * ThreadSanitizer as well as plainly: every test joins its threads and
 * checks the pool's books afterwards.
 */
#include <check.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buffers/buffers.h"

enum { THREADS = 8 };

/* The reference's buffers on a table of their own: nothing here runs a
 * task, so the tests need no scheduler. */
static const cw_backend table = {
    .abi_version = CW_ABI_VERSION,
    .size = sizeof(cw_backend),
    .name = "buffers",
    .buffers = &cw_buffer_entries,
};

static const cw_backend *backend(void)
{
    return &table;
}

static cw_bufpool *small_pool(uint32_t max, uint32_t thread_cache)
{
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cfg.min_size = 256;
    cfg.max_size = 4096;
    cfg.alignment = 64;
    cfg.max_per_class = max;
    cfg.thread_cache = thread_cache;
    cfg.parallelism = THREADS;
    cw_bufpool *p;
    ck_assert_int_eq(cw_bufpool_new(backend(), &cfg, &p), CW_OK);
    return p;
}

static void run_threads(void *(*fn)(void *), void *arg)
{
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, fn, arg), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
}

/* Every buffer parked again: nothing leaked, nothing returned twice. */
static void assert_all_idle(cw_bufpool *p)
{
    cw_bufpool_stats st;
    for (size_t i = 0; cw_bufpool_class_stats(p, i, &st) == CW_OK; i++) {
        ck_assert_uint_le(st.created, st.max_buffers);
        ck_assert_uint_eq(st.idle, st.created);
    }
}

/* ---- alloc, fill, freeze, share, release ---------------------------------------- */

struct churn {
    cw_bufpool *pool;
    atomic_uint next_id;
    atomic_uint failures;
};

static void *churn_thread(void *arg)
{
    struct churn *c = arg;
    unsigned id = atomic_fetch_add(&c->next_id, 1);
    uint32_t x = id * 2654435761u + 1;
    for (int i = 0; i < 3000; i++) {
        x = x * 1664525u + 1013904223u;
        size_t size = (size_t)1 << (8 + (x >> 28) % 5); /* 256 .. 4096 */
        cw_iobuf_mut m;
        if (cw_bufpool_try_alloc(c->pool, size, &m, NULL) != CW_OK) {
            atomic_fetch_add(&c->failures, 1);
            continue;
        }
        uint8_t stamp = (uint8_t)(id * 31 + (unsigned)i);
        memset(m.data, stamp, m.cap); /* a buffer handed to two threads shows here */
        m.len = m.cap;
        cw_iobuf frozen, copy, part;
        cw_iobuf_mut_freeze(&m, &frozen);
        copy = cw_iobuf_clone(&frozen);
        ck_assert_int_eq(cw_iobuf_slice(&copy, 1, copy.len - 1, &part), CW_OK);
        cw_iobuf_release(&frozen);
        for (size_t k = 0; k < part.len; k++)
            if (part.data[k] != stamp)
                ck_abort_msg("buffer shared by two allocations");
        cw_iobuf_release(&copy);
        cw_iobuf_release(&part);
    }
    return NULL;
}

START_TEST(test_churn_across_threads)
{
    struct churn c = {.pool = small_pool(64, CW_BUFPOOL_CACHE_AUTO)};
    run_threads(churn_thread, &c);
    assert_all_idle(c.pool); /* thread exit flushed every cache */
    cw_bufpool_release(c.pool);
}
END_TEST

START_TEST(test_churn_without_thread_cache)
{
    struct churn c = {.pool = small_pool(16, 0)};
    run_threads(churn_thread, &c);
    assert_all_idle(c.pool);
    cw_bufpool_release(c.pool);
}
END_TEST

/* ---- made on one thread, released on another ------------------------------------ */

enum { QUEUE = 32, HANDOFFS = 4000 };

struct handoff {
    cw_bufpool *pool;
    pthread_mutex_t lock;
    pthread_cond_t cond;
    cw_iobuf q[QUEUE];
    size_t head, n;
    atomic_uint producers, consumed;
};

static void put(struct handoff *h, cw_iobuf *b)
{
    pthread_mutex_lock(&h->lock);
    while (h->n == QUEUE)
        pthread_cond_wait(&h->cond, &h->lock);
    h->q[(h->head + h->n++) % QUEUE] = *b;
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
}

static bool take(struct handoff *h, cw_iobuf *b)
{
    pthread_mutex_lock(&h->lock);
    while (h->n == 0 && atomic_load(&h->consumed) < HANDOFFS)
        pthread_cond_wait(&h->cond, &h->lock);
    bool got = h->n > 0;
    if (got) {
        *b = h->q[h->head];
        h->head = (h->head + 1) % QUEUE;
        h->n--;
        atomic_fetch_add(&h->consumed, 1);
    }
    pthread_cond_broadcast(&h->cond);
    pthread_mutex_unlock(&h->lock);
    return got;
}

static void *handoff_thread(void *arg)
{
    struct handoff *h = arg;
    if (atomic_fetch_add(&h->producers, 1) % 2 == 0) {
        for (int i = 0; i < HANDOFFS / (THREADS / 2); i++) {
            cw_iobuf_mut m;
            ck_assert_int_eq(cw_bufpool_alloc(h->pool, 1000, &m), CW_OK);
            uint32_t v = (uint32_t)i;
            cw_iobuf_mut_put(&m, &v, sizeof v);
            cw_iobuf b;
            cw_iobuf_mut_freeze(&m, &b);
            put(h, &b);
        }
        return NULL;
    }
    cw_iobuf b;
    while (take(h, &b)) {
        ck_assert_uint_eq(b.len, sizeof(uint32_t));
        cw_iobuf_release(&b); /* lands in this thread's cache */
    }
    return NULL;
}

START_TEST(test_release_on_another_thread)
{
    struct handoff h = {.pool = small_pool(THREADS * QUEUE, CW_BUFPOOL_CACHE_AUTO)};
    pthread_mutex_init(&h.lock, NULL);
    pthread_cond_init(&h.cond, NULL);
    run_threads(handoff_thread, &h);
    ck_assert_uint_eq(atomic_load(&h.consumed), HANDOFFS);
    assert_all_idle(h.pool);
    cw_bufpool_release(h.pool);
    pthread_cond_destroy(&h.cond);
    pthread_mutex_destroy(&h.lock);
}
END_TEST

/* ---- the class limit holds under contention --------------------------------------- */

struct limit {
    cw_bufpool *pool;
    atomic_int out, most;
};

static void *limit_thread(void *arg)
{
    struct limit *l = arg;
    for (int i = 0; i < 5000; i++) {
        cw_iobuf_mut m;
        int why = 0;
        int rc = cw_bufpool_try_alloc(l->pool, 300, &m, &why);
        if (rc != CW_OK) {
            ck_assert_int_eq(rc, CW_ERR_POOL);
            ck_assert_int_eq(why, CW_BUFPOOL_EXHAUSTED);
            continue;
        }
        int now = atomic_fetch_add(&l->out, 1) + 1;
        int seen = atomic_load(&l->most);
        while (now > seen && !atomic_compare_exchange_weak(&l->most, &seen, now))
            ;
        atomic_fetch_sub(&l->out, 1);
        cw_iobuf_mut_release(&m);
    }
    return NULL;
}

START_TEST(test_class_limit_under_contention)
{
    struct limit l = {.pool = small_pool(3, 0)};
    run_threads(limit_thread, &l);
    ck_assert_int_le(atomic_load(&l.most), 3);
    /* Whatever the threads did, the class now has its three buffers and
     * refuses a fourth. */
    cw_iobuf_mut m[4];
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(cw_bufpool_try_alloc(l.pool, 300, &m[i], NULL), CW_OK);
    ck_assert_int_eq(cw_bufpool_try_alloc(l.pool, 300, &m[3], NULL), CW_ERR_POOL);
    cw_bufpool_stats st;
    ck_assert_int_eq(cw_bufpool_class_stats(l.pool, 1, &st), CW_OK); /* the 512-byte class */
    ck_assert_uint_eq(st.created, 3);
    ck_assert_uint_gt(st.exhausted, 0);
    for (int i = 0; i < 3; i++)
        cw_iobuf_mut_release(&m[i]);
    cw_bufpool_release(l.pool);
}
END_TEST

/* ---- buffers outlive their pool ---------------------------------------------------- */

struct outlive {
    cw_bufpool *pool;
    pthread_barrier_t allocated, released;
};

static void *outlive_thread(void *arg)
{
    struct outlive *o = arg;
    cw_iobuf_mut m[4];
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(cw_bufpool_try_alloc(o->pool, 4096, &m[i], NULL), CW_OK);
    pthread_barrier_wait(&o->allocated);
    pthread_barrier_wait(&o->released); /* the owner let go of the pool meanwhile */
    for (int i = 0; i < 4; i++) {
        cw_iobuf_mut_put(&m[i], "late", 4);
        cw_iobuf b;
        cw_iobuf_mut_freeze(&m[i], &b);
        cw_iobuf c = cw_iobuf_clone(&b);
        cw_iobuf_release(&b);
        ck_assert(cw_iobuf_equal_bytes(&c, "late", 4));
        cw_iobuf_release(&c); /* the last buffer to go frees the pool */
    }
    return NULL;
}

START_TEST(test_buffers_outlive_pool)
{
    struct outlive o = {.pool = small_pool(64, CW_BUFPOOL_CACHE_AUTO)};
    pthread_barrier_init(&o.allocated, NULL, THREADS + 1);
    pthread_barrier_init(&o.released, NULL, THREADS + 1);
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&t[i], NULL, outlive_thread, &o), 0);
    pthread_barrier_wait(&o.allocated);
    cw_bufpool_release(o.pool);
    pthread_barrier_wait(&o.released);
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    pthread_barrier_destroy(&o.allocated);
    pthread_barrier_destroy(&o.released);
}
END_TEST

/* ---- one shared buffer, many releasing threads --------------------------------------- */

struct shared {
    cw_iobuf copies[THREADS];
    atomic_int next;
};

static atomic_int adopted_releases;

static void count_release(void *data, void *arg)
{
    (void)arg;
    free(data);
    atomic_fetch_add(&adopted_releases, 1);
}

static void *share_thread(void *arg)
{
    struct shared *s = arg;
    cw_iobuf mine = s->copies[atomic_fetch_add(&s->next, 1)];
    for (int i = 0; i < 1000; i++) {
        cw_iobuf extra = cw_iobuf_clone(&mine), head;
        ck_assert_int_eq(cw_iobuf_split_to(&extra, 3, &head), CW_OK);
        cw_iobuf_release(&head);
        cw_iobuf_release(&extra);
    }
    cw_iobuf_release(&mine);
    return NULL;
}

START_TEST(test_last_release_runs_once)
{
    for (int round = 0; round < 50; round++) {
        atomic_store(&adopted_releases, 0);
        char *bytes = malloc(16);
        memcpy(bytes, "shared-bytes-16b", 16);
        struct shared s = {.next = 0};
        ck_assert_int_eq(cw_iobuf_adopt(backend(), bytes, 16, count_release, NULL, &s.copies[0]),
                         CW_OK);
        for (int i = 1; i < THREADS; i++)
            s.copies[i] = cw_iobuf_clone(&s.copies[0]);
        run_threads(share_thread, &s);
        ck_assert_int_eq(atomic_load(&adopted_releases), 1);
    }
}
END_TEST

int main(void)
{
    Suite *s = suite_create("pool_threads");
    TCase *tc = tcase_create("pool_threads");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, test_churn_across_threads);
    tcase_add_test(tc, test_churn_without_thread_cache);
    tcase_add_test(tc, test_release_on_another_thread);
    tcase_add_test(tc, test_class_limit_under_contention);
    tcase_add_test(tc, test_buffers_outlive_pool);
    tcase_add_test(tc, test_last_release_runs_once);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
