/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* blocking_threads is ignored: the blocking pool grows to 64 threads
 * whatever bound the run set (NAT-002). */
#define CWM_BASE "native"
#include "mutant.h"

static int (*derived_start)(const cw_config *, cw_task_fn, void *, cw_run_result *);

static int unbounded_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    cw_config wide;
    cw_config_default(&wide);
    if (cfg && cfg->size >= sizeof wide)
        wide = *cfg;
    wide.blocking_threads = 64;
    return derived_start(cfg && cfg->size < sizeof wide ? cfg : &wide, root, arg, out);
}

static void mutate(void)
{
    derived_start = cwm.start;
    cwm.start = unbounded_start;
}
