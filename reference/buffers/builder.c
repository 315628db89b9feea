/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * builder.c - cw_iobufs_builder: small writes are copied into one inline
 * buffer, large parts are linked in place; finish interleaves the two.
 *
 * An encoder writes headers and lengths with put and hands over payloads
 * with push, and the result is a chunk list where every payload keeps its
 * own bytes: the inline buffer is frozen once and cut into the pieces
 * between the pushes.
 */
#include <stdlib.h>

#include "buffers/buffers.h"

typedef struct cw_pushed {
    size_t at; /* inline bytes written before it */
    cw_iobuf buf;
} cw_pushed;

struct cw_iobufs_builder {
    cw_object hdr;
    cw_iobuf_mut inl;
    cw_pushed *pushed;
    size_t n, cap;
};

cw_iobufs_builder *cw_buf_builder_new(cw_bufpool *pool, size_t capacity)
{
    cw_iobufs_builder *bld = calloc(1, sizeof *bld);
    if (!bld)
        return NULL;
    bld->hdr.backend = pool->hdr.backend;
    if (cw_bufpool_alloc(pool, capacity, &bld->inl) != CW_OK) {
        free(bld);
        return NULL;
    }
    return bld;
}

void cw_buf_builder_release(cw_iobufs_builder *bld)
{
    cw_iobuf_mut_release(&bld->inl);
    for (size_t i = 0; i < bld->n; i++)
        cw_buf_iobuf_release(&bld->pushed[i].buf);
    free(bld->pushed);
    free(bld);
}

int cw_buf_builder_put(cw_iobufs_builder *bld, const void *src, size_t n)
{
    return cw_iobuf_mut_put(&bld->inl, src, n);
}

int cw_buf_builder_push(cw_iobufs_builder *bld, cw_iobuf *buf)
{
    if (buf->len == 0) {
        cw_iobuf_release(buf);
        return CW_OK;
    }
    if (buf->hdr.backend != bld->hdr.backend)
        return CW_ERR_INVALID;
    if (!cw_grow(&bld->pushed, &bld->cap, bld->n + 1, sizeof *bld->pushed, 4))
        return CW_ERR_NOMEM;
    bld->pushed[bld->n].at = bld->inl.len;
    bld->pushed[bld->n].buf = *buf;
    bld->n++;
    cw_buf_detach(buf, buf->hdr.backend);
    return CW_OK;
}

/* Append inline bytes [from, to) of `frozen` as a shared slice. */
static void push_inline(cw_iobufs *l, const cw_iobuf *frozen, size_t from, size_t to)
{
    cw_iobuf part;
    cw_buf_iobuf_slice(frozen, from, to, &part);
    if (part.len > 0)
        cw_bufs_push(l, &part);
}

cw_iobufs *cw_buf_builder_finish(cw_iobufs_builder *bld)
{
    cw_iobufs *l = cw_buf_bufs_new(bld->hdr.backend);
    if (!l || cw_bufs_reserve(l, 2 * bld->n + 1) != CW_OK) {
        free(l);
        return NULL;
    }
    cw_iobuf frozen;
    cw_buf_mut_freeze(&bld->inl, &frozen);
    size_t at = 0;
    for (size_t i = 0; i < bld->n; i++) {
        push_inline(l, &frozen, at, bld->pushed[i].at);
        at = bld->pushed[i].at;
        cw_bufs_push(l, &bld->pushed[i].buf);
    }
    push_inline(l, &frozen, at, frozen.len);
    cw_buf_iobuf_release(&frozen);
    bld->n = 0;
    cw_buf_builder_release(bld);
    return l;
}
