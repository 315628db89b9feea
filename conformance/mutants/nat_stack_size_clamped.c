/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A stack_size above 1 GiB is clamped to 1 GiB instead of refused with
 * CW_ERR_INVALID (RUN-002). */
#define CWM_BASE "native"
#include "mutant.h"

static int (*derived_start)(const cw_config *, cw_task_fn, void *, cw_run_result *);

static int clamping_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    if (!cfg || cfg->size < sizeof(cw_config) || cfg->stack_size <= ((size_t)1 << 30))
        return derived_start(cfg, root, arg, out);
    cw_config clamped = *cfg;
    clamped.stack_size = (size_t)1 << 30;
    return derived_start(&clamped, root, arg, out);
}

static void mutate(void)
{
    derived_start = cwm.start;
    cwm.start = clamping_start;
}
