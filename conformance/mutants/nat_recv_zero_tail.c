/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A TCP recv of more than one byte hands back the right length, but its
 * last byte zeroed (NET-009, NET-011). */
#define CWM_BASE "native"
#include "mutant.h"

static int zeroing_recv(cw_stream *s, size_t len, cw_iobufs **out)
{
    int rc = cwm_base_network->stream_recv(s, len, out);
    if (rc != CW_OK || !*out || cw_iobufs_len(*out) < 2)
        return rc;
    size_t n = cw_iobufs_len(*out);
    cw_iobuf_mut m;
    if (cw_iobuf_mut_with_capacity(&cwm, n, &m) != CW_OK)
        return rc;
    if (cw_iobufs_copy_out(*out, m.data, n) != CW_OK || cw_iobuf_mut_set_len(&m, n) != CW_OK) {
        cw_iobuf_mut_release(&m);
        return rc;
    }
    m.data[n - 1] = 0;
    cw_iobufs *zeroed = cw_iobufs_new(&cwm);
    if (!zeroed) {
        cw_iobuf_mut_release(&m);
        return rc;
    }
    cw_iobuf frozen;
    cw_iobuf_mut_freeze(&m, &frozen);
    if (cw_iobufs_append(zeroed, &frozen) != CW_OK) {
        cw_iobuf_release(&frozen);
        cw_iobufs_release(zeroed);
        return rc;
    }
    cw_iobufs_release(*out);
    *out = zeroed;
    return rc;
}

static void mutate(void)
{
    cwm_network.stream_recv = zeroing_recv;
}
