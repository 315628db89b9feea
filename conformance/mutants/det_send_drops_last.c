/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A send of more than one byte loses its last byte on the way: the peer
 * receives all but the final byte of each message (NET-008, NET-009). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cw_iobufs *without_last_byte(const cw_iobufs *bufs)
{
    cw_iobufs *copy = cw_iobufs_clone(bufs);
    size_t len = cw_iobufs_len(copy);
    cw_iobufs *head = NULL;
    if (len > 1 && cw_iobufs_split_to(copy, len - 1, &head) == CW_OK) {
        cw_iobufs_release(copy);
        return head;
    }
    return copy;
}

static int lossy_send(cw_sink *s, const cw_iobufs *bufs)
{
    cw_iobufs *cut = without_last_byte(bufs);
    int rc = cwm_base_network->sink_send(s, cut);
    cw_iobufs_release(cut);
    return rc;
}

static void mutate(void)
{
    cwm_network.sink_send = lossy_send;
}
