/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* The value a stop signal resolves with is the last stop's, not the first
 * one's (SIG-004). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cwm_ops_seen signal_ops;
static int32_t last_value;
static bool stopped_once;

static void learning_wait_signal(cw_wait *w, cw_signal *s, int32_t *value)
{
    cwm_base->wait_signal(w, s, value);
    cwm_learn(w, &signal_ops);
}

static void remembering_wait_stop(cw_wait *w, cw_ctx *ctx, int32_t value)
{
    cwm_base->wait_stop(w, ctx, value);
    last_value = value;
    stopped_once = true;
}

static int last_wins_select(cw_wait *waits, size_t n, bool block)
{
    int i = cwm_base->select(waits, n, block);
    if (i >= 0 && stopped_once && cwm_is(&waits[i], &signal_ops) && waits[i].result == CW_OK &&
        waits[i].out)
        *(int32_t *)waits[i].out = last_value;
    return i;
}

static void mutate(void)
{
    cwm.wait_signal = learning_wait_signal;
    cwm.wait_stop = remembering_wait_stop;
    cwm.select = last_wins_select;
}
