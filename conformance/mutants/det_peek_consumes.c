/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_stream_peek consumes what it copies: the next recv no longer sees
 * the bytes peeked (NET-012). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static size_t consuming_peek(cw_stream *s, size_t max, uint8_t *dst)
{
    size_t n = cwm_base_network->stream_peek(s, max, dst);
    cw_iobufs *gone = NULL;
    if (n > 0 && cwm_base_network->stream_recv(s, n, &gone) == CW_OK)
        cw_iobufs_release(gone);
    return n;
}

static void mutate(void)
{
    cwm_network.stream_peek = consuming_peek;
}
