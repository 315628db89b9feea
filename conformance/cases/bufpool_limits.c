/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * bufpool_limits.c - pools at their edges (spec/12-buffers.md): prefill
 * (BUF-032), a buffer parked by a thread that has exited (BUF-020,
 * BUF-025), the most a living thread keeps parked (BUF-025), an empty
 * buffer dropped by a list or a builder giving its reference back
 * (BUF-031, BUF-021), a buffer released by a thread-local destructor
 * (BUF-025), and a builder refusing a buffer of another backend
 * (BUF-017).
 */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "cases/buffers.h"

static cw_bufpool_config one_class(size_t size, uint32_t max, uint32_t thread_cache)
{
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cfg.min_size = cfg.max_size = size;
    cfg.alignment = 64;
    cfg.pool_min_size = 0;
    cfg.max_per_class = max;
    cfg.thread_cache = thread_cache;
    cfg.prefill = false;
    return cfg;
}

static cw_bufpool_stats class0(cw_bufpool *p)
{
    cw_bufpool_stats st;
    ck_assert_int_eq(cw_bufpool_class_stats(p, 0, &st), CW_OK);
    return st;
}

CWC_CASE(bufpool_prefill_creates_everything, "buffers", "BUF-032 BUF-020 RUN-008", CWC_REPEATED)
{
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cfg.min_size = 64;
    cfg.max_size = 1024; /* five classes */
    cfg.alignment = 64;
    cfg.max_per_class = 3;
    cfg.thread_cache = 0;
    cfg.prefill = true;
    cw_bufpool *p;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &p), CW_OK);
    cw_bufpool_stats st;
    size_t i = 0;
    for (; cw_bufpool_class_stats(p, i, &st) == CW_OK; i++) {
        ck_assert_uint_eq(st.created, 3);
        ck_assert_uint_eq(st.idle, 3);
    }
    ck_assert_uint_eq(i, 5);
    cw_iobuf_mut m[3];
    for (int k = 0; k < 3; k++)
        ck_assert_int_eq(cw_bufpool_try_alloc(p, 64, &m[k], NULL), CW_OK);
    ck_assert_uint_eq(class0(p).created, 3); /* taken, not made */
    for (int k = 0; k < 3; k++)
        cw_iobuf_mut_release(&m[k]);
    cw_bufpool_release(p);
}

CWC_CASE(bufpool_prefill_beyond_memory, "buffers", "BUF-032", 0)
{
    /* 2^20 buffers of 2^40 bytes: no machine has that much memory. */
    cw_bufpool_config cfg = one_class((size_t)1 << 40, 1u << 20, 0);
    cfg.prefill = true;
    cw_bufpool *p = (cw_bufpool *)&cfg; /* must come back NULL */
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &p), CW_ERR_NOMEM);
    ck_assert_ptr_null(p);
}

static void *alloc_release(void *arg)
{
    cw_bufpool *p = arg;
    cw_iobuf_mut m;
    if (cw_bufpool_try_alloc(p, 256, &m, NULL) == CW_OK)
        cw_iobuf_mut_release(&m); /* parked in this thread's cache, if any */
    return NULL;
}

/* The buffer a thread parked goes back to the pool when the thread exits,
 * and the next allocation anywhere takes it rather than make another. */
static void reuse_after_exit(uint32_t thread_cache)
{
    cw_bufpool_config cfg = one_class(256, 4, thread_cache);
    cw_bufpool *p;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &p), CW_OK);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, alloc_release, p), 0);
    pthread_join(t, NULL);
    ck_assert_uint_eq(class0(p).created, 1);
    cw_iobuf_mut m;
    ck_assert_int_eq(cw_bufpool_try_alloc(p, 256, &m, NULL), CW_OK);
    ck_assert_msg(class0(p).created == 1,
                  "thread_cache %u: a parked buffer was left and a new one made", thread_cache);
    cw_iobuf_mut_release(&m);
    cw_bufpool_release(p);
}

CWC_CASE(bufpool_reuse_after_thread_exit, "buffers", "BUF-020 BUF-025 RUN-008", CWC_REPEATED)
{
    reuse_after_exit(0);
    reuse_after_exit(1);
    reuse_after_exit(2);
    reuse_after_exit(4);
}

/* A buffer released by a thread-local destructor, as a thread of the
 * program holding one in its thread-local state does when it exits: the
 * backend's own per-thread state may be gone by then, and the buffer still
 * goes back to the pool [BUF-025, BUF-020]. */
static pthread_key_t held_key;

static void release_held(void *arg)
{
    cw_iobuf_mut_release(arg);
    free(arg);
}

static void *hold_until_exit(void *arg)
{
    cw_bufpool *p = arg;
    cw_iobuf_mut parked, *held = malloc(sizeof *held);
    if (!held)
        return NULL;
    if (cw_bufpool_try_alloc(p, 256, held, NULL) != CW_OK) {
        free(held);
        return NULL;
    }
    if (cw_bufpool_try_alloc(p, 256, &parked, NULL) == CW_OK)
        cw_iobuf_mut_release(&parked); /* this thread's cache, if any, now holds one */
    pthread_setspecific(held_key, held);
    return NULL;
}

static void release_at_exit(uint32_t thread_cache)
{
    cw_bufpool_config cfg = one_class(256, 4, thread_cache);
    cw_bufpool *p;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &p), CW_OK);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, hold_until_exit, p), 0);
    pthread_join(t, NULL);
    cw_iobuf_mut m[4];
    for (int i = 0; i < 4; i++)
        ck_assert_msg(cw_bufpool_try_alloc(p, 256, &m[i], NULL) == CW_OK,
                      "thread_cache %u: buffer %d of 4 refused after the thread exited",
                      thread_cache, i + 1);
    for (int i = 0; i < 4; i++)
        cw_iobuf_mut_release(&m[i]);
    cw_bufpool_release(p);
}

CWC_CASE(bufpool_release_in_thread_destructor, "buffers", "BUF-020 BUF-025 RUN-008", CWC_REPEATED)
{
    /* The key is made after a pool was used on this thread, so that where
     * keys' destructors run in the order of their making (glibc), this one
     * runs after any the backend made for its caches. */
    cw_bufpool_config cfg = one_class(256, 4, 4);
    cw_bufpool *p;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &p), CW_OK);
    alloc_release(p);
    cw_bufpool_release(p);
    ck_assert_int_eq(pthread_key_create(&held_key, release_held), 0);
    release_at_exit(0);
    release_at_exit(1);
    release_at_exit(4);
    pthread_key_delete(held_key);
}

/* A thread that used every class of a pool of eighteen, twice each (the
 * second buffer may come from its cache), writing each whole: however the
 * backend files classes in its caches, every buffer has the room asked
 * for [BUF-020], and once the thread exited every buffer is back, so each
 * class gives its whole max_per_class again [BUF-025]. */
enum { MANY_CLASSES = 18 };

static void *touch_every_class(void *arg)
{
    cw_bufpool *p = arg;
    for (int round = 0; round < 2; round++)
        for (size_t size = 64, i = 0; i < MANY_CLASSES; i++, size <<= 1) {
            cw_iobuf_mut m;
            if (cw_bufpool_try_alloc(p, size, &m, NULL) != CW_OK)
                continue;
            if (m.cap < size) { /* checked by the case's thread, after the join */
                cw_iobuf_mut_release(&m);
                return (void *)size;
            }
            memset(m.data, 0x5a, size);
            cw_iobuf_mut_release(&m);
        }
    return NULL;
}

CWC_CASE(bufpool_every_class_back_after_exit, "buffers", "BUF-020 BUF-025 RUN-008", CWC_REPEATED)
{
    cw_bufpool_config cfg = one_class(64, 2, 2);
    cfg.max_size = (size_t)64 << (MANY_CLASSES - 1);
    cw_bufpool *p;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &p), CW_OK);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, touch_every_class, p), 0);
    void *short_of = NULL;
    pthread_join(t, &short_of);
    ck_assert_msg(!short_of, "a buffer of %zu bytes asked for came with less room",
                  (size_t)short_of);
    for (size_t size = 64, i = 0; i < MANY_CLASSES; i++, size <<= 1) {
        cw_iobuf_mut m[2];
        for (int k = 0; k < 2; k++)
            ck_assert_msg(cw_bufpool_try_alloc(p, size, &m[k], NULL) == CW_OK,
                          "class of %zu bytes: buffer %d of 2 refused after the thread exited",
                          size, k + 1);
        cw_iobuf_mut_release(&m[0]);
        cw_iobuf_mut_release(&m[1]);
    }
    cw_bufpool_release(p);
}

/* A thread that parked every buffer of a class and still lives. */
enum { PARKED_MAX = 8 };

typedef struct parker {
    cw_bufpool *pool;
    int taken;            /* buffers the thread got */
    pthread_mutex_t lock; /* guards parked and done */
    pthread_cond_t cond;
    bool parked, done;
} parker;

static void parker_set(parker *k, bool *flag)
{
    pthread_mutex_lock(&k->lock);
    *flag = true;
    pthread_cond_broadcast(&k->cond);
    pthread_mutex_unlock(&k->lock);
}

static void parker_wait(parker *k, const bool *flag)
{
    pthread_mutex_lock(&k->lock);
    while (!*flag)
        pthread_cond_wait(&k->cond, &k->lock);
    pthread_mutex_unlock(&k->lock);
}

static void *park_all(void *arg)
{
    parker *k = arg;
    cw_iobuf_mut m[PARKED_MAX];
    int taken = 0;
    while (taken < PARKED_MAX && cw_bufpool_try_alloc(k->pool, 256, &m[taken], NULL) == CW_OK)
        taken++;
    for (int i = 0; i < taken; i++)
        cw_iobuf_mut_release(&m[i]);
    k->taken = taken;
    parker_set(k, &k->parked);
    parker_wait(k, &k->done); /* alive, its cache kept, until the check is made */
    return NULL;
}

/* A thread keeps at most `thread_cache` buffers of a class [BUF-025]: of
 * the PARKED_MAX buffers a living thread released, another thread can take
 * all but that many (a pool without caches gives it all of them). */
static void cache_bound(uint32_t thread_cache)
{
    cw_bufpool_config cfg = one_class(256, PARKED_MAX, thread_cache);
    cfg.parallelism = 1;
    parker k = {.taken = 0, .parked = false, .done = false};
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &k.pool), CW_OK);
    pthread_mutex_init(&k.lock, NULL);
    pthread_cond_init(&k.cond, NULL);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, park_all, &k), 0);
    parker_wait(&k, &k.parked);
    cw_iobuf_mut m[PARKED_MAX];
    int got = 0;
    while (got < PARKED_MAX && cw_bufpool_try_alloc(k.pool, 256, &m[got], NULL) == CW_OK)
        got++;
    parker_set(&k, &k.done);
    pthread_join(t, NULL);
    for (int i = 0; i < got; i++)
        cw_iobuf_mut_release(&m[i]);
    cw_bufpool_release(k.pool);
    pthread_cond_destroy(&k.cond);
    pthread_mutex_destroy(&k.lock);
    ck_assert_int_eq(k.taken, PARKED_MAX);
    ck_assert_msg(got >= PARKED_MAX - (int)thread_cache,
                  "thread_cache %u: another thread got %d of the %d buffers a living thread "
                  "released: that thread kept more than %u",
                  thread_cache, got, PARKED_MAX, thread_cache);
}

CWC_CASE(bufpool_thread_cache_bound, "buffers", "BUF-025 RUN-008", CWC_REPEATED)
{
    cache_bound(0);
    cache_bound(1);
    cache_bound(3);
}

/* An empty frozen buffer made from a pooled one: frozen with nothing
 * written (way 0), or a slice of none of its bytes (way 1). Whether it
 * still refers to the pooled buffer is the backend's choice; either way,
 * once dropped and released it must not keep the buffer from the pool. */
static void empty_view(cw_bufpool *p, int way, cw_iobuf *out)
{
    cw_iobuf_mut m;
    ck_assert_int_eq(cw_bufpool_try_alloc(p, 256, &m, NULL), CW_OK);
    if (way == 0) {
        cw_iobuf_mut_freeze(&m, out);
        return;
    }
    ck_assert_int_eq(cw_iobuf_mut_put(&m, "abc", 3), CW_OK);
    cw_iobuf whole;
    cw_iobuf_mut_freeze(&m, &whole);
    ck_assert_int_eq(cw_iobuf_slice(&whole, 3, 3, out), CW_OK);
    cw_iobuf_release(&whole);
}

CWC_CASE(buffer_dropped_empty_gives_back, "buffers", "BUF-031 BUF-021 RUN-008", CWC_REPEATED)
{
    cw_bufpool_config cfg = one_class(256, 1, 0);
    cw_bufpool *p, *inline_pool; /* the builder's inline buffer comes from the second */
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &p), CW_OK);
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &inline_pool), CW_OK);
    for (int how = 0; how < 6; how++) {
        cw_iobuf e;
        empty_view(p, how / 3, &e);
        cw_iobufs *l = cw_iobufs_new(cwc_backend);
        cw_iobufs_builder *b = cw_iobufs_builder_new(inline_pool, 8);
        ck_assert_ptr_nonnull(l);
        ck_assert_ptr_nonnull(b);
        int rc = how % 3 == 0   ? cw_iobufs_append(l, &e)
                 : how % 3 == 1 ? cw_iobufs_prepend(l, &e)
                                : cw_iobufs_builder_push(b, &e);
        ck_assert_int_eq(rc, CW_OK);
        cw_iobuf_release(&e); /* what the drop left is released again: a no-op */
        ck_assert_msg(class0(p).idle == 1, "way %d: the dropped buffer kept its reference", how);
        cw_iobufs_release(l);
        cw_iobufs_builder_release(b);
    }
    cw_bufpool_release(p);
    cw_bufpool_release(inline_pool);
}

CWC_CASE(buffer_builder_refuses_another_backend, "buffers", "BUF-017 RUN-008", CWC_REPEATED)
{
    cw_backend other = *cwc_backend;
    cw_iobuf alien;
    ck_assert_int_eq(cw_iobuf_copy(&other, "alien", 5, &alien), CW_OK);
    cw_bufpool_config cfg = one_class(256, 1, 0);
    cw_bufpool *p;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &p), CW_OK);
    cw_iobufs_builder *b = cw_iobufs_builder_new(p, 8);
    ck_assert_ptr_nonnull(b);
    ck_assert_int_eq(cw_iobufs_builder_push(b, &alien), CW_ERR_INVALID);
    ck_assert_uint_eq(alien.len, 5);
    ck_assert(memcmp(alien.data, "alien", 5) == 0);
    cw_iobuf_release(&alien);
    cw_iobufs_builder_release(b);
    cw_bufpool_release(p);
}
