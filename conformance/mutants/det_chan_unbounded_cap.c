/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* An unbounded channel is quietly bounded at 64 values: the 65th send
 * without a receive waits (CHN-002). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cw_chan *bounded_chan_new(cw_ctx *ctx, size_t elem_size, size_t capacity)
{
    return cwm_base->chan_new(ctx, elem_size, capacity ? capacity : 64);
}

static void mutate(void)
{
    cwm.chan_new = bounded_chan_new;
}
