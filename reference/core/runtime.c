/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * runtime.c - what every run has, whatever schedules it: the configuration
 * it was given and the lists of objects it must free when it ends.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

int cw_config_resolve(const cw_config *in, cw_config *cfg, char *why, size_t whylen)
{
    cw_config_default(cfg);
    if (in) {
        if (in->size < offsetof(cw_config, blocking_threads) + sizeof in->blocking_threads) {
            snprintf(why, whylen, "config size %u is too small: use cw_config_default", in->size);
            return CW_ERR_INVALID;
        }
        memcpy(cfg, in, sizeof *cfg < in->size ? sizeof *cfg : in->size);
        cfg->size = sizeof *cfg;
    }
    if (cfg->cycle == 0) {
        snprintf(why, whylen, "cycle duration must be non-zero");
        return CW_ERR_INVALID;
    }
    if (cfg->stack_size == 0 || cfg->stack_size > ((size_t)1 << 30)) {
        snprintf(why, whylen, "stack size must be between 1 byte and 1 GiB, got %zu",
                 cfg->stack_size);
        return CW_ERR_INVALID;
    }
    if (!cw_rate_valid(cfg->network_dial_failure) || !cw_rate_valid(cfg->network_reset) ||
        !cw_storage_faults_valid(&cfg->storage_faults)) {
        snprintf(why, whylen,
                 "a rate must be num/den with num <= den and den > 0 unless num is 0, "
                 "and write_mode CW_KEEP_PREFIX or CW_KEEP_SUBSET");
        return CW_ERR_INVALID;
    }
    if (cfg->blob_layouts.first > cfg->blob_layouts.last ||
        cfg->blob_layouts.last > CW_BLOB_LAYOUT_LATEST) {
        snprintf(why, whylen, "blob_layouts must be a range of known layouts, got %u..=%u",
                 cfg->blob_layouts.first, cfg->blob_layouts.last);
        return CW_ERR_INVALID;
    }
    return CW_OK;
}

int cw_run_begin(const cw_config *cfg, cw_config *resolved, cw_run_result *out)
{
    memset(out, 0, sizeof *out);
    return out->status = cw_config_resolve(cfg, resolved, out->message, sizeof out->message);
}

/* What a run hands out when memory is gone (cw_rt.spent_handle). */
static bool make_spent(cw_rt *rt)
{
    rt->spent_handle = cw_handle_new(rt);
    rt->spent_ctx = cw_ctx_new(rt, NULL, "");
    rt->spent_signal = cw_signal_spent_new(rt);
    if (!rt->spent_handle || !rt->spent_ctx || !rt->spent_signal)
        return false;
    cw_handle_complete(rt->spent_handle, CW_ERR_NOMEM, NULL);
    rt->spent_ctx->exhausted = true;
    return true;
}

int cw_rt_init(cw_rt *rt, const cw_backend *backend, const cw_sched_ops *sched,
               const cw_config *cfg)
{
    memset(rt, 0, sizeof *rt);
    pthread_mutex_init(&rt->lock, NULL);
    for (int i = 0; i < CW_STRIPES; i++)
        pthread_mutex_init(&rt->stripes[i], NULL);
    rt->backend = backend;
    rt->sched = sched;
    rt->cfg = *cfg;
    cw_list_init(&rt->tasks);
    cw_list_init(&rt->contexts);
    cw_list_init(&rt->handles);
    cw_list_init(&rt->chans);
    cw_list_init(&rt->oneshots);
    cw_list_init(&rt->signals);
    cw_list_init(&rt->nodes);
    cw_list_init(&rt->stop_waiters);
    cw_list_init(&rt->signal_waiters);
    if (cw_stack_cache_init(&rt->stacks, 64) != 0 || !make_spent(rt)) {
        cw_rt_free_objects(rt);
        return CW_ERR_NOMEM;
    }
    return CW_OK;
}

#define FREE_ALL(head, type, fn)                                                                   \
    for (cw_list *it_ = (head)->next, *next_; it_ != (head); it_ = next_) {                        \
        next_ = it_->next;                                                                         \
        fn(cw_container_of(it_, type, link));                                                      \
    }

static void node_free(cw_node *n)
{
    cw_list_remove(&n->link);
    free(n);
}

void cw_rt_free_objects(cw_rt *rt)
{
    for (int id = 0; id < CW_EXT_COUNT; id++) /* in slot order: see cw_ext_id */
        cw_ext_close(rt, (cw_ext_id)id);
    FREE_ALL(&rt->contexts, cw_ctx, cw_ctx_free);
    FREE_ALL(&rt->handles, cw_handle, cw_handle_free);
    cw_chan_free_all(&rt->chans);
    cw_oneshot_free_all(&rt->oneshots);
    cw_signal_free_all(&rt->signals);
    /* Last: freeing contexts above may already have released some nodes. */
    FREE_ALL(&rt->nodes, cw_node, node_free);
    cw_stack_cache_free(&rt->stacks);
    pthread_mutex_destroy(&rt->lock);
    for (int i = 0; i < CW_STRIPES; i++)
        pthread_mutex_destroy(&rt->stripes[i]);
}

void cw_rt_lock(cw_rt *rt)
{
    if (rt->threaded)
        pthread_mutex_lock(&rt->lock);
}

void cw_rt_unlock(cw_rt *rt)
{
    if (rt->threaded)
        pthread_mutex_unlock(&rt->lock);
}
