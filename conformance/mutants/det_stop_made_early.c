/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A stop takes effect when cw_wait_stop makes its wait, not when the wait
 * is first tried (SIG-006): a signal taken in between resolves at once. */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void eager_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value)
{
    cwm_base->wait_stop(w, ctx, value);
    cw_wait probe;
    cwm_base->wait_stop(&probe, ctx, value);
    (void)cwm_base->select(&probe, 1, false); /* makes the stop now */
}

static void mutate(void)
{
    cwm.wait_stop = eager_wait_stop;
}
