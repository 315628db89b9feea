/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_iobufs_prepend adds the chunk at the end of the list instead of the
 * front (BUF-013). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int appending_prepend(cw_iobufs *l, cw_iobuf *buf)
{
    return cwm_base_buffers->bufs_append(l, buf);
}

static void mutate(void)
{
    cwm_buffers.bufs_prepend = appending_prepend;
}
