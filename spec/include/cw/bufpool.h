/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/bufpool.h - buffer pools: reusable, aligned buffers in power-of-two size
 * classes, and the two pools every run has (network and storage).
 *
 * A pool hands out cw_iobuf_mut buffers of a class size; a buffer goes back
 * to its pool when its last reference (mutable, frozen, or any view of it)
 * is released, on whatever thread. Pools are thread-safe. Rules:
 * spec/12-buffers.md.
 */
#ifndef CW_BUFPOOL_H
#define CW_BUFPOOL_H

#include <stdbool.h>
#include <stdint.h>
#include <unistd.h>

#include "cw/iobuf.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The two pools of a run (cw_runtime_bufpool). */
enum cw_bufpool_kind {
    CW_BUFPOOL_NETWORK = 0, /* message buffers: many, small, cache-line aligned */
    CW_BUFPOOL_STORAGE = 1, /* block I/O buffers: few, large, page aligned (O_DIRECT) */
};

/* Why cw_bufpool_try_alloc said CW_ERR_POOL. */
enum cw_bufpool_failure {
    CW_BUFPOOL_EXHAUSTED = 1, /* the size class has all its buffers out */
    CW_BUFPOOL_OVERSIZED = 2, /* larger than the largest class */
};

/* thread_cache: size each thread's cache from max_per_class and parallelism. */
#define CW_BUFPOOL_CACHE_AUTO UINT32_MAX

/* How a pool is laid out. Fill with cw_bufpool_config_network or
 * cw_bufpool_config_storage, then change fields [BUF-019]. */
struct cw_bufpool_config {
    size_t min_size;        /* the smallest class: a power of two, >= alignment */
    size_t max_size;        /* the largest class: a power of two, >= min_size */
    uint32_t max_per_class; /* buffers each class may create over its life (>= 1) */
    size_t alignment;       /* of every pooled buffer: a power of two */
    size_t pool_min_size;   /* smaller requests bypass the pool (<= min_size) */
    uint32_t thread_cache;  /* buffers each thread may keep per class: 0 (none),
                               a count (at most max_per_class), or CW_BUFPOOL_CACHE_AUTO */
    uint32_t parallelism;   /* threads expected to share the pool (>= 1) */
    bool prefill;           /* create every buffer when the pool is made */
};

/* One size class, as cw_bufpool_class_stats reports it [BUF-023]. */
struct cw_bufpool_stats {
    size_t size;          /* the class size in bytes */
    uint32_t max_buffers; /* max_per_class */
    uint64_t created;     /* buffers the class has created: never decreases */
    uint64_t exhausted;   /* try_alloc refusals because the class had none left */
    uint64_t idle;        /* buffers parked in the pool, seen from the calling thread */
    uint64_t oversized;   /* pool-wide: try_alloc refusals for a size above every class */
};

/* The cache line size the network pool aligns to: 128 where a line is, or
 * where the prefetcher pulls pairs of 64-byte lines; 64 elsewhere. */
#if defined(__x86_64__) || defined(__aarch64__) || defined(__powerpc64__)
#define CW_CACHE_LINE_SIZE ((size_t)128)
#else
#define CW_CACHE_LINE_SIZE ((size_t)64)
#endif

/* The system's page size (4096 when it cannot be read). */
static inline size_t cw_page_size(void)
{
    long page = sysconf(_SC_PAGESIZE);
    return page > 0 ? (size_t)page : 4096;
}

/* Defaults for network buffers [BUF-027]: classes 1 KiB .. 128 KiB, 4096
 * buffers each, aligned to a cache line. */
static inline void cw_bufpool_config_network(cw_bufpool_config *cfg)
{
    cfg->min_size = 1024;
    cfg->max_size = 128 * 1024;
    cfg->max_per_class = 4096;
    cfg->alignment = CW_CACHE_LINE_SIZE;
    cfg->pool_min_size = 0;
    cfg->thread_cache = CW_BUFPOOL_CACHE_AUTO;
    cfg->parallelism = 1;
    cfg->prefill = false;
}

/* Defaults for storage buffers [BUF-027]: classes one page .. 8 MiB, 64
 * buffers each, aligned to a page. */
static inline void cw_bufpool_config_storage(cw_bufpool_config *cfg)
{
    size_t page = cw_page_size();
    cfg->min_size = page;
    cfg->max_size = 8 * 1024 * 1024 > page ? 8 * 1024 * 1024 : page;
    cfg->max_per_class = 64;
    cfg->alignment = page;
    cfg->pool_min_size = 0;
    cfg->thread_cache = CW_BUFPOOL_CACHE_AUTO;
    cfg->parallelism = 1;
    cfg->prefill = false;
}

static inline bool cw__pow2(size_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

/* NULL when `cfg` is valid, else why not, naming the rule [BUF-019]. */
static inline const char *cw_bufpool_config_check(const cw_bufpool_config *cfg)
{
    if (!cw__pow2(cfg->alignment))
        return "[BUF-019] alignment must be a power of two";
    if (!cw__pow2(cfg->min_size) || !cw__pow2(cfg->max_size))
        return "[BUF-019] class sizes must be powers of two";
    if (cfg->max_size < cfg->min_size)
        return "[BUF-019] max_size must be >= min_size";
    if (cfg->max_size > SIZE_MAX / 4)
        return "[BUF-019] max_size is too large";
    if (cfg->min_size < cfg->alignment)
        return "[BUF-019] the smallest class must be >= alignment";
    if (cfg->pool_min_size > cfg->min_size)
        return "[BUF-019] pool_min_size must be <= the smallest class";
    if (cfg->max_per_class == 0)
        return "[BUF-019] max_per_class must be >= 1";
    if (cfg->parallelism == 0)
        return "[BUF-019] parallelism must be >= 1";
    return NULL;
}

/* The number of size classes of a valid configuration. */
static inline size_t cw_bufpool_config_classes(const cw_bufpool_config *cfg)
{
    size_t n = 1;
    for (size_t s = cfg->min_size; s < cfg->max_size; s <<= 1)
        n++;
    return n;
}

/* A new pool of backend `b`; the caller owns it (cw_bufpool_release).
 * CW_ERR_INVALID for a configuration cw_bufpool_config_check refuses,
 * CW_ERR_NOMEM; `*out` is then NULL. */
static inline int cw_bufpool_new(const cw_backend *b, const cw_bufpool_config *cfg,
                                 cw_bufpool **out)
{
    const cw_buffer_ops *ops = cw__buffer_ops(b);
    *out = NULL;
    if (!ops)
        return CW_ERR_UNSUPPORTED;
    return ops->pool_new(b, cfg, out);
}

/* Give up the pool. Its buffers still out stay valid and are freed by
 * their last release [BUF-024]. */
static inline void cw_bufpool_release(cw_bufpool *pool)
{
    if (pool)
        cw__backend_of(pool)->buffers->pool_release(pool);
}

/* A pooled buffer of at least `cap` bytes: len 0, cap = the class size
 * [BUF-020]. The caller owns it. CW_ERR_POOL with `*why` (may be NULL) set
 * to a cw_bufpool_failure when the class is exhausted or `cap` is oversized;
 * CW_ERR_NOMEM; `*out` is then empty. */
static inline int cw_bufpool_try_alloc(cw_bufpool *pool, size_t cap, cw_iobuf_mut *out, int *why)
{
    return cw__backend_of(pool)->buffers->pool_try_alloc(pool, cap, out, why);
}

/* Like cw_bufpool_try_alloc, but where it would say CW_ERR_POOL, a buffer of
 * at least `cap` bytes outside the pool (same alignment) [BUF-022]. */
static inline int cw_bufpool_alloc(cw_bufpool *pool, size_t cap, cw_iobuf_mut *out)
{
    return cw__backend_of(pool)->buffers->pool_alloc(pool, cap, out);
}

/* The configuration the pool was made with. */
static inline void cw_bufpool_get_config(const cw_bufpool *pool, cw_bufpool_config *out)
{
    cw__backend_of(pool)->buffers->pool_config(pool, out);
}

/* Counters of size class `cls` (0 is the smallest). CW_ERR_INVALID past
 * the last class. */
static inline int cw_bufpool_class_stats(const cw_bufpool *pool, size_t cls, cw_bufpool_stats *out)
{
    return cw__backend_of(pool)->buffers->pool_stats(pool, cls, out);
}

static inline const char *cw_bufpool_strfailure(int why)
{
    switch (why) {
    case CW_BUFPOOL_EXHAUSTED:
        return "pool exhausted for required size class";
    case CW_BUFPOOL_OVERSIZED:
        return "requested capacity exceeds maximum buffer size";
    default:
        return "no pool failure";
    }
}

/* The run's pool of kind `kind` (enum cw_bufpool_kind), borrowed: valid until
 * the run ends, while buffers from it may live longer [BUF-026]. NULL when
 * the backend has no pools. */
static inline cw_bufpool *cw_runtime_bufpool(cw_ctx *ctx, int kind)
{
    const cw_buffer_ops *ops = cw__buffer_ops(cw__backend_of(ctx));
    if (!ops || !CW_BUFFER_OPS_HAS(ops, runtime_pool))
        return NULL;
    return ops->runtime_pool(ctx, kind);
}

static inline cw_bufpool *cw_network_buffer_pool(cw_ctx *ctx)
{
    return cw_runtime_bufpool(ctx, CW_BUFPOOL_NETWORK);
}

static inline cw_bufpool *cw_storage_buffer_pool(cw_ctx *ctx)
{
    return cw_runtime_bufpool(ctx, CW_BUFPOOL_STORAGE);
}

#ifdef __cplusplus
}
#endif
#endif
