/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_iobuf_slice(buf, start, end) stops one byte short: the slice is
 * [start, end - 1) (BUF-006). */
#define CWM_BASE "native"
#include "mutant.h"

static int short_slice(const cw_iobuf *buf, size_t start, size_t end, cw_iobuf *out)
{
    return cwm_base_buffers->iobuf_slice(buf, start, end > start ? end - 1 : end, out);
}

static void mutate(void)
{
    cwm_buffers.iobuf_slice = short_slice;
}
