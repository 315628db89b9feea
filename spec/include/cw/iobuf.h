/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/iobuf.h - byte buffers: shared immutable views (cw_iobuf), unique
 * mutable buffers of fixed capacity (cw_iobuf_mut), their chunk lists
 * (cw_iobufs, cw_iobufs_mut) and a builder. Pools are in cw/bufpool.h.
 *
 * cw_iobuf and cw_iobuf_mut are small value handles: the view itself
 * (data, len, and cap for the mutable one) is in public fields that the
 * inline readers below use directly, and `owner` is the backend's record of
 * what keeps the bytes alive. Copying the struct does not add a reference:
 * cw_iobuf_clone does, and every reference is released exactly once.
 *
 * The lists and the builder are objects of their own, made and freed by
 * the backend. None of these functions suspends or needs a task: they work
 * on any thread, inside or outside a run. Rules: spec/12-buffers.md.
 */
#ifndef CW_IOBUF_H
#define CW_IOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "cw/backend.h"
#include "cw/error.h"

#ifdef __cplusplus
extern "C" {
#endif

/* An immutable view of bytes that may be shared by many handles [BUF-001].
 * All zero is the unset handle: it reads as empty, and only operations on
 * 0 bytes of it succeed [BUF-030]. The empty handles a backend leaves or
 * returns still name it in `hdr.backend`, with len 0 and a non-NULL data,
 * holding no reference [BUF-029]. */
typedef struct cw_iobuf {
    cw_object hdr;       /* the backend that made it; NULL when unset */
    const uint8_t *data; /* the bytes data[0 .. len); never NULL once made */
    size_t len;
    void *owner; /* the backend's; NULL for a detached (empty or static) view */
} cw_iobuf;

/* A mutable buffer with one owner: data[0 .. len) is readable,
 * data[len .. cap) is writable space. Its capacity never grows. */
typedef struct cw_iobuf_mut {
    cw_object hdr;
    uint8_t *data;
    size_t len, cap;
    void *owner;
} cw_iobuf_mut;

typedef struct cw_iobufs cw_iobufs;                 /* a list of cw_iobuf: one byte sequence */
typedef struct cw_iobufs_mut cw_iobufs_mut;         /* a list of cw_iobuf_mut */
typedef struct cw_iobufs_builder cw_iobufs_builder; /* copies small parts, links large ones */
typedef struct cw_bufpool cw_bufpool;               /* cw/bufpool.h */
typedef struct cw_bufpool_config cw_bufpool_config;
typedef struct cw_bufpool_stats cw_bufpool_stats;

/* Called once, from whichever thread releases the last reference to bytes
 * given to cw_iobuf_adopt. */
typedef void (*cw_release_fn)(void *data, void *arg);

/* The buffer entries of a backend, reached through cw_backend.buffers. Like
 * the main table it only ever grows at the end; `size` says how far this
 * backend's copy goes (CW_BUFFER_OPS_HAS). */
struct cw_buffer_ops {
    uint32_t size; /* sizeof(cw_buffer_ops) the backend was built with */

    /* cw_iobuf */
    int (*iobuf_copy)(const cw_backend *b, const void *src, size_t len, cw_iobuf *out);
    int (*iobuf_adopt)(const cw_backend *b, void *data, size_t len, cw_release_fn release,
                       void *arg, cw_iobuf *out);
    void (*iobuf_static)(const cw_backend *b, const void *data, size_t len, cw_iobuf *out);
    void (*iobuf_clone)(const cw_iobuf *buf, cw_iobuf *out);
    void (*iobuf_release)(cw_iobuf *buf);
    int (*iobuf_slice)(const cw_iobuf *buf, size_t start, size_t end, cw_iobuf *out);
    int (*iobuf_split_to)(cw_iobuf *buf, size_t at, cw_iobuf *head);
    int (*iobuf_advance)(cw_iobuf *buf, size_t n);
    bool (*iobuf_try_into_mut)(cw_iobuf *buf, cw_iobuf_mut *out);
    bool (*iobuf_is_pooled)(const cw_iobuf *buf);

    /* cw_iobuf_mut */
    int (*mut_alloc)(const cw_backend *b, size_t cap, size_t align, bool zeroed, cw_iobuf_mut *out);
    void (*mut_release)(cw_iobuf_mut *m);
    int (*mut_advance)(cw_iobuf_mut *m, size_t n);
    void (*mut_freeze)(cw_iobuf_mut *m, cw_iobuf *out);
    bool (*mut_is_pooled)(const cw_iobuf_mut *m);

    /* cw_iobufs */
    cw_iobufs *(*bufs_new)(const cw_backend *b);
    void (*bufs_release)(cw_iobufs *l);
    int (*bufs_append)(cw_iobufs *l, cw_iobuf *buf);
    int (*bufs_prepend)(cw_iobufs *l, cw_iobuf *buf);
    size_t (*bufs_len)(const cw_iobufs *l);
    size_t (*bufs_chunk_count)(const cw_iobufs *l);
    const cw_iobuf *(*bufs_chunk)(const cw_iobufs *l, size_t i);
    cw_iobufs *(*bufs_clone)(const cw_iobufs *l);
    int (*bufs_split_to)(cw_iobufs *l, size_t at, cw_iobufs **head);
    int (*bufs_advance)(cw_iobufs *l, size_t n);
    int (*bufs_coalesce)(cw_iobufs *l, cw_bufpool *pool, cw_iobuf *out);

    /* cw_iobufs_mut */
    cw_iobufs_mut *(*mbufs_new)(const cw_backend *b);
    void (*mbufs_release)(cw_iobufs_mut *l);
    int (*mbufs_append)(cw_iobufs_mut *l, cw_iobuf_mut *m);
    size_t (*mbufs_len)(const cw_iobufs_mut *l);
    size_t (*mbufs_capacity)(const cw_iobufs_mut *l);
    size_t (*mbufs_spare)(const cw_iobufs_mut *l);
    size_t (*mbufs_chunk_count)(const cw_iobufs_mut *l);
    const cw_iobuf_mut *(*mbufs_chunk)(const cw_iobufs_mut *l, size_t i);
    int (*mbufs_put)(cw_iobufs_mut *l, const void *src, size_t n);
    int (*mbufs_set_len)(cw_iobufs_mut *l, size_t n);
    int (*mbufs_advance)(cw_iobufs_mut *l, size_t n);
    cw_iobufs *(*mbufs_freeze)(cw_iobufs_mut *l);
    int (*mbufs_coalesce)(cw_iobufs_mut *l, cw_bufpool *pool, cw_iobuf_mut *out);

    /* cw_iobufs_builder */
    cw_iobufs_builder *(*builder_new)(cw_bufpool *pool, size_t capacity);
    void (*builder_release)(cw_iobufs_builder *bld);
    int (*builder_put)(cw_iobufs_builder *bld, const void *src, size_t n);
    int (*builder_push)(cw_iobufs_builder *bld, cw_iobuf *buf);
    cw_iobufs *(*builder_finish)(cw_iobufs_builder *bld);

    /* Pools (cw/bufpool.h) */
    int (*pool_new)(const cw_backend *b, const cw_bufpool_config *cfg, cw_bufpool **out);
    void (*pool_release)(cw_bufpool *pool);
    int (*pool_try_alloc)(cw_bufpool *pool, size_t cap, cw_iobuf_mut *out, int *why);
    int (*pool_alloc)(cw_bufpool *pool, size_t cap, cw_iobuf_mut *out);
    void (*pool_config)(const cw_bufpool *pool, cw_bufpool_config *out);
    int (*pool_stats)(const cw_bufpool *pool, size_t cls, cw_bufpool_stats *out);
    cw_bufpool *(*runtime_pool)(cw_ctx *ctx, int kind);
};

#define CW_BUFFER_OPS_HAS(ops, field)                                                              \
    ((ops)->size >= offsetof(cw_buffer_ops, field) + sizeof((ops)->field) && (ops)->field != NULL)

/* The buffer entries of `b`, or NULL for no backend or one without them. */
static inline const cw_buffer_ops *cw__buffer_ops(const cw_backend *b)
{
    if (!b || !CW_BACKEND_HAS(b, buffers))
        return NULL;
    return b->buffers;
}

/* ---- cw_iobuf: reading (the public fields) -------------------------------- */

static inline size_t cw_iobuf_len(const cw_iobuf *buf)
{
    return buf->len;
}

static inline bool cw_iobuf_is_empty(const cw_iobuf *buf)
{
    return buf->len == 0;
}

/* The first byte of the view; valid while a reference is held. */
static inline const uint8_t *cw_iobuf_data(const cw_iobuf *buf)
{
    return buf->data;
}

/* Same bytes, whatever the backend, chunking or sharing [BUF-012]. */
static inline bool cw_iobuf_equal_bytes(const cw_iobuf *buf, const void *bytes, size_t len)
{
    return buf->len == len && (len == 0 || memcmp(buf->data, bytes, len) == 0);
}

static inline bool cw_iobuf_equal(const cw_iobuf *a, const cw_iobuf *b)
{
    return cw_iobuf_equal_bytes(a, b->data, b->len);
}

/* ---- cw_iobuf: making ------------------------------------------------------- */

/* A new buffer holding a copy of src[0 .. len). The caller owns the
 * reference (cw_iobuf_release). CW_ERR_NOMEM, CW_ERR_INVALID for a NULL src
 * with len > 0, CW_ERR_UNSUPPORTED without buffers; `*out` is then empty. */
static inline int cw_iobuf_copy(const cw_backend *b, const void *src, size_t len, cw_iobuf *out)
{
    const cw_buffer_ops *ops = cw__buffer_ops(b);
    if (!ops) {
        memset(out, 0, sizeof *out);
        return CW_ERR_UNSUPPORTED;
    }
    return ops->iobuf_copy(b, src, len, out);
}

/* Take over data[0 .. len) without copying: `release(data, arg)` runs once
 * when its last reference is released [BUF-004]. CW_ERR_INVALID for a NULL
 * release, or a NULL data with len > 0 [BUF-033]; on an error the caller
 * keeps `data` and release is not called. */
static inline int cw_iobuf_adopt(const cw_backend *b, void *data, size_t len, cw_release_fn release,
                                 void *arg, cw_iobuf *out)
{
    const cw_buffer_ops *ops = cw__buffer_ops(b);
    if (!ops) {
        memset(out, 0, sizeof *out);
        return CW_ERR_UNSUPPORTED;
    }
    return ops->iobuf_adopt(b, data, len, release, arg, out);
}

/* A view of bytes that outlive every use of it (string literals, tables):
 * nothing is copied, counted or freed [BUF-005]. */
static inline int cw_iobuf_static(const cw_backend *b, const void *data, size_t len, cw_iobuf *out)
{
    const cw_buffer_ops *ops = cw__buffer_ops(b);
    memset(out, 0, sizeof *out);
    if (!ops)
        return CW_ERR_UNSUPPORTED;
    if (!data && len > 0)
        return CW_ERR_INVALID;
    ops->iobuf_static(b, data, len, out);
    return CW_OK;
}

/* ---- cw_iobuf: sharing -------------------------------------------------------- */

/* Another reference to the same bytes; the caller owns it [BUF-003]. */
static inline cw_iobuf cw_iobuf_clone(const cw_iobuf *buf)
{
    cw_iobuf out = *buf;
    if (buf->hdr.backend)
        buf->hdr.backend->buffers->iobuf_clone(buf, &out);
    return out;
}

/* Give up this reference. The handle is left empty, so a second release of
 * the same handle does nothing [BUF-003]. */
static inline void cw_iobuf_release(cw_iobuf *buf)
{
    if (buf->hdr.backend)
        buf->hdr.backend->buffers->iobuf_release(buf);
}

/* `*out` = the bytes [start, end) of `buf`, sharing them (no copy). The
 * caller owns `*out`. CW_ERR_INVALID when start > end or end > len; `*out`
 * is then empty [BUF-006]. An unset `buf` reads as empty: slice(0, 0)
 * succeeds with `*out` unset [BUF-030]. */
static inline int cw_iobuf_slice(const cw_iobuf *buf, size_t start, size_t end, cw_iobuf *out)
{
    if (!buf->hdr.backend) {
        memset(out, 0, sizeof *out);
        return start == 0 && end == 0 ? CW_OK : CW_ERR_INVALID;
    }
    return buf->hdr.backend->buffers->iobuf_slice(buf, start, end, out);
}

/* `*head` = the first `at` bytes; `buf` keeps the rest. The caller owns
 * `*head`. CW_ERR_INVALID when at > len, and nothing changes. An unset
 * `buf` reads as empty: split_to(0) succeeds with `*head` unset [BUF-030]. */
static inline int cw_iobuf_split_to(cw_iobuf *buf, size_t at, cw_iobuf *head)
{
    if (!buf->hdr.backend) {
        memset(head, 0, sizeof *head);
        return at == 0 ? CW_OK : CW_ERR_INVALID;
    }
    return buf->hdr.backend->buffers->iobuf_split_to(buf, at, head);
}

/* Drop the first `n` bytes of the view. CW_ERR_INVALID when n > len. */
static inline int cw_iobuf_advance(cw_iobuf *buf, size_t n)
{
    if (!buf->hdr.backend)
        return n == 0 ? CW_OK : CW_ERR_INVALID;
    return buf->hdr.backend->buffers->iobuf_advance(buf, n);
}

/* Copy the first `n` bytes to `dst` and drop them from the view [BUF-008].
 * CW_ERR_INVALID when n > len, and nothing is consumed. */
static inline int cw_iobuf_copy_out(cw_iobuf *buf, void *dst, size_t n)
{
    if (n > buf->len || (!dst && n > 0))
        return CW_ERR_INVALID;
    if (n > 0)
        memcpy(dst, buf->data, n);
    return cw_iobuf_advance(buf, n);
}

/* Turn the only reference into a mutable buffer without copying
 * [BUF-011]. True: `*out` has the bytes and the spare capacity after them,
 * and `buf` is left empty. False (shared, static or adopted bytes): `buf` is
 * unchanged and `*out` empty. */
static inline bool cw_iobuf_try_into_mut(cw_iobuf *buf, cw_iobuf_mut *out)
{
    if (!buf->hdr.backend) {
        memset(out, 0, sizeof *out);
        return true;
    }
    return buf->hdr.backend->buffers->iobuf_try_into_mut(buf, out);
}

/* True when the bytes belong to a pool's size class. */
static inline bool cw_iobuf_is_pooled(const cw_iobuf *buf)
{
    return buf->hdr.backend && buf->hdr.backend->buffers->iobuf_is_pooled(buf);
}

/* ---- cw_iobuf_mut ------------------------------------------------------------- */

static inline size_t cw_iobuf_mut_len(const cw_iobuf_mut *m)
{
    return m->len;
}

static inline size_t cw_iobuf_mut_capacity(const cw_iobuf_mut *m)
{
    return m->cap;
}

/* Writable bytes left after the readable ones. */
static inline size_t cw_iobuf_mut_spare(const cw_iobuf_mut *m)
{
    return m->cap - m->len;
}

static inline uint8_t *cw_iobuf_mut_data(const cw_iobuf_mut *m)
{
    return m->data;
}

static inline bool cw_iobuf_mut_equal_bytes(const cw_iobuf_mut *m, const void *bytes, size_t len)
{
    return m->len == len && (len == 0 || memcmp(m->data, bytes, len) == 0);
}

/* An empty buffer of exactly `cap` writable bytes (0: holds nothing). The
 * caller owns it (cw_iobuf_mut_release). CW_ERR_NOMEM [BUF-002]. */
static inline int cw_iobuf_mut_with_capacity(const cw_backend *b, size_t cap, cw_iobuf_mut *out)
{
    const cw_buffer_ops *ops = cw__buffer_ops(b);
    if (!ops) {
        memset(out, 0, sizeof *out);
        return CW_ERR_UNSUPPORTED;
    }
    return ops->mut_alloc(b, cap, 1, false, out);
}

/* At least `cap` writable bytes starting at a multiple of `align` (a power
 * of two, else CW_ERR_INVALID). Never pooled. */
static inline int cw_iobuf_mut_with_alignment(const cw_backend *b, size_t cap, size_t align,
                                              cw_iobuf_mut *out)
{
    const cw_buffer_ops *ops = cw__buffer_ops(b);
    if (!ops) {
        memset(out, 0, sizeof *out);
        return CW_ERR_UNSUPPORTED;
    }
    return ops->mut_alloc(b, cap, align, false, out);
}

/* `len` zero bytes, readable: len == cap == `len`. */
static inline int cw_iobuf_mut_zeroed(const cw_backend *b, size_t len, cw_iobuf_mut *out)
{
    const cw_buffer_ops *ops = cw__buffer_ops(b);
    if (!ops) {
        memset(out, 0, sizeof *out);
        return CW_ERR_UNSUPPORTED;
    }
    return ops->mut_alloc(b, len, 1, true, out);
}

/* Give up the buffer; the handle is left empty [BUF-003]. */
static inline void cw_iobuf_mut_release(cw_iobuf_mut *m)
{
    if (m->hdr.backend)
        m->hdr.backend->buffers->mut_release(m);
}

/* Append src[0 .. n) after the readable bytes. CW_ERR_INVALID when it does
 * not fit in the spare capacity, and nothing is written [BUF-009]. */
static inline int cw_iobuf_mut_put(cw_iobuf_mut *m, const void *src, size_t n)
{
    if (n > m->cap - m->len || (!src && n > 0))
        return CW_ERR_INVALID;
    if (n > 0)
        memcpy(m->data + m->len, src, n);
    m->len += n;
    return CW_OK;
}

/* Declare the first `len` bytes readable (they were written through
 * cw_iobuf_mut_data, by read(2) say). CW_ERR_INVALID when len > cap. */
static inline int cw_iobuf_mut_set_len(cw_iobuf_mut *m, size_t len)
{
    if (len > m->cap)
        return CW_ERR_INVALID;
    m->len = len;
    return CW_OK;
}

/* Keep at most `len` readable bytes; the capacity is unchanged. */
static inline void cw_iobuf_mut_truncate(cw_iobuf_mut *m, size_t len)
{
    if (len < m->len)
        m->len = len;
}

/* Consume the first `n` readable bytes: the buffer then starts after them,
 * so its capacity shrinks by `n` too. CW_ERR_INVALID when n > len. */
static inline int cw_iobuf_mut_advance(cw_iobuf_mut *m, size_t n)
{
    if (n > m->len)
        return CW_ERR_INVALID;
    if (n == 0)
        return CW_OK;
    return m->hdr.backend->buffers->mut_advance(m, n);
}

static inline int cw_iobuf_mut_copy_out(cw_iobuf_mut *m, void *dst, size_t n)
{
    if (n > m->len || (!dst && n > 0))
        return CW_ERR_INVALID;
    if (n > 0)
        memcpy(dst, m->data, n);
    return cw_iobuf_mut_advance(m, n);
}

/* The readable bytes as an immutable buffer, without copying; the caller
 * owns `*out` and `m` is left empty. With no readable bytes the storage is
 * released at once and `*out` is empty [BUF-010]. */
static inline void cw_iobuf_mut_freeze(cw_iobuf_mut *m, cw_iobuf *out)
{
    if (!m->hdr.backend) {
        memset(out, 0, sizeof *out);
        return;
    }
    m->hdr.backend->buffers->mut_freeze(m, out);
}

static inline bool cw_iobuf_mut_is_pooled(const cw_iobuf_mut *m)
{
    return m->hdr.backend && m->hdr.backend->buffers->mut_is_pooled(m);
}

/* ---- cw_iobufs: a list of immutable chunks ------------------------------------ */

/* An empty list; the caller owns it (cw_iobufs_release). NULL when memory
 * or the backend's buffer support is missing. */
static inline cw_iobufs *cw_iobufs_new(const cw_backend *b)
{
    const cw_buffer_ops *ops = cw__buffer_ops(b);
    return ops ? ops->bufs_new(b) : NULL;
}

/* Release every chunk and the list. NULL is allowed. */
static inline void cw_iobufs_release(cw_iobufs *l)
{
    if (l)
        cw__backend_of(l)->buffers->bufs_release(l);
}

/* Move `*buf` to the end (append) or the front (prepend) of the list:
 * `*buf` is left empty. An empty buffer, unset or of any backend, is
 * dropped with CW_OK [BUF-031]. CW_ERR_INVALID for a non-empty buffer of
 * another backend, CW_ERR_NOMEM; then `*buf` is unchanged [BUF-013]. */
static inline int cw_iobufs_append(cw_iobufs *l, cw_iobuf *buf)
{
    return cw__backend_of(l)->buffers->bufs_append(l, buf);
}

static inline int cw_iobufs_prepend(cw_iobufs *l, cw_iobuf *buf)
{
    return cw__backend_of(l)->buffers->bufs_prepend(l, buf);
}

/* Total bytes. */
static inline size_t cw_iobufs_len(const cw_iobufs *l)
{
    return cw__backend_of(l)->buffers->bufs_len(l);
}

/* Number of chunks; none of them is empty. */
static inline size_t cw_iobufs_chunk_count(const cw_iobufs *l)
{
    return cw__backend_of(l)->buffers->bufs_chunk_count(l);
}

/* The i-th chunk, borrowed until the list changes; NULL past the end:
 *     for (size_t i = 0; (c = cw_iobufs_chunk(l, i)); i++) ... */
static inline const cw_iobuf *cw_iobufs_chunk(const cw_iobufs *l, size_t i)
{
    return cw__backend_of(l)->buffers->bufs_chunk(l, i);
}

/* A new list sharing every chunk; the caller owns it. NULL on CW_ERR_NOMEM. */
static inline cw_iobufs *cw_iobufs_clone(const cw_iobufs *l)
{
    return cw__backend_of(l)->buffers->bufs_clone(l);
}

/* `*head` = a new list of the first `at` bytes; `l` keeps the rest. No byte
 * is copied [BUF-014]. CW_ERR_INVALID when at > len, CW_ERR_NOMEM; then
 * nothing changes and `*head` is NULL. */
static inline int cw_iobufs_split_to(cw_iobufs *l, size_t at, cw_iobufs **head)
{
    return cw__backend_of(l)->buffers->bufs_split_to(l, at, head);
}

static inline int cw_iobufs_advance(cw_iobufs *l, size_t n)
{
    return cw__backend_of(l)->buffers->bufs_advance(l, n);
}

/* Copy the first `n` bytes to `dst` across chunks and consume them.
 * CW_ERR_INVALID when n > len, and nothing is consumed. */
static inline int cw_iobufs_copy_out(cw_iobufs *l, void *dst, size_t n)
{
    if (n > cw_iobufs_len(l) || (!dst && n > 0))
        return CW_ERR_INVALID;
    const cw_iobuf *c;
    size_t done = 0;
    for (size_t i = 0; done < n && (c = cw_iobufs_chunk(l, i)); i++) {
        size_t take = c->len < n - done ? c->len : n - done;
        memcpy((uint8_t *)dst + done, c->data, take);
        done += take;
    }
    return cw_iobufs_advance(l, n);
}

/* Same bytes in the same order, whatever the chunking [BUF-012]. */
static inline bool cw_iobufs_equal_bytes(const cw_iobufs *l, const void *bytes, size_t len)
{
    if (cw_iobufs_len(l) != len)
        return false;
    const cw_iobuf *c;
    size_t at = 0;
    for (size_t i = 0; (c = cw_iobufs_chunk(l, i)); i++) {
        if (memcmp(c->data, (const uint8_t *)bytes + at, c->len) != 0)
            return false;
        at += c->len;
    }
    return true;
}

static inline bool cw_iobufs_equal(const cw_iobufs *a, const cw_iobufs *b)
{
    if (cw_iobufs_len(a) != cw_iobufs_len(b))
        return false;
    const cw_iobuf *ca = cw_iobufs_chunk(a, 0), *cb = cw_iobufs_chunk(b, 0);
    size_t ia = 0, ib = 0, oa = 0, ob = 0;
    while (ca && cb) {
        size_t na = ca->len - oa, nb = cb->len - ob, n = na < nb ? na : nb;
        if (memcmp(ca->data + oa, cb->data + ob, n) != 0)
            return false;
        oa += n;
        ob += n;
        if (oa == ca->len) {
            ca = cw_iobufs_chunk(a, ++ia);
            oa = 0;
        }
        if (ob == cb->len) {
            cb = cw_iobufs_chunk(b, ++ib);
            ob = 0;
        }
    }
    return true;
}

/* Move every byte into one buffer `*out` (the caller's), leaving the list
 * empty. A single chunk is moved as it is; otherwise the bytes are copied
 * into a new buffer, from `pool` when not NULL [BUF-015]. CW_ERR_NOMEM:
 * nothing changes and `*out` is empty. */
static inline int cw_iobufs_coalesce(cw_iobufs *l, cw_bufpool *pool, cw_iobuf *out)
{
    return cw__backend_of(l)->buffers->bufs_coalesce(l, pool, out);
}

/* ---- cw_iobufs_mut: a list of mutable chunks ------------------------------------ */

/* An empty list; the caller owns it (cw_iobufs_mut_release). */
static inline cw_iobufs_mut *cw_iobufs_mut_new(const cw_backend *b)
{
    const cw_buffer_ops *ops = cw__buffer_ops(b);
    return ops ? ops->mbufs_new(b) : NULL;
}

static inline void cw_iobufs_mut_release(cw_iobufs_mut *l)
{
    if (l)
        cw__backend_of(l)->buffers->mbufs_release(l);
}

/* Move `*m` to the end of the list (`*m` is left empty). A buffer of no
 * capacity is dropped. CW_ERR_INVALID, CW_ERR_NOMEM: `*m` unchanged. */
static inline int cw_iobufs_mut_append(cw_iobufs_mut *l, cw_iobuf_mut *m)
{
    return cw__backend_of(l)->buffers->mbufs_append(l, m);
}

/* Readable bytes, over all chunks. */
static inline size_t cw_iobufs_mut_len(const cw_iobufs_mut *l)
{
    return cw__backend_of(l)->buffers->mbufs_len(l);
}

/* The sum of the chunks' capacities. */
static inline size_t cw_iobufs_mut_capacity(const cw_iobufs_mut *l)
{
    return cw__backend_of(l)->buffers->mbufs_capacity(l);
}

/* How many bytes cw_iobufs_mut_put can still take [BUF-016]. */
static inline size_t cw_iobufs_mut_spare(const cw_iobufs_mut *l)
{
    return cw__backend_of(l)->buffers->mbufs_spare(l);
}

static inline size_t cw_iobufs_mut_chunk_count(const cw_iobufs_mut *l)
{
    return cw__backend_of(l)->buffers->mbufs_chunk_count(l);
}

/* The i-th chunk, borrowed until the list changes; NULL past the end. Its
 * bytes may be written through `data` (then cw_iobufs_mut_set_len). */
static inline const cw_iobuf_mut *cw_iobufs_mut_chunk(const cw_iobufs_mut *l, size_t i)
{
    return cw__backend_of(l)->buffers->mbufs_chunk(l, i);
}

/* Append src[0 .. n) after the last readable byte, filling free space
 * chunk by chunk. CW_ERR_INVALID when n > spare: nothing is written. */
static inline int cw_iobufs_mut_put(cw_iobufs_mut *l, const void *src, size_t n)
{
    if (!src && n > 0)
        return CW_ERR_INVALID;
    return cw__backend_of(l)->buffers->mbufs_put(l, src, n);
}

/* Make the first `n` bytes readable, filling chunks in order (each takes
 * min(rest, its capacity)). CW_ERR_INVALID when n > capacity. */
static inline int cw_iobufs_mut_set_len(cw_iobufs_mut *l, size_t n)
{
    return cw__backend_of(l)->buffers->mbufs_set_len(l, n);
}

static inline int cw_iobufs_mut_advance(cw_iobufs_mut *l, size_t n)
{
    return cw__backend_of(l)->buffers->mbufs_advance(l, n);
}

static inline int cw_iobufs_mut_copy_out(cw_iobufs_mut *l, void *dst, size_t n)
{
    if (n > cw_iobufs_mut_len(l) || (!dst && n > 0))
        return CW_ERR_INVALID;
    const cw_iobuf_mut *c;
    size_t done = 0;
    for (size_t i = 0; done < n && (c = cw_iobufs_mut_chunk(l, i)); i++) {
        size_t take = c->len < n - done ? c->len : n - done;
        if (take > 0)
            memcpy((uint8_t *)dst + done, c->data, take);
        done += take;
    }
    return cw_iobufs_mut_advance(l, n);
}

static inline bool cw_iobufs_mut_equal_bytes(const cw_iobufs_mut *l, const void *bytes, size_t len)
{
    if (cw_iobufs_mut_len(l) != len)
        return false;
    const cw_iobuf_mut *c;
    size_t at = 0;
    for (size_t i = 0; (c = cw_iobufs_mut_chunk(l, i)); i++) {
        if (c->len > 0 && memcmp(c->data, (const uint8_t *)bytes + at, c->len) != 0)
            return false;
        at += c->len;
    }
    return true;
}

/* A new immutable list of the readable bytes (each chunk frozen, no copy);
 * `l` is left empty and still the caller's. NULL on CW_ERR_NOMEM, and `l`
 * is unchanged. */
static inline cw_iobufs *cw_iobufs_mut_freeze(cw_iobufs_mut *l)
{
    return cw__backend_of(l)->buffers->mbufs_freeze(l);
}

/* Move the readable bytes into one mutable buffer `*out`, leaving the list
 * empty: a single chunk is moved as it is, otherwise the bytes are copied
 * into a new buffer (from `pool` when not NULL). */
static inline int cw_iobufs_mut_coalesce(cw_iobufs_mut *l, cw_bufpool *pool, cw_iobuf_mut *out)
{
    return cw__backend_of(l)->buffers->mbufs_coalesce(l, pool, out);
}

/* ---- cw_iobufs_builder --------------------------------------------------------- */

/* A builder whose small writes go to one buffer of at least `capacity`
 * bytes from `pool` and whose large parts are linked, not copied
 * [BUF-017]. The caller owns it (finish or release). NULL on CW_ERR_NOMEM. */
static inline cw_iobufs_builder *cw_iobufs_builder_new(cw_bufpool *pool, size_t capacity)
{
    return cw__backend_of(pool)->buffers->builder_new(pool, capacity);
}

static inline void cw_iobufs_builder_release(cw_iobufs_builder *bld)
{
    if (bld)
        cw__backend_of(bld)->buffers->builder_release(bld);
}

/* Copy src[0 .. n) into the inline buffer. CW_ERR_INVALID when it does
 * not fit, and nothing is written. */
static inline int cw_iobufs_builder_put(cw_iobufs_builder *bld, const void *src, size_t n)
{
    if (!src && n > 0)
        return CW_ERR_INVALID;
    return cw__backend_of(bld)->buffers->builder_put(bld, src, n);
}

/* Link `*buf` at the current position (moved in, `*buf` left empty). */
static inline int cw_iobufs_builder_push(cw_iobufs_builder *bld, cw_iobuf *buf)
{
    return cw__backend_of(bld)->buffers->builder_push(bld, buf);
}

/* The bytes written and linked, in order, as a new list the caller owns.
 * The builder is freed. NULL on CW_ERR_NOMEM, and the builder is kept. */
static inline cw_iobufs *cw_iobufs_builder_finish(cw_iobufs_builder *bld)
{
    return cw__backend_of(bld)->buffers->builder_finish(bld);
}

#ifdef __cplusplus
}
#endif
#endif
