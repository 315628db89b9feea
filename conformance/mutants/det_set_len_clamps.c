/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_iobufs_mut_set_len above the list's capacity fills every chunk and
 * returns CW_OK, instead of refusing with CW_ERR_INVALID (BUF-016). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int clamping_set_len(cw_iobufs_mut *l, size_t n)
{
    size_t cap = cwm_base_buffers->mbufs_capacity(l);
    return cwm_base_buffers->mbufs_set_len(l, n > cap ? cap : n);
}

static void mutate(void)
{
    cwm_buffers.mbufs_set_len = clamping_set_len;
}
