/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_stop with a timeout reports CW_OK when the time ran out with signals
 * still held, instead of CW_ERR_TIMEOUT (SIG-005). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cwm_ops_seen stop_ops;

static void learning_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value)
{
    cwm_base->wait_stop(w, ctx, value);
    cwm_learn(w, &stop_ops);
}

/* cw_stop's timeout is a select of the stop and a sleep: the sleep's win
 * is reported as the stop's. */
static int hopeful_select(cw_wait *waits, size_t n, bool block)
{
    int i = cwm_base->select(waits, n, block);
    if (i == 1 && n == 2 && cwm_is(&waits[0], &stop_ops)) {
        waits[0].result = CW_OK;
        return 0;
    }
    return i;
}

static void mutate(void)
{
    cwm.wait_stop = learning_wait_stop;
    cwm.select = hopeful_select;
}
