/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_iobufs_split_to gives the head as fresh copies of its chunks, chunk
 * for chunk, instead of the chunks themselves (BUF-014: without copying a
 * byte). */
#define CWM_BASE "deterministic"
#include "mutant.h"

/* Every chunk of `l` replaced by a copy of its bytes, in order. */
static void copy_chunks(cw_iobufs *l)
{
    size_t n = cwm_base_buffers->bufs_chunk_count(l);
    for (size_t i = 0; i < n; i++) {
        const cw_iobuf *c = cwm_base_buffers->bufs_chunk(l, 0);
        cw_iobuf copy;
        if (cwm_base_buffers->iobuf_copy(c->hdr.backend, c->data, c->len, &copy) != CW_OK)
            return;
        cw_iobufs *first = NULL;
        if (cwm_base_buffers->bufs_split_to(l, c->len, &first) != CW_OK) {
            cwm_base_buffers->iobuf_release(&copy);
            return;
        }
        cwm_base_buffers->bufs_release(first);
        if (cwm_base_buffers->bufs_append(l, &copy) != CW_OK)
            cwm_base_buffers->iobuf_release(&copy);
    }
}

static int copying_split(cw_iobufs *l, size_t at, cw_iobufs **head)
{
    int rc = cwm_base_buffers->bufs_split_to(l, at, head);
    if (rc == CW_OK && *head)
        copy_chunks(*head);
    return rc;
}

static void mutate(void)
{
    cwm_buffers.bufs_split_to = copying_split;
}
