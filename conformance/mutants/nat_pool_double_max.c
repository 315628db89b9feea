/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A buffer pool lets each class create twice max_per_class buffers before
 * it is exhausted, while reporting the configuration it was given
 * (BUF-020, BUF-021). */
#define CWM_BASE "native"
#include "mutant.h"

static int generous_pool_new(const cw_backend *b, const cw_bufpool_config *cfg, cw_bufpool **out)
{
    cw_bufpool_config twice = *cfg;
    if (cfg->max_per_class > 0 && cfg->max_per_class < UINT32_MAX / 2)
        twice.max_per_class = cfg->max_per_class * 2;
    return cwm_base_buffers->pool_new(b, &twice, out);
}

static void honest_looking_config(const cw_bufpool *pool, cw_bufpool_config *out)
{
    cwm_base_buffers->pool_config(pool, out);
    out->max_per_class /= 2;
}

static int honest_looking_stats(const cw_bufpool *pool, size_t cls, cw_bufpool_stats *out)
{
    int rc = cwm_base_buffers->pool_stats(pool, cls, out);
    if (rc == CW_OK)
        out->max_buffers /= 2;
    return rc;
}

static void mutate(void)
{
    cwm_buffers.pool_new = generous_pool_new;
    cwm_buffers.pool_config = honest_looking_config;
    cwm_buffers.pool_stats = honest_looking_stats;
}
