/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_recover drops the checkpoint it was asked for: *next is NULL after a
 * recovered run, so a history ends after one crash (DET-008, DET-011). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int (*derived_recover)(cw_checkpoint *, cw_task_fn, void *, cw_run_result *,
                              cw_checkpoint **);

static int forgetful_recover(cw_checkpoint *cp, cw_task_fn root, void *arg, cw_run_result *out,
                             cw_checkpoint **next)
{
    int rc = derived_recover(cp, root, arg, out, next);
    if (next && *next) {
        cwm.checkpoint_free(*next);
        *next = NULL;
    }
    return rc;
}

static void mutate(void)
{
    derived_recover = cwm.recover;
    cwm.recover = forgetful_recover;
}
