/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * iobuf.c - cw_iobuf: an immutable view that shares its bytes.
 *
 * A view is (data, len, owner). Clone, slice and split only count one more
 * reference on the owner; no byte moves. A view that becomes empty lets go
 * of its owner at once, so it never keeps a pooled buffer out of its pool.
 */
#include <stdlib.h>
#include <string.h>

#include "buffers/buffers.h"

int cw_buf_iobuf_copy(const cw_backend *b, const void *src, size_t len, cw_iobuf *out)
{
    cw_buf_detach(out, b);
    if (!src && len > 0)
        return CW_ERR_INVALID;
    if (len == 0)
        return CW_OK;
    cw_owner *o;
    int rc = cw_owner_heap(len, 1, false, &o);
    if (rc != CW_OK)
        return rc;
    memcpy(o->base, src, len);
    out->data = o->base;
    out->len = len;
    out->owner = o;
    return CW_OK;
}

int cw_buf_iobuf_adopt(const cw_backend *b, void *data, size_t len, cw_release_fn release,
                       void *arg, cw_iobuf *out)
{
    cw_buf_detach(out, b);
    if (!release || (!data && len > 0))
        return CW_ERR_INVALID;
    if (len == 0) {
        release(data, arg); /* nothing to view: the bytes go back at once */
        return CW_OK;
    }
    cw_owner *o = cw_owner_adopted(data, len, release, arg);
    if (!o)
        return CW_ERR_NOMEM;
    out->data = data;
    out->len = len;
    out->owner = o;
    return CW_OK;
}

void cw_buf_iobuf_static(const cw_backend *b, const void *data, size_t len, cw_iobuf *out)
{
    cw_buf_detach(out, b);
    if (len > 0) {
        out->data = data;
        out->len = len;
    }
}

void cw_buf_iobuf_clone(const cw_iobuf *buf, cw_iobuf *out)
{
    *out = *buf;
    if (buf->owner)
        cw_owner_ref(buf->owner);
}

void cw_buf_iobuf_release(cw_iobuf *buf)
{
    cw_owner *o = buf->owner;
    cw_buf_detach(buf, buf->hdr.backend);
    if (o)
        cw_owner_unref(o);
}

int cw_buf_iobuf_slice(const cw_iobuf *buf, size_t start, size_t end, cw_iobuf *out)
{
    cw_buf_detach(out, buf->hdr.backend);
    if (start > end || end > buf->len)
        return CW_ERR_INVALID;
    if (start == end)
        return CW_OK;
    cw_buf_iobuf_clone(buf, out);
    out->data += start;
    out->len = end - start;
    return CW_OK;
}

int cw_buf_iobuf_split_to(cw_iobuf *buf, size_t at, cw_iobuf *head)
{
    cw_buf_detach(head, buf->hdr.backend);
    if (at > buf->len)
        return CW_ERR_INVALID;
    if (at == 0)
        return CW_OK;
    if (at == buf->len) {
        *head = *buf; /* the whole view moves: no count changes */
        cw_buf_detach(buf, buf->hdr.backend);
        return CW_OK;
    }
    cw_buf_iobuf_clone(buf, head);
    head->len = at;
    buf->data += at;
    buf->len -= at;
    return CW_OK;
}

int cw_buf_iobuf_advance(cw_iobuf *buf, size_t n)
{
    if (n > buf->len)
        return CW_ERR_INVALID;
    if (n == buf->len) {
        cw_buf_iobuf_release(buf);
        return CW_OK;
    }
    buf->data += n;
    buf->len -= n;
    return CW_OK;
}

/* A unique view of native bytes becomes mutable where it stands: its
 * capacity runs to the end of the allocation, and whatever was before the
 * view is not reachable any more. */
bool cw_buf_iobuf_try_into_mut(cw_iobuf *buf, cw_iobuf_mut *out)
{
    const cw_backend *b = buf->hdr.backend;
    cw_mut_detach(out, b);
    cw_owner *o = buf->owner;
    if (!o)
        return buf->len == 0;
    if (!cw_owner_native(o) || !cw_owner_unique(o))
        return false;
    out->data = (uint8_t *)buf->data;
    out->len = buf->len;
    out->cap = (size_t)(o->end - out->data);
    out->owner = o;
    cw_buf_detach(buf, b);
    return true;
}

bool cw_buf_iobuf_is_pooled(const cw_iobuf *buf)
{
    const cw_owner *o = buf->owner;
    return o && o->kind == CW_OWNER_POOLED;
}
