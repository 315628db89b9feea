/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * iobuf_mut.c - cw_iobuf_mut: one owner, fixed capacity.
 *
 * The handle holds the only reference, so nothing here touches the count;
 * freezing hands that reference to a cw_iobuf as it is. Writes and lengths
 * are plain field updates done by the header's inline functions.
 */
#include "buffers/buffers.h"

static bool pow2(size_t v)
{
    return v != 0 && (v & (v - 1)) == 0;
}

int cw_buf_mut_alloc(const cw_backend *b, size_t cap, size_t align, bool zeroed, cw_iobuf_mut *out)
{
    cw_mut_detach(out, b);
    if (!pow2(align))
        return CW_ERR_INVALID;
    if (cap == 0)
        return CW_OK;
    cw_owner *o;
    int rc = cw_owner_heap(cap, align, zeroed, &o);
    if (rc != CW_OK)
        return rc;
    cw_mut_from_owner(out, b, o);
    if (zeroed)
        out->len = cap;
    return CW_OK;
}

void cw_buf_mut_release(cw_iobuf_mut *m)
{
    cw_owner *o = m->owner;
    cw_mut_detach(m, m->hdr.backend);
    if (o)
        cw_owner_free(o);
}

int cw_buf_mut_advance(cw_iobuf_mut *m, size_t n)
{
    if (n > m->len)
        return CW_ERR_INVALID;
    m->data += n;
    m->len -= n;
    m->cap -= n;
    if (m->cap == 0)
        cw_buf_mut_release(m); /* no room left: nothing worth keeping */
    return CW_OK;
}

void cw_buf_mut_freeze(cw_iobuf_mut *m, cw_iobuf *out)
{
    const cw_backend *b = m->hdr.backend;
    cw_buf_detach(out, b);
    if (m->len == 0) {
        cw_buf_mut_release(m);
        return;
    }
    out->data = m->data;
    out->len = m->len;
    out->owner = m->owner;
    cw_mut_detach(m, b);
}

bool cw_buf_mut_is_pooled(const cw_iobuf_mut *m)
{
    const cw_owner *o = m->owner;
    return o && o->kind == CW_OWNER_POOLED;
}
