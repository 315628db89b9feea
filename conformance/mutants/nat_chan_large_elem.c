/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Channel elements larger than 64 bytes are cut to their first 64 bytes;
 * the rest of the receiver's element is left as it was (CHN-001). */
#define CWM_BASE "native"
#include "mutant.h"

static cw_chan *cutting_chan_new(cw_ctx *ctx, size_t elem_size, size_t capacity)
{
    return cwm_base->chan_new(ctx, elem_size > 64 ? 64 : elem_size, capacity);
}

static void mutate(void)
{
    cwm.chan_new = cutting_chan_new;
}
