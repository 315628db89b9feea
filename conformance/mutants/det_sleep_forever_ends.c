/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A sleep until CW_TIME_MAX, which must never complete, wakes at
 * CW_TIME_MAX - 1 (CLK-003). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void ending_sleep_until(cw_wait *w, cw_ctx *ctx, cw_time deadline)
{
    cwm_base->wait_sleep_until(w, ctx, deadline == CW_TIME_MAX ? deadline - 1 : deadline);
}

static void mutate(void)
{
    cwm.wait_sleep_until = ending_sleep_until;
}
