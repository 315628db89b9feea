/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_iobufs_coalesce copies a list of one chunk into a new buffer instead
 * of giving that chunk itself (BUF-015: same data, no copy). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int copying_coalesce(cw_iobufs *l, cw_bufpool *pool, cw_iobuf *out)
{
    if (cwm_base_buffers->bufs_chunk_count(l) != 1)
        return cwm_base_buffers->bufs_coalesce(l, pool, out);
    const cw_iobuf *c = cwm_base_buffers->bufs_chunk(l, 0);
    cw_iobuf copy;
    int rc = cwm_base_buffers->iobuf_copy(c->hdr.backend, c->data, c->len, &copy);
    if (rc != CW_OK)
        return rc;
    cw_iobuf whole;
    rc = cwm_base_buffers->bufs_coalesce(l, pool, &whole);
    if (rc != CW_OK) {
        cwm_base_buffers->iobuf_release(&copy);
        return rc;
    }
    cwm_base_buffers->iobuf_release(&whole);
    *out = copy;
    return CW_OK;
}

static void mutate(void)
{
    cwm_buffers.bufs_coalesce = copying_coalesce;
}
