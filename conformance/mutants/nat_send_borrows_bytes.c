/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A send hands the transport views of the caller's bytes that hold no
 * reference: a send given up while the kernel still sends its rest (the
 * io_uring mode) goes on reading bytes the caller has released (NET-036). */
#define CWM_BASE "native"
#include "mutant.h"

/* `bufs` again as static views of the same bytes, or NULL. */
static cw_iobufs *borrowed(const cw_iobufs *bufs)
{
    cw_iobufs *l = cw_iobufs_new(&cwm);
    const cw_iobuf *c;
    for (size_t i = 0; l && (c = cw_iobufs_chunk(bufs, i)); i++) {
        cw_iobuf view;
        if (cw_iobuf_static(&cwm, c->data, c->len, &view) != CW_OK ||
            cw_iobufs_append(l, &view) != CW_OK) {
            cw_iobufs_release(l);
            return NULL;
        }
    }
    return l;
}

static int borrowing_send(cw_sink *s, const cw_iobufs *bufs)
{
    cw_iobufs *l = borrowed(bufs);
    if (!l)
        return cwm_base_network->sink_send(s, bufs);
    int rc = cwm_base_network->sink_send(s, l);
    cw_iobufs_release(l);
    return rc;
}

static void mutate(void)
{
    cwm_network.sink_send = borrowing_send;
}
