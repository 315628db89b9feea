/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A sleep wakes 1 ns before its deadline: cw_sleep_until(t) returns with
 * cw_current() == t - 1 (CLK-001, CLK-002). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void early_sleep_until(cw_wait *w, cw_ctx *ctx, cw_time deadline)
{
    bool shift = deadline > 0 && deadline != CW_TIME_MAX;
    cwm_base->wait_sleep_until(w, ctx, shift ? deadline - 1 : deadline);
}

static void mutate(void)
{
    cwm.wait_sleep_until = early_sleep_until;
}
