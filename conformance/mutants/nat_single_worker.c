/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* worker_threads is ignored: every native run has a single worker thread,
 * so shared tasks never run at the same time (NAT-001). */
#define CWM_BASE "native"
#include "mutant.h"

static int (*derived_start)(const cw_config *, cw_task_fn, void *, cw_run_result *);

static int one_worker_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    cw_config one;
    cw_config_default(&one);
    if (cfg && cfg->size >= sizeof one)
        one = *cfg;
    one.worker_threads = 1;
    return derived_start(cfg && cfg->size < sizeof one ? cfg : &one, root, arg, out);
}

static void mutate(void)
{
    derived_start = cwm.start;
    cwm.start = one_worker_start;
}
