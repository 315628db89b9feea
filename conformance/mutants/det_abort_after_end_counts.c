/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Aborting a task that already ended turns its result into an abort:
 * joins made after the cw_abort return CW_ERR_CLOSED instead of the
 * task's own result (TASK-002: aborting an ended task does nothing). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cwm_set ended_then_aborted; /* the join waits' objects */
static cwm_ops_seen join_kind;

static void marking_abort(cw_handle *h)
{
    cw_wait probe;
    void *value;
    cwm_base->wait_join(&probe, h, &value);
    cwm_learn(&probe, &join_kind);
    if (cwm_base->select(&probe, 1, false) == 0)
        cwm_set_add(&ended_then_aborted, probe.object); /* it had ended */
    cwm_base->abort(h);
}

static int rewriting_select(cw_wait *waits, size_t n, bool block)
{
    int won = cwm_base->select(waits, n, block);
    if (won >= 0 && cwm_is(&waits[won], &join_kind) &&
        cwm_set_has(&ended_then_aborted, waits[won].object))
        waits[won].result = CW_ERR_CLOSED;
    return won;
}

static void mutate(void)
{
    cwm.abort = marking_abort;
    cwm.select = rewriting_select;
}
