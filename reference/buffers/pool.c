/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * pool.c - buffer pools: power-of-two size classes, each with a bounded
 * number of buffers, a locked freelist and optional per-thread caches.
 *
 * A class creates buffers on demand up to its limit and never frees them
 * while the pool lives: a buffer whose last reference goes comes back here
 * (or to the releasing thread's cache) for the next try_alloc. The pool
 * itself is freed only when its owner has released it and every buffer it
 * created is gone, so buffers may outlive both the pool's owner and the run
 * that made it. Once the owner has let go, returning buffers are freed
 * instead of parked.
 */
#include <stdlib.h>
#include <string.h>

#include "buffers/buffers.h"

/* The automatic thread cache never keeps more than this per class: enough
 * to take the lock once per burst, small enough not to strand buffers. */
#define CACHE_AUTO_MAX 64u

static atomic_uint_fast64_t next_class_id = 1; /* 0 marks an unused cache bin */

static uint32_t cache_capacity(const cw_bufpool_config *cfg)
{
    uint64_t max = cfg->max_per_class;
    if (cfg->thread_cache == 0)
        return 0;
    if (cfg->thread_cache != CW_BUFPOOL_CACHE_AUTO)
        return cfg->thread_cache < max ? cfg->thread_cache : (uint32_t)max;
    /* Half the class spread over the threads expected: the other half
     * stays in the shared freelist, reachable from every thread. */
    uint64_t p = cfg->parallelism < max ? cfg->parallelism : max;
    uint64_t n = max / (2 * p);
    return n < CACHE_AUTO_MAX ? (uint32_t)n : CACHE_AUTO_MAX;
}

static void pool_free(cw_bufpool *p)
{
    for (size_t i = 0; i < p->nclasses; i++)
        pthread_mutex_destroy(&p->classes[i].lock);
    free(p);
}

static cw_bufpool_slot *slot_new(cw_bufpool_class *cls)
{
    size_t align = cls->pool->cfg.alignment;
    if (align < sizeof(void *))
        align = sizeof(void *);
    cw_bufpool_slot *s = malloc(sizeof *s);
    void *data = NULL;
    if (!s || posix_memalign(&data, align, cls->size) != 0) {
        free(s);
        return NULL;
    }
    atomic_init(&s->own.refs, 1);
    s->own.kind = CW_OWNER_POOLED;
    s->own.base = data;
    s->own.end = (uint8_t *)data + cls->size;
    s->cls = cls;
    s->next = NULL;
    atomic_fetch_add_explicit(&cls->pool->live, 1, memory_order_relaxed);
    return s;
}

static void slot_destroy(cw_bufpool_slot *s)
{
    cw_bufpool *p = s->cls->pool;
    free(s->own.base);
    free(s);
    if (atomic_fetch_sub_explicit(&p->live, 1, memory_order_acq_rel) == 1)
        pool_free(p);
}

static void destroy_chain(cw_bufpool_slot *s)
{
    while (s) {
        cw_bufpool_slot *next = s->next;
        slot_destroy(s);
        s = next;
    }
}

void cw_class_put_chain(cw_bufpool_class *cls, cw_bufpool_slot *first, uint32_t n)
{
    if (n == 0)
        return;
    pthread_mutex_lock(&cls->lock);
    if (atomic_load_explicit(&cls->pool->closed, memory_order_relaxed)) {
        pthread_mutex_unlock(&cls->lock);
        destroy_chain(first);
        return;
    }
    cw_bufpool_slot *last = first;
    while (last->next)
        last = last->next;
    last->next = cls->free;
    cls->free = first;
    cls->nfree += n;
    pthread_mutex_unlock(&cls->lock);
}

void cw_class_put(cw_bufpool_class *cls, cw_bufpool_slot *s)
{
    s->next = NULL;
    cw_class_put_chain(cls, s, 1);
}

uint32_t cw_class_take(cw_bufpool_class *cls, uint32_t max, cw_bufpool_slot **chain)
{
    pthread_mutex_lock(&cls->lock);
    cw_bufpool_slot *first = cls->free, *last = NULL;
    uint32_t n = 0;
    for (cw_bufpool_slot *s = first; s && n < max; s = s->next) {
        last = s;
        n++;
    }
    if (n > 0) {
        cls->free = last->next;
        last->next = NULL;
        cls->nfree -= n;
    }
    pthread_mutex_unlock(&cls->lock);
    *chain = n > 0 ? first : NULL;
    return n;
}

void cw_bufpool_return(cw_bufpool_slot *s)
{
    cw_bufpool_class *cls = s->cls;
    if (cls->cache_cap > 0 && !atomic_load_explicit(&cls->pool->closed, memory_order_relaxed) &&
        cw_cache_push(cls, s))
        return;
    cw_class_put(cls, s);
}

/* A parked buffer, or a new one while the class is under its limit. */
static int class_get(cw_bufpool_class *cls, cw_bufpool_slot **out)
{
    *out = NULL;
    if (cw_class_take(cls, 1, out) == 1)
        return CW_OK;
    pthread_mutex_lock(&cls->lock);
    bool may_create = cls->created < cls->max;
    if (may_create)
        cls->created++;
    pthread_mutex_unlock(&cls->lock);
    if (!may_create) {
        atomic_fetch_add_explicit(&cls->exhausted, 1, memory_order_relaxed);
        return CW_ERR_POOL;
    }
    if (!(*out = slot_new(cls))) {
        pthread_mutex_lock(&cls->lock);
        cls->created--;
        pthread_mutex_unlock(&cls->lock);
        return CW_ERR_NOMEM;
    }
    return CW_OK;
}

/* The smallest class that holds `cap` bytes, or NULL above the largest. */
static cw_bufpool_class *class_for(cw_bufpool *p, size_t cap)
{
    size_t i = 0;
    for (size_t size = p->cfg.min_size; size < cap; size <<= 1)
        if (++i == p->nclasses)
            return NULL;
    return &p->classes[i];
}

static int prefill(cw_bufpool *p)
{
    for (size_t i = 0; i < p->nclasses; i++) {
        cw_bufpool_class *cls = &p->classes[i];
        while (cls->created < cls->max) {
            cw_bufpool_slot *s = slot_new(cls);
            if (!s)
                return CW_ERR_NOMEM;
            cls->created++;
            s->next = cls->free;
            cls->free = s;
            cls->nfree++;
        }
    }
    return CW_OK;
}

int cw_buf_pool_new(const cw_backend *b, const cw_bufpool_config *cfg, cw_bufpool **out)
{
    *out = NULL;
    if (cw_bufpool_config_check(cfg))
        return CW_ERR_INVALID;
    size_t n = cw_bufpool_config_classes(cfg);
    cw_bufpool *p = calloc(1, sizeof *p + n * sizeof p->classes[0]);
    if (!p)
        return CW_ERR_NOMEM;
    p->hdr.backend = b;
    p->cfg = *cfg;
    atomic_init(&p->live, 1);
    atomic_init(&p->closed, false);
    atomic_init(&p->oversized, 0);
    p->nclasses = n;
    uint32_t cache_cap = cache_capacity(cfg);
    for (size_t i = 0; i < n; i++) {
        cw_bufpool_class *cls = &p->classes[i];
        cls->pool = p;
        cls->size = cfg->min_size << i;
        cls->id = atomic_fetch_add_explicit(&next_class_id, 1, memory_order_relaxed);
        cls->max = cfg->max_per_class;
        cls->cache_cap = cache_cap;
        pthread_mutex_init(&cls->lock, NULL);
        atomic_init(&cls->exhausted, 0);
    }
    if (cfg->prefill && prefill(p) != CW_OK) {
        cw_buf_pool_release(p);
        return CW_ERR_NOMEM;
    }
    *out = p;
    return CW_OK;
}

void cw_buf_pool_release(cw_bufpool *p)
{
    cw_cache_flush_pool(p);
    atomic_store_explicit(&p->closed, true, memory_order_relaxed);
    for (size_t i = 0; i < p->nclasses; i++) {
        cw_bufpool_class *cls = &p->classes[i];
        pthread_mutex_lock(&cls->lock);
        cw_bufpool_slot *parked = cls->free;
        cls->free = NULL;
        cls->nfree = 0;
        pthread_mutex_unlock(&cls->lock);
        destroy_chain(parked);
    }
    if (atomic_fetch_sub_explicit(&p->live, 1, memory_order_acq_rel) == 1)
        pool_free(p);
}

int cw_buf_pool_try_alloc(cw_bufpool *p, size_t cap, cw_iobuf_mut *out, int *why)
{
    const cw_backend *b = p->hdr.backend;
    cw_mut_detach(out, b);
    if (why)
        *why = 0;
    if (cap == 0)
        return CW_OK;
    if (cap < p->cfg.pool_min_size)
        return cw_buf_mut_alloc(b, cap, p->cfg.alignment, false, out);
    cw_bufpool_class *cls = class_for(p, cap);
    if (!cls) {
        atomic_fetch_add_explicit(&p->oversized, 1, memory_order_relaxed);
        if (why)
            *why = CW_BUFPOOL_OVERSIZED;
        return CW_ERR_POOL;
    }
    cw_bufpool_slot *s = cls->cache_cap > 0 ? cw_cache_pop(cls) : NULL;
    if (!s) {
        int rc = class_get(cls, &s);
        if (rc != CW_OK) {
            if (rc == CW_ERR_POOL && why)
                *why = CW_BUFPOOL_EXHAUSTED;
            return rc;
        }
    }
    cw_mut_from_owner(out, b, &s->own);
    return CW_OK;
}

int cw_buf_pool_alloc(cw_bufpool *p, size_t cap, cw_iobuf_mut *out)
{
    int rc = cw_buf_pool_try_alloc(p, cap, out, NULL);
    if (rc == CW_ERR_POOL)
        rc = cw_buf_mut_alloc(p->hdr.backend, cap, p->cfg.alignment, false, out);
    return rc;
}

void cw_buf_pool_config(const cw_bufpool *p, cw_bufpool_config *out)
{
    *out = p->cfg;
}

int cw_buf_pool_stats(const cw_bufpool *p, size_t i, cw_bufpool_stats *out)
{
    memset(out, 0, sizeof *out);
    if (i >= p->nclasses)
        return CW_ERR_INVALID;
    cw_bufpool_class *cls = (cw_bufpool_class *)&p->classes[i];
    pthread_mutex_lock(&cls->lock);
    out->created = cls->created;
    out->idle = cls->nfree;
    pthread_mutex_unlock(&cls->lock);
    out->idle += cw_cache_count(cls);
    out->size = cls->size;
    out->max_buffers = cls->max;
    out->exhausted = atomic_load_explicit(&cls->exhausted, memory_order_relaxed);
    out->oversized = atomic_load_explicit(&p->oversized, memory_order_relaxed);
    return CW_OK;
}
