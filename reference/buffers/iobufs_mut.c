/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * iobufs_mut.c - cw_iobufs_mut: mutable chunks filled as one sequence.
 *
 * The list keeps every chunk that still has capacity, even one whose bytes
 * were all read, so space a caller set up is not lost. Writes go after the
 * last readable byte: into the free tail of the last chunk holding bytes,
 * then into the chunks after it.
 */
#include <stdlib.h>
#include <string.h>

#include "buffers/buffers.h"

cw_iobufs_mut *cw_buf_mbufs_new(const cw_backend *b)
{
    cw_iobufs_mut *l = calloc(1, sizeof *l);
    if (l)
        l->hdr.backend = b;
    return l;
}

static void release_chunks(cw_iobufs_mut *l)
{
    for (size_t i = 0; i < l->n; i++)
        cw_buf_mut_release(&l->chunk[i]);
    l->n = 0;
}

void cw_buf_mbufs_release(cw_iobufs_mut *l)
{
    release_chunks(l);
    free(l->chunk);
    free(l);
}

int cw_buf_mbufs_append(cw_iobufs_mut *l, cw_iobuf_mut *m)
{
    if (m->cap == 0) {
        cw_iobuf_mut_release(m);
        return CW_OK;
    }
    if (m->hdr.backend != l->hdr.backend)
        return CW_ERR_INVALID;
    if (!cw_grow(&l->chunk, &l->cap, l->n + 1, sizeof *l->chunk, 4))
        return CW_ERR_NOMEM;
    l->chunk[l->n++] = *m;
    cw_mut_detach(m, m->hdr.backend);
    return CW_OK;
}

size_t cw_buf_mbufs_len(const cw_iobufs_mut *l)
{
    size_t len = 0;
    for (size_t i = 0; i < l->n; i++)
        len += l->chunk[i].len;
    return len;
}

size_t cw_buf_mbufs_capacity(const cw_iobufs_mut *l)
{
    size_t cap = 0;
    for (size_t i = 0; i < l->n; i++)
        cap += l->chunk[i].cap;
    return cap;
}

/* Where writing goes on: the last chunk with readable bytes, else the first. */
static size_t write_index(const cw_iobufs_mut *l)
{
    for (size_t i = l->n; i > 0; i--)
        if (l->chunk[i - 1].len > 0)
            return i - 1;
    return 0;
}

size_t cw_buf_mbufs_spare(const cw_iobufs_mut *l)
{
    size_t spare = 0;
    for (size_t i = write_index(l); i < l->n; i++)
        spare += l->chunk[i].cap - l->chunk[i].len;
    return spare;
}

size_t cw_buf_mbufs_chunk_count(const cw_iobufs_mut *l)
{
    return l->n;
}

const cw_iobuf_mut *cw_buf_mbufs_chunk(const cw_iobufs_mut *l, size_t i)
{
    return i < l->n ? &l->chunk[i] : NULL;
}

int cw_buf_mbufs_put(cw_iobufs_mut *l, const void *src, size_t n)
{
    if (n > cw_buf_mbufs_spare(l))
        return CW_ERR_INVALID;
    const uint8_t *p = src;
    for (size_t i = write_index(l); n > 0; i++) {
        cw_iobuf_mut *c = &l->chunk[i];
        size_t take = c->cap - c->len < n ? c->cap - c->len : n;
        if (take > 0) {
            memcpy(c->data + c->len, p, take);
            c->len += take;
            p += take;
            n -= take;
        }
    }
    return CW_OK;
}

int cw_buf_mbufs_set_len(cw_iobufs_mut *l, size_t n)
{
    if (n > cw_buf_mbufs_capacity(l))
        return CW_ERR_INVALID;
    for (size_t i = 0; i < l->n; i++) {
        cw_iobuf_mut *c = &l->chunk[i];
        c->len = c->cap < n ? c->cap : n;
        n -= c->len;
    }
    return CW_OK;
}

int cw_buf_mbufs_advance(cw_iobufs_mut *l, size_t n)
{
    if (n > cw_buf_mbufs_len(l))
        return CW_ERR_INVALID;
    size_t kept = 0;
    for (size_t i = 0; i < l->n; i++) {
        cw_iobuf_mut *c = &l->chunk[i];
        size_t take = c->len < n ? c->len : n;
        if (take > 0) {
            cw_buf_mut_advance(c, take); /* a chunk left without capacity is released */
            n -= take;
        }
        if (c->cap > 0)
            l->chunk[kept++] = *c;
    }
    l->n = kept;
    return CW_OK;
}

cw_iobufs *cw_buf_mbufs_freeze(cw_iobufs_mut *l)
{
    cw_iobufs *out = cw_buf_bufs_new(l->hdr.backend);
    if (!out || cw_bufs_reserve(out, l->n) != CW_OK) {
        free(out);
        return NULL;
    }
    for (size_t i = 0; i < l->n; i++) {
        cw_iobuf frozen;
        cw_buf_mut_freeze(&l->chunk[i], &frozen);
        if (frozen.len > 0)
            cw_bufs_push(out, &frozen);
    }
    l->n = 0;
    return out;
}

int cw_buf_mbufs_coalesce(cw_iobufs_mut *l, cw_bufpool *pool, cw_iobuf_mut *out)
{
    cw_mut_detach(out, l->hdr.backend);
    if (l->n == 1) {
        *out = l->chunk[0];
        l->n = 0;
        return CW_OK;
    }
    size_t len = cw_buf_mbufs_len(l);
    int rc = pool ? cw_bufpool_alloc(pool, len, out)
                  : cw_buf_mut_alloc(l->hdr.backend, len, 1, false, out);
    if (rc != CW_OK)
        return rc;
    for (size_t i = 0; i < l->n; i++)
        cw_iobuf_mut_put(out, l->chunk[i].data, l->chunk[i].len);
    release_chunks(l);
    return CW_OK;
}
