/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A stop value is kept in 16 bits: cw_stop(ctx, 100000, ...) resolves the
 * signals with 100000 cut to an int16_t (SIG-001). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void narrow_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value)
{
    cwm_base->wait_stop(w, ctx, (int16_t)value);
}

static void mutate(void)
{
    cwm.wait_stop = narrow_wait_stop;
}
