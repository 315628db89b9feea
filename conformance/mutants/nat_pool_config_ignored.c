/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* The run's network buffer pool is made from the default configuration,
 * whatever cfg.network_buffer_pool says (BUF-026). */
#define CWM_BASE "native"
#include "mutant.h"

static int (*derived_start)(const cw_config *, cw_task_fn, void *, cw_run_result *);

static int default_pool_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    if (!cfg || cfg->size < sizeof(cw_config) ||
        cw_bufpool_config_check(&cfg->network_buffer_pool) != NULL)
        return derived_start(cfg, root, arg, out);
    cw_config plain = *cfg;
    cw_bufpool_config_network(&plain.network_buffer_pool);
    return derived_start(&plain, root, arg, out);
}

static void mutate(void)
{
    derived_start = cwm.start;
    cwm.start = default_pool_start;
}
