/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * entries.c - the buffer entries the reference's backends share, and the two
 * pools each run makes from its configuration.
 */
#include <stdio.h>

#include "buffers/buffers.h"

const cw_buffer_ops cw_buffer_entries = {
    .size = sizeof(cw_buffer_ops),

    .iobuf_copy = cw_buf_iobuf_copy,
    .iobuf_adopt = cw_buf_iobuf_adopt,
    .iobuf_static = cw_buf_iobuf_static,
    .iobuf_clone = cw_buf_iobuf_clone,
    .iobuf_release = cw_buf_iobuf_release,
    .iobuf_slice = cw_buf_iobuf_slice,
    .iobuf_split_to = cw_buf_iobuf_split_to,
    .iobuf_advance = cw_buf_iobuf_advance,
    .iobuf_try_into_mut = cw_buf_iobuf_try_into_mut,
    .iobuf_is_pooled = cw_buf_iobuf_is_pooled,

    .mut_alloc = cw_buf_mut_alloc,
    .mut_release = cw_buf_mut_release,
    .mut_advance = cw_buf_mut_advance,
    .mut_freeze = cw_buf_mut_freeze,
    .mut_is_pooled = cw_buf_mut_is_pooled,

    .bufs_new = cw_buf_bufs_new,
    .bufs_release = cw_buf_bufs_release,
    .bufs_append = cw_buf_bufs_append,
    .bufs_prepend = cw_buf_bufs_prepend,
    .bufs_len = cw_buf_bufs_len,
    .bufs_chunk_count = cw_buf_bufs_chunk_count,
    .bufs_chunk = cw_buf_bufs_chunk,
    .bufs_clone = cw_buf_bufs_clone,
    .bufs_split_to = cw_buf_bufs_split_to,
    .bufs_advance = cw_buf_bufs_advance,
    .bufs_coalesce = cw_buf_bufs_coalesce,

    .mbufs_new = cw_buf_mbufs_new,
    .mbufs_release = cw_buf_mbufs_release,
    .mbufs_append = cw_buf_mbufs_append,
    .mbufs_len = cw_buf_mbufs_len,
    .mbufs_capacity = cw_buf_mbufs_capacity,
    .mbufs_spare = cw_buf_mbufs_spare,
    .mbufs_chunk_count = cw_buf_mbufs_chunk_count,
    .mbufs_chunk = cw_buf_mbufs_chunk,
    .mbufs_put = cw_buf_mbufs_put,
    .mbufs_set_len = cw_buf_mbufs_set_len,
    .mbufs_advance = cw_buf_mbufs_advance,
    .mbufs_freeze = cw_buf_mbufs_freeze,
    .mbufs_coalesce = cw_buf_mbufs_coalesce,

    .builder_new = cw_buf_builder_new,
    .builder_release = cw_buf_builder_release,
    .builder_put = cw_buf_builder_put,
    .builder_push = cw_buf_builder_push,
    .builder_finish = cw_buf_builder_finish,

    .pool_new = cw_buf_pool_new,
    .pool_release = cw_buf_pool_release,
    .pool_try_alloc = cw_buf_pool_try_alloc,
    .pool_alloc = cw_buf_pool_alloc,
    .pool_config = cw_buf_pool_config,
    .pool_stats = cw_buf_pool_stats,
    .runtime_pool = cw_buf_runtime_pool,
};

cw_bufpool *cw_buf_runtime_pool(cw_ctx *ctx, int kind)
{
    if (kind != CW_BUFPOOL_NETWORK && kind != CW_BUFPOOL_STORAGE)
        return NULL;
    return cw_rt_pool(cw_ctx_rt(ctx), kind);
}

int cw_rt_pools_open(const cw_backend *b, const cw_config *cfg, cw_bufpool *pools[2], char *why,
                     size_t whylen)
{
    static const char *names[2] = {"network_buffer_pool", "storage_buffer_pool"};
    const cw_bufpool_config *each[2] = {&cfg->network_buffer_pool, &cfg->storage_buffer_pool};
    pools[0] = pools[1] = NULL;
    for (int i = 0; i < 2; i++) {
        const char *bad = cw_bufpool_config_check(each[i]);
        if (bad) {
            snprintf(why, whylen, "%s: %s", names[i], bad);
            return CW_ERR_INVALID;
        }
    }
    for (int i = 0; i < 2; i++) {
        int rc = cw_buf_pool_new(b, each[i], &pools[i]);
        if (rc != CW_OK) {
            snprintf(why, whylen, "%s: %s", names[i], cw_strerror(rc));
            cw_rt_pools_close(pools);
            return rc;
        }
    }
    return CW_OK;
}

int cw_run_pools_open(const cw_backend *b, const cw_config *cfg, cw_bufpool *pools[2],
                      cw_run_result *out)
{
    return out->status = cw_rt_pools_open(b, cfg, pools, out->message, sizeof out->message);
}

void cw_rt_pools_close(cw_bufpool *pools[2])
{
    for (int i = 0; i < 2; i++) {
        if (pools[i])
            cw_buf_pool_release(pools[i]);
        pools[i] = NULL;
    }
}
