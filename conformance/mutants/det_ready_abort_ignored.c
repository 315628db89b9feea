/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_abort on a ready-made handle (cw_handle_ready) does nothing: joins
 * keep returning the handle's result instead of CW_ERR_ABORTED (TASK-007). */
#define CWM_BASE "deterministic"
#include "mutant.h"

#define READY_MAX 256
static cw_handle *ready[READY_MAX];
static size_t nready;

static cw_handle *remembering_ready(cw_ctx *ctx, int result, void *value)
{
    cw_handle *h = cwm_base->handle_ready(ctx, result, value);
    if (h && nready < READY_MAX)
        ready[nready++] = h;
    return h;
}

static void selective_abort(cw_handle *h)
{
    for (size_t i = 0; i < nready; i++)
        if (ready[i] == h)
            return;
    cwm_base->abort(h);
}

static void mutate(void)
{
    cwm.handle_ready = remembering_ready;
    cwm.abort = selective_abort;
}
