/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A stop completes as soon as nothing else in its select can, without
 * waiting for the signals still held to be released (SIG-002). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cwm_ops_seen stop_ops;

static void learning_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value)
{
    cwm_base->wait_stop(w, ctx, value);
    cwm_learn(w, &stop_ops);
}

static int impatient_select(cw_wait *waits, size_t n, bool block)
{
    int i = cwm_base->select(waits, n, false);
    if (i != CW_ERR_WOULD_BLOCK)
        return i;
    for (size_t k = 0; k < n; k++)
        if (cwm_is(&waits[k], &stop_ops)) {
            waits[k].result = CW_OK;
            return (int)k;
        }
    return block ? cwm_base->select(waits, n, true) : i;
}

static void mutate(void)
{
    cwm.wait_stop = learning_wait_stop;
    cwm.select = impatient_select;
}
