/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * iobufs.c - cw_iobufs: immutable chunks that read as one byte sequence.
 *
 * The chunks sit in chunk[head .. head + n) of one array, so consuming from
 * the front is a move of `head` and prepending usually finds room before
 * it. Empty chunks are never kept: the list's chunks are exactly the
 * non-empty parts, in order.
 */
#include <stdlib.h>
#include <string.h>

#include "buffers/buffers.h"

cw_iobufs *cw_buf_bufs_new(const cw_backend *b)
{
    cw_iobufs *l = calloc(1, sizeof *l);
    if (l)
        l->hdr.backend = b;
    return l;
}

void cw_buf_bufs_release(cw_iobufs *l)
{
    for (size_t i = 0; i < l->n; i++)
        cw_buf_iobuf_release(&l->chunk[l->head + i]);
    free(l->chunk);
    free(l);
}

/* Make the array hold `n + extra` chunks with `front` free slots before
 * them: a new array when the current one lacks the room. */
static int reshape(cw_iobufs *l, size_t extra, size_t front)
{
    if (extra > SIZE_MAX / 4 - l->n)
        return CW_ERR_NOMEM;
    size_t need = front + l->n + extra;
    if (l->head >= front && l->head + l->n + extra <= l->cap)
        return CW_OK;
    size_t cap = l->cap ? l->cap : 4;
    while (cap < need)
        cap *= 2;
    cw_iobuf *chunk = malloc(cap * sizeof *chunk);
    if (!chunk)
        return CW_ERR_NOMEM;
    if (l->n)
        memcpy(chunk + front, l->chunk + l->head, l->n * sizeof *chunk);
    free(l->chunk);
    l->chunk = chunk;
    l->head = front;
    l->cap = cap;
    return CW_OK;
}

int cw_bufs_reserve(cw_iobufs *l, size_t extra)
{
    return reshape(l, extra, 0);
}

void cw_bufs_push(cw_iobufs *l, cw_iobuf *buf)
{
    l->chunk[l->head + l->n++] = *buf;
    l->len += buf->len;
    cw_buf_detach(buf, buf->hdr.backend);
}

/* Common checks of append and prepend: 1 when `buf` is to be dropped. */
static int admit(const cw_iobufs *l, cw_iobuf *buf)
{
    if (buf->len == 0) {
        cw_iobuf_release(buf);
        return 1;
    }
    return buf->hdr.backend == l->hdr.backend ? CW_OK : CW_ERR_INVALID;
}

int cw_buf_bufs_append(cw_iobufs *l, cw_iobuf *buf)
{
    int rc = admit(l, buf);
    if (rc != CW_OK)
        return rc < 0 ? rc : CW_OK;
    if ((rc = reshape(l, 1, 0)) != CW_OK)
        return rc;
    cw_bufs_push(l, buf);
    return CW_OK;
}

int cw_buf_bufs_prepend(cw_iobufs *l, cw_iobuf *buf)
{
    int rc = admit(l, buf);
    if (rc != CW_OK)
        return rc < 0 ? rc : CW_OK;
    /* A new array keeps as much room in front as there are chunks, so a
     * run of prepends costs amortised constant time too. */
    if (l->head == 0 && (rc = reshape(l, 0, l->n + 1)) != CW_OK)
        return rc;
    l->chunk[--l->head] = *buf;
    l->n++;
    l->len += buf->len;
    cw_buf_detach(buf, buf->hdr.backend);
    return CW_OK;
}

size_t cw_buf_bufs_len(const cw_iobufs *l)
{
    return l->len;
}

size_t cw_buf_bufs_chunk_count(const cw_iobufs *l)
{
    return l->n;
}

const cw_iobuf *cw_buf_bufs_chunk(const cw_iobufs *l, size_t i)
{
    return i < l->n ? &l->chunk[l->head + i] : NULL;
}

cw_iobufs *cw_buf_bufs_clone(const cw_iobufs *l)
{
    cw_iobufs *c = cw_buf_bufs_new(l->hdr.backend);
    if (!c || cw_bufs_reserve(c, l->n) != CW_OK) {
        free(c);
        return NULL;
    }
    for (size_t i = 0; i < l->n; i++) {
        cw_iobuf chunk;
        cw_buf_iobuf_clone(&l->chunk[l->head + i], &chunk);
        cw_bufs_push(c, &chunk);
    }
    return c;
}

/* Drop the first `n` bytes (n <= len): whole chunks are released, the
 * chunk across the boundary is advanced. */
static void consume(cw_iobufs *l, size_t n)
{
    l->len -= n;
    while (n > 0) {
        cw_iobuf *c = &l->chunk[l->head];
        if (c->len > n) {
            c->data += n;
            c->len -= n;
            return;
        }
        n -= c->len;
        cw_buf_iobuf_release(c);
        l->head++;
        l->n--;
    }
}

int cw_buf_bufs_advance(cw_iobufs *l, size_t n)
{
    if (n > l->len)
        return CW_ERR_INVALID;
    consume(l, n);
    return CW_OK;
}

int cw_buf_bufs_split_to(cw_iobufs *l, size_t at, cw_iobufs **head)
{
    *head = NULL;
    if (at > l->len)
        return CW_ERR_INVALID;
    /* Count the chunks the head needs first, so that nothing can fail once
     * the list starts to change. */
    size_t k = 0, covered = 0;
    while (covered < at)
        covered += l->chunk[l->head + k++].len;
    cw_iobufs *h = cw_buf_bufs_new(l->hdr.backend);
    if (!h || cw_bufs_reserve(h, k) != CW_OK) {
        free(h);
        return CW_ERR_NOMEM;
    }
    for (size_t i = 0; i < k; i++) {
        cw_iobuf *c = &l->chunk[l->head + i];
        size_t want = at - h->len;
        cw_iobuf part;
        if (c->len <= want)
            cw_buf_iobuf_clone(c, &part);
        else
            cw_buf_iobuf_slice(c, 0, want, &part);
        cw_bufs_push(h, &part);
    }
    consume(l, at);
    *head = h;
    return CW_OK;
}

/* One buffer of all `len` bytes, copied, from `pool` when there is one. */
static int merge(const cw_iobufs *l, cw_bufpool *pool, cw_iobuf *out)
{
    cw_iobuf_mut m;
    int rc = pool ? cw_bufpool_alloc(pool, l->len, &m)
                  : cw_buf_mut_alloc(l->hdr.backend, l->len, 1, false, &m);
    if (rc != CW_OK)
        return rc;
    for (size_t i = 0; i < l->n; i++) {
        const cw_iobuf *c = &l->chunk[l->head + i];
        cw_iobuf_mut_put(&m, c->data, c->len);
    }
    cw_iobuf_mut_freeze(&m, out);
    return CW_OK;
}

int cw_buf_bufs_coalesce(cw_iobufs *l, cw_bufpool *pool, cw_iobuf *out)
{
    cw_buf_detach(out, l->hdr.backend);
    if (l->n == 1) {
        *out = l->chunk[l->head];
    } else if (l->n > 1) {
        int rc = merge(l, pool, out);
        if (rc != CW_OK)
            return rc;
        for (size_t i = 0; i < l->n; i++)
            cw_buf_iobuf_release(&l->chunk[l->head + i]);
    }
    l->head = l->n = l->len = 0;
    return CW_OK;
}
