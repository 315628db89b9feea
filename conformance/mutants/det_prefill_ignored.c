/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_bufpool_new ignores `prefill`: the pool creates its buffers as they
 * are first asked for (BUF-032). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int lazy_pool_new(const cw_backend *b, const cw_bufpool_config *cfg, cw_bufpool **out)
{
    cw_bufpool_config lazy = *cfg;
    lazy.prefill = false;
    return cwm_base_buffers->pool_new(b, &lazy, out);
}

static void mutate(void)
{
    cwm_buffers.pool_new = lazy_pool_new;
}
