/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* After the peer closed, a recv that needs more than what arrived returns
 * what arrived, padded with zeros to the length asked, and CW_OK, instead
 * of CW_ERR_RECV_FAILED (NET-014). */
#define CWM_BASE "deterministic"
#include "mutant.h"

#include <stdlib.h>

static int padding_recv(cw_stream *s, size_t len, cw_iobufs **out)
{
    uint8_t *held = len <= (1u << 20) ? calloc(len ? len : 1, 1) : NULL;
    size_t n = held ? cwm_base_network->stream_peek(s, len, held) : 0;
    int rc = cwm_base_network->stream_recv(s, len, out);
    if (rc == CW_ERR_RECV_FAILED && held) {
        cw_iobuf b;
        cw_iobufs *l = cwm_base_buffers->bufs_new(cwm_base);
        (void)n;
        if (l && cwm_base_buffers->iobuf_copy(cwm_base, held, len, &b) == CW_OK &&
            cwm_base_buffers->bufs_append(l, &b) == CW_OK) {
            *out = l;
            rc = CW_OK;
        }
    }
    free(held);
    return rc;
}

static void mutate(void)
{
    cwm_network.stream_recv = padding_recv;
}
