/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Releasing a handle aborts its task, as if a handle owned its task
 * (TASK-003: a released task must run on to its end). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void aborting_release(cw_handle *h)
{
    cwm_base->abort(h);
    cwm_base->handle_release(h);
}

static void mutate(void)
{
    cwm.handle_release = aborting_release;
}
