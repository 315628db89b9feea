/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A bounded channel holds one value more than its capacity before a send
 * waits (CHN-002). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cw_chan *roomy_chan_new(cw_ctx *ctx, size_t elem_size, size_t capacity)
{
    return cwm_base->chan_new(ctx, elem_size, capacity ? capacity + 1 : 0);
}

static void mutate(void)
{
    cwm.chan_new = roomy_chan_new;
}
