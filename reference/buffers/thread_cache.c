/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * thread_cache.c - per-thread caches of pooled buffers.
 *
 * Each thread has a small direct-mapped table of bins, one size class per
 * bin, chosen by the class's process-unique id. A bin is a LIFO chain of
 * parked slots, so the buffer reused next is the one touched last. A bin
 * that misses refills half its capacity from the class under one lock, and
 * a full bin spills its older half the same way. When two classes meet in
 * one bin, the one there is flushed back to its class: correct, only
 * slower. A thread's bins are flushed when it exits, and a pool's owner
 * flushes its own thread's bins when it releases the pool.
 *
 * Only the owning thread touches its bins. A bin holding slots keeps their
 * pool alive (each slot counts in pool->live), so its class pointer is
 * valid exactly while it is non-empty; an empty bin is never followed.
 */
#include <stdlib.h>

#include "buffers/buffers.h"

#define BINS 16 /* a power of two */

typedef struct cw_bin {
    uint64_t id; /* the class's id; 0 when unused */
    cw_bufpool_class *cls;
    cw_bufpool_slot *head;
    uint32_t n;
} cw_bin;

typedef struct cw_thread_cache {
    cw_bin bin[BINS];
} cw_thread_cache;

/* Every pool alloc and return reads these: the initial-exec model makes
 * that a plain load even in the shared library (two words of static TLS). */
#define CW_TLS _Thread_local __attribute__((tls_model("initial-exec")))

static CW_TLS cw_thread_cache *mine;
static CW_TLS bool gone; /* torn down: this thread uses the classes directly */
static pthread_key_t key;
static pthread_once_t key_once = PTHREAD_ONCE_INIT;
static bool key_ok;

static void flush_bin(cw_bin *bin)
{
    if (bin->n > 0)
        cw_class_put_chain(bin->cls, bin->head, bin->n);
    bin->head = NULL;
    bin->n = 0;
}

static void thread_exit(void *arg)
{
    cw_thread_cache *c = arg;
    for (size_t i = 0; i < BINS; i++)
        flush_bin(&c->bin[i]);
    mine = NULL;
    gone = true; /* pool calls from later destructors bypass the cache */
    free(c);
}

static void make_key(void)
{
    key_ok = pthread_key_create(&key, thread_exit) == 0;
}

static cw_thread_cache *cache(void)
{
    if (mine)
        return mine;
    if (gone)
        return NULL;
    pthread_once(&key_once, make_key);
    if (!key_ok)
        return NULL;
    cw_thread_cache *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    if (pthread_setspecific(key, c) != 0) {
        free(c);
        return NULL;
    }
    return mine = c;
}

static cw_bin *bin_for(cw_bufpool_class *cls)
{
    cw_thread_cache *c = cache();
    if (!c)
        return NULL;
    cw_bin *bin = &c->bin[cls->id & (BINS - 1)];
    if (bin->id != cls->id) {
        flush_bin(bin);
        bin->id = cls->id;
        bin->cls = cls;
    }
    return bin;
}

cw_bufpool_slot *cw_cache_pop(cw_bufpool_class *cls)
{
    cw_bin *bin = bin_for(cls);
    if (!bin)
        return NULL;
    if (bin->n == 0) {
        uint32_t want = cls->cache_cap / 2 > 0 ? cls->cache_cap / 2 : 1;
        bin->n = cw_class_take(cls, want, &bin->head);
        if (bin->n == 0)
            return NULL;
    }
    cw_bufpool_slot *s = bin->head;
    bin->head = s->next;
    bin->n--;
    s->next = NULL;
    return s;
}

bool cw_cache_push(cw_bufpool_class *cls, cw_bufpool_slot *s)
{
    cw_bin *bin = bin_for(cls);
    if (!bin)
        return false;
    if (bin->n >= cls->cache_cap) {
        uint32_t keep = cls->cache_cap / 2;
        cw_bufpool_slot **at = &bin->head;
        for (uint32_t i = 0; i < keep; i++)
            at = &(*at)->next;
        cw_bufpool_slot *spill = *at;
        *at = NULL;
        cw_class_put_chain(cls, spill, bin->n - keep);
        bin->n = keep;
    }
    s->next = bin->head;
    bin->head = s;
    bin->n++;
    return true;
}

void cw_cache_flush_pool(cw_bufpool *pool)
{
    if (!mine)
        return;
    for (size_t i = 0; i < BINS; i++) {
        cw_bin *bin = &mine->bin[i];
        if (bin->n > 0 && bin->cls->pool == pool)
            flush_bin(bin);
    }
}

uint32_t cw_cache_count(const cw_bufpool_class *cls)
{
    if (!mine)
        return 0;
    const cw_bin *bin = &mine->bin[cls->id & (BINS - 1)];
    return bin->id == cls->id ? bin->n : 0;
}
