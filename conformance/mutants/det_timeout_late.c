/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* The run timeout fires one cycle late: a run ends with
 * CW_ERR_RUN_TIMEOUT at start + timeout + cycle (RUN-005). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int (*derived_start)(const cw_config *, cw_task_fn, void *, cw_run_result *);

static int late_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    cw_config late;
    cw_config_default(&late);
    if (cfg && cfg->size >= sizeof late)
        late = *cfg;
    if (late.timeout != CW_FOREVER && late.timeout < CW_FOREVER - late.cycle)
        late.timeout += late.cycle;
    return derived_start(cfg && cfg->size < sizeof late ? cfg : &late, root, arg, out);
}

static void mutate(void)
{
    derived_start = cwm.start;
    cwm.start = late_start;
}
