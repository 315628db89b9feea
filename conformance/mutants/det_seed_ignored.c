/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* The seed is ignored: every deterministic run uses seed 42, so the
 * schedule and random bytes never change with the seed (DET-002). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int (*derived_start)(const cw_config *, cw_task_fn, void *, cw_run_result *);

static int fixed_seed_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    cw_config fixed;
    cw_config_default(&fixed);
    if (cfg && cfg->size >= sizeof fixed)
        fixed = *cfg;
    fixed.seed = 42;
    return derived_start(cfg && cfg->size < sizeof fixed ? cfg : &fixed, root, arg, out);
}

static void mutate(void)
{
    derived_start = cwm.start;
    cwm.start = fixed_seed_start;
}
