/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_iobufs_advance past the list's length drops every byte and returns
 * CW_OK, instead of CW_ERR_INVALID with the list unchanged (BUF-014). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int clamping_advance(cw_iobufs *l, size_t n)
{
    size_t len = cwm_base_buffers->bufs_len(l);
    return cwm_base_buffers->bufs_advance(l, n > len ? len : n);
}

static void mutate(void)
{
    cwm_buffers.bufs_advance = clamping_advance;
}
