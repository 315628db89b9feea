/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Joining a task that was aborted returns CW_OK (with a NULL value) instead
 * of CW_ERR_CLOSED (TASK-002, TASK-004). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cwm_ops_seen join_ops;

static void learning_wait_join(cw_wait *w, cw_handle *h, void **out)
{
    cwm_base->wait_join(w, h, out);
    cwm_learn(w, &join_ops);
}

static int forgiving_select(cw_wait *waits, size_t n, bool block)
{
    int i = cwm_base->select(waits, n, block);
    if (i >= 0 && cwm_is(&waits[i], &join_ops) && waits[i].result == CW_ERR_CLOSED)
        waits[i].result = CW_OK;
    return i;
}

static void mutate(void)
{
    cwm.wait_join = learning_wait_join;
    cwm.select = forgiving_select;
}
