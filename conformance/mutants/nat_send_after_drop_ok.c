/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A send to a channel whose receiver was dropped returns CW_OK, the value
 * silently discarded, instead of CW_ERR_CLOSED (CHN-004). */
#define CWM_BASE "native"
#include "mutant.h"

static cwm_ops_seen send_ops;

static void learning_wait_send(cw_wait *w, cw_chan *c, const void *elem)
{
    cwm_base->wait_send(w, c, elem);
    cwm_learn(w, &send_ops);
}

static int hiding_select(cw_wait *waits, size_t n, bool block)
{
    int i = cwm_base->select(waits, n, block);
    if (i >= 0 && cwm_is(&waits[i], &send_ops) && waits[i].result == CW_ERR_CLOSED)
        waits[i].result = CW_OK;
    return i;
}

static void mutate(void)
{
    cwm.wait_send = learning_wait_send;
    cwm.select = hiding_select;
}
