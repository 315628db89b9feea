/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* When several waits of a select can complete, the highest index wins
 * instead of the lowest (SEL-001, CLK-004). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int backwards_select(cw_wait *waits, size_t n, bool block)
{
    for (size_t i = n; i-- > 1;)
        if (cwm_base->select(&waits[i], 1, false) == 0)
            return (int)i;
    return cwm_base->select(waits, n, block);
}

static void mutate(void)
{
    cwm.select = backwards_select;
}
