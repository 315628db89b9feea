/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * buffers.h - private to the reference's buffers and pools.
 *
 * Every non-empty buffer points at an owner record (cw_owner) that keeps its
 * bytes alive. The record is always the first member of something larger:
 * the tail of a heap allocation, a box around adopted bytes, or a pool
 * slot. Its reference count rests at 1 while there is one handle (and is
 * not touched at all by a cw_iobuf_mut, which is unique by definition), so
 * "unique" is a single load and the last release needs no write. Empty
 * views have no owner at all: they never keep memory alive (spec
 * [BUF-007]).
 *
 * Threads: a handle is used by one thread at a time, but the handles of one
 * owner may be cloned and released on many threads at once; the count is
 * atomic and the final release happens exactly once. Pools lock per size
 * class and keep optional per-thread caches (thread_cache.c).
 */
#ifndef CW_BUFFERS_H
#define CW_BUFFERS_H

#include <stdatomic.h>

#include "core/ext.h"

/* ---- Owner records (owner.c) ------------------------------------------------ */

enum cw_owner_kind {
    CW_OWNER_HEAP = 1,    /* one malloc: the bytes, then this record */
    CW_OWNER_ADOPTED = 2, /* the caller's bytes and a release callback */
    CW_OWNER_POOLED = 3,  /* a slot of a pool's size class */
};

typedef struct cw_owner {
    atomic_size_t refs; /* handles on these bytes; 1 when there is one */
    uint8_t kind;       /* enum cw_owner_kind */
    uint8_t *base;      /* the first usable byte */
    uint8_t *end;       /* one past the last usable byte */
} cw_owner;

/* The data pointer of every empty handle: never NULL, never written. */
extern uint8_t cw_buf_none[1];

/* A heap buffer of `cap` usable bytes at a multiple of `align`, zeroed on
 * request. CW_ERR_NOMEM when it cannot be had. The record is the caller's,
 * with one reference. */
int cw_owner_heap(size_t cap, size_t align, bool zeroed, cw_owner **out);
/* A record for adopted bytes; NULL when memory is short. */
cw_owner *cw_owner_adopted(void *data, size_t len, cw_release_fn release, void *arg);
void cw_owner_ref(cw_owner *o);
/* Drop one reference; the last one frees the bytes (or parks them in
 * their pool). */
void cw_owner_unref(cw_owner *o);
/* Free (or park) the bytes of a record whose one reference is being given
 * up: what cw_owner_unref does at the end, and what a cw_iobuf_mut does. */
void cw_owner_free(cw_owner *o);
/* True when the caller holds the only reference. */
bool cw_owner_unique(cw_owner *o);
/* True for records whose bytes may become mutable again. */
bool cw_owner_native(const cw_owner *o);

/* ---- Handles (iobuf.c, iobuf_mut.c) -------------------------------------- */

static inline void cw_buf_detach(cw_iobuf *buf, const cw_backend *b)
{
    buf->hdr.backend = b;
    buf->data = cw_buf_none;
    buf->len = 0;
    buf->owner = NULL;
}

static inline void cw_mut_detach(cw_iobuf_mut *m, const cw_backend *b)
{
    m->hdr.backend = b;
    m->data = cw_buf_none;
    m->len = 0;
    m->cap = 0;
    m->owner = NULL;
}

/* A mutable handle on the whole of `o` (its one reference moves in). */
static inline void cw_mut_from_owner(cw_iobuf_mut *m, const cw_backend *b, cw_owner *o)
{
    m->hdr.backend = b;
    m->data = o->base;
    m->len = 0;
    m->cap = (size_t)(o->end - o->base);
    m->owner = o;
}

int cw_buf_iobuf_copy(const cw_backend *b, const void *src, size_t len, cw_iobuf *out);
int cw_buf_iobuf_adopt(const cw_backend *b, void *data, size_t len, cw_release_fn release,
                       void *arg, cw_iobuf *out);
void cw_buf_iobuf_static(const cw_backend *b, const void *data, size_t len, cw_iobuf *out);
void cw_buf_iobuf_clone(const cw_iobuf *buf, cw_iobuf *out);
void cw_buf_iobuf_release(cw_iobuf *buf);
int cw_buf_iobuf_slice(const cw_iobuf *buf, size_t start, size_t end, cw_iobuf *out);
int cw_buf_iobuf_split_to(cw_iobuf *buf, size_t at, cw_iobuf *head);
int cw_buf_iobuf_advance(cw_iobuf *buf, size_t n);
bool cw_buf_iobuf_try_into_mut(cw_iobuf *buf, cw_iobuf_mut *out);
bool cw_buf_iobuf_is_pooled(const cw_iobuf *buf);

int cw_buf_mut_alloc(const cw_backend *b, size_t cap, size_t align, bool zeroed, cw_iobuf_mut *out);
void cw_buf_mut_release(cw_iobuf_mut *m);
int cw_buf_mut_advance(cw_iobuf_mut *m, size_t n);
void cw_buf_mut_freeze(cw_iobuf_mut *m, cw_iobuf *out);
bool cw_buf_mut_is_pooled(const cw_iobuf_mut *m);

/* ---- Lists (iobufs.c, iobufs_mut.c) and the builder (builder.c) ----------- */

struct cw_iobufs {
    cw_object hdr;
    cw_iobuf *chunk; /* chunk[head .. head + n), none empty */
    size_t head, n, cap;
    size_t len; /* the sum of the chunks' lengths */
};

struct cw_iobufs_mut {
    cw_object hdr;
    cw_iobuf_mut *chunk; /* chunk[0 .. n), each with capacity */
    size_t n, cap;
};

/* Room for `extra` more chunks at the end, so that what follows cannot fail. */
int cw_bufs_reserve(cw_iobufs *l, size_t extra);
/* Append a non-empty chunk to a list with room reserved. */
void cw_bufs_push(cw_iobufs *l, cw_iobuf *buf);

cw_iobufs *cw_buf_bufs_new(const cw_backend *b);
void cw_buf_bufs_release(cw_iobufs *l);
int cw_buf_bufs_append(cw_iobufs *l, cw_iobuf *buf);
int cw_buf_bufs_prepend(cw_iobufs *l, cw_iobuf *buf);
size_t cw_buf_bufs_len(const cw_iobufs *l);
size_t cw_buf_bufs_chunk_count(const cw_iobufs *l);
const cw_iobuf *cw_buf_bufs_chunk(const cw_iobufs *l, size_t i);
cw_iobufs *cw_buf_bufs_clone(const cw_iobufs *l);
int cw_buf_bufs_split_to(cw_iobufs *l, size_t at, cw_iobufs **head);
int cw_buf_bufs_advance(cw_iobufs *l, size_t n);
int cw_buf_bufs_coalesce(cw_iobufs *l, cw_bufpool *pool, cw_iobuf *out);

cw_iobufs_mut *cw_buf_mbufs_new(const cw_backend *b);
void cw_buf_mbufs_release(cw_iobufs_mut *l);
int cw_buf_mbufs_append(cw_iobufs_mut *l, cw_iobuf_mut *m);
size_t cw_buf_mbufs_len(const cw_iobufs_mut *l);
size_t cw_buf_mbufs_capacity(const cw_iobufs_mut *l);
size_t cw_buf_mbufs_spare(const cw_iobufs_mut *l);
size_t cw_buf_mbufs_chunk_count(const cw_iobufs_mut *l);
const cw_iobuf_mut *cw_buf_mbufs_chunk(const cw_iobufs_mut *l, size_t i);
int cw_buf_mbufs_put(cw_iobufs_mut *l, const void *src, size_t n);
int cw_buf_mbufs_set_len(cw_iobufs_mut *l, size_t n);
int cw_buf_mbufs_advance(cw_iobufs_mut *l, size_t n);
cw_iobufs *cw_buf_mbufs_freeze(cw_iobufs_mut *l);
int cw_buf_mbufs_coalesce(cw_iobufs_mut *l, cw_bufpool *pool, cw_iobuf_mut *out);

cw_iobufs_builder *cw_buf_builder_new(cw_bufpool *pool, size_t capacity);
void cw_buf_builder_release(cw_iobufs_builder *bld);
int cw_buf_builder_put(cw_iobufs_builder *bld, const void *src, size_t n);
int cw_buf_builder_push(cw_iobufs_builder *bld, cw_iobuf *buf);
cw_iobufs *cw_buf_builder_finish(cw_iobufs_builder *bld);

/* ---- Pools (pool.c, thread_cache.c) ---------------------------------------------- */

typedef struct cw_bufpool_class cw_bufpool_class;

/* One buffer a size class created. Its owner record comes first, so a
 * handle's owner pointer is the slot. */
typedef struct cw_bufpool_slot {
    cw_owner own;
    cw_bufpool_class *cls;
    struct cw_bufpool_slot *next; /* while parked: the next in a freelist or a thread's bin */
} cw_bufpool_slot;

struct cw_bufpool_class {
    struct cw_bufpool *pool;
    size_t size;
    uint64_t id;        /* unique in the process: the key of thread caches */
    uint32_t max;       /* buffers it may create */
    uint32_t cache_cap; /* buffers each thread may keep; 0: no thread cache */
    pthread_mutex_t lock;
    cw_bufpool_slot *free; /* parked buffers, newest first (lock) */
    uint32_t nfree;        /* (lock) */
    uint32_t created;      /* (lock) */
    atomic_uint_fast64_t exhausted;
};

struct cw_bufpool {
    cw_object hdr;
    cw_bufpool_config cfg;
    /* 1 for the owner and one per buffer that exists: the pool is freed
     * when its owner and every buffer are gone. */
    atomic_size_t live;
    atomic_bool closed; /* the owner released it: returns free their buffer */
    atomic_uint_fast64_t oversized;
    size_t nclasses;
    cw_bufpool_class classes[];
};

int cw_buf_pool_new(const cw_backend *b, const cw_bufpool_config *cfg, cw_bufpool **out);
void cw_buf_pool_release(cw_bufpool *pool);
int cw_buf_pool_try_alloc(cw_bufpool *pool, size_t cap, cw_iobuf_mut *out, int *why);
int cw_buf_pool_alloc(cw_bufpool *pool, size_t cap, cw_iobuf_mut *out);
void cw_buf_pool_config(const cw_bufpool *pool, cw_bufpool_config *out);
int cw_buf_pool_stats(const cw_bufpool *pool, size_t cls, cw_bufpool_stats *out);
cw_bufpool *cw_buf_runtime_pool(cw_ctx *ctx, int kind);

/* A buffer whose last reference is gone goes home: to this thread's
 * cache, or its class's freelist, or free() once the pool is closed. */
void cw_bufpool_return(cw_bufpool_slot *s);
/* Park `s` in its class's freelist (or free it when the pool is closed). */
void cw_class_put(cw_bufpool_class *cls, cw_bufpool_slot *s);
/* Park a chain of `n` slots of one class under one lock. */
void cw_class_put_chain(cw_bufpool_class *cls, cw_bufpool_slot *first, uint32_t n);

/* Thread caches: NULL/false when the class has none or the thread's cache
 * is unavailable (it is being torn down). */
cw_bufpool_slot *cw_cache_pop(cw_bufpool_class *cls);
bool cw_cache_push(cw_bufpool_class *cls, cw_bufpool_slot *s);
/* Hand this thread's cached buffers of `pool` back to their classes. */
void cw_cache_flush_pool(cw_bufpool *pool);
/* Buffers of `cls` in the calling thread's cache. */
uint32_t cw_cache_count(const cw_bufpool_class *cls);
/* Take up to `max` parked slots of `cls` as a chain (lock held inside). */
uint32_t cw_class_take(cw_bufpool_class *cls, uint32_t max, cw_bufpool_slot **chain);

/* ---- entries.c: what a backend takes: the table, and each run's two pools -- */

extern const cw_buffer_ops cw_buffer_entries;
/* Make the network and storage pools of a run of backend `b` from `cfg`.
 * CW_ERR_INVALID or CW_ERR_NOMEM with the reason in `why`: nothing is left. */
int cw_rt_pools_open(const cw_backend *b, const cw_config *cfg, cw_bufpool *pools[2], char *why,
                     size_t whylen);
/* The same for a cw_start: the failure goes to out->status and out->message. */
int cw_run_pools_open(const cw_backend *b, const cw_config *cfg, cw_bufpool *pools[2],
                      cw_run_result *out);
/* The owner's release of both: buffers still out keep their pool alive. */
void cw_rt_pools_close(cw_bufpool *pools[2]);

#endif
