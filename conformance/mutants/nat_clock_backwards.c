/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* The native clock steps back 1 us on every other reading, as a clock read
 * from several unsynchronised sources can (CLK-005, NAT-003). */
#define CWM_BASE "native"
#include "mutant.h"

static atomic_uint readings;

static cw_time jittery_current(cw_ctx *ctx)
{
    cw_time now = cwm_base->current(ctx);
    return atomic_fetch_add(&readings, 1) % 2 ? now - CW_USEC : now;
}

static void mutate(void)
{
    cwm.current = jittery_current;
}
