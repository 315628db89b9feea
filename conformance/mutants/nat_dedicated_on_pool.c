/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A task spawned with CW_EXEC_DEDICATED runs on the blocking pool instead
 * of a thread of its own, so it waits while the pool is busy (NAT-002). */
#define CWM_BASE "native"
#include "mutant.h"

static void pooled_set_execution(cw_ctx *ctx, int execution)
{
    cwm_base->set_execution(ctx,
                            execution == CW_EXEC_DEDICATED ? CW_EXEC_SHARED_BLOCKING : execution);
}

static void mutate(void)
{
    cwm.set_execution = pooled_set_execution;
}
