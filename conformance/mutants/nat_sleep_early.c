/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A native sleep wakes 1 ms before its deadline (CLK-001, CLK-002). */
#define CWM_BASE "native"
#include "mutant.h"

static void early_sleep_until(cw_wait *w, cw_ctx *ctx, cw_time deadline)
{
    bool shift = deadline > CW_MSEC && deadline != CW_TIME_MAX;
    cwm_base->wait_sleep_until(w, ctx, shift ? deadline - CW_MSEC : deadline);
}

static void mutate(void)
{
    cwm.wait_sleep_until = early_sleep_until;
}
