/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A stop made while an earlier one still waits for held signals completes
 * at once with CW_OK, instead of together with the first (SIG-004). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static atomic_int stops; /* stop waits made so far, in this process: one case */

static void hasty_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value)
{
    if (atomic_fetch_add(&stops, 1) > 0) {
        cwm_base->wait_ready(w, ctx, CW_OK); /* the later stop: done */
        return;
    }
    cwm_base->wait_stop(w, ctx, value);
}

static void mutate(void)
{
    cwm.wait_stop = hasty_wait_stop;
}
