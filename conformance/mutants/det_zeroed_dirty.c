/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A buffer asked for zeroed (cw_iobuf_mut_zeroed) holds old bytes instead
 * of zeros (cw/iobuf.h, BUF-009). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int dirty_alloc(const cw_backend *b, size_t cap, size_t align, bool zeroed,
                       cw_iobuf_mut *out)
{
    int rc = cwm_base_buffers->mut_alloc(b, cap, align, false, out);
    if (rc == CW_OK && zeroed && out->data)
        memset(out->data, 0xa5, out->cap);
    return rc;
}

static void mutate(void)
{
    cwm_buffers.mut_alloc = dirty_alloc;
}
