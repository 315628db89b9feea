/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_yield returns at once without letting the other ready tasks run
 * (TASK-009). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void lazy_yield(cw_ctx *ctx)
{
    (void)ctx;
}

static void mutate(void)
{
    cwm.yield = lazy_yield;
}
