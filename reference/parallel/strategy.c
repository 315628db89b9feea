/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * strategy.c - the strategy object and the task that ends its pool.
 *
 * The pool's threads must be gone when the run ends (PAR-008), but the
 * public interface has no "at the end of the run" hook. It has something
 * as good: every task still alive is unwound at the end, cleanup handlers
 * and all. So a strategy spawns a keeper task that parks forever with a
 * cleanup handler that stops the pool. Being supervised from the caller's
 * context, the keeper also ends, and stops the pool, when that task ends.
 *
 * The keeper must be running (its handler pushed) before any thread
 * starts, otherwise a keeper aborted before its first run would leave
 * threads behind; cw_strategy_new waits for its word. A keeper that ends
 * without running leaves the strategy without a pool: it runs inline.
 *
 * On a deterministic backend there is no pool and no keeper at all.
 */
#include <stdlib.h>

#include "parallel/parallel.h"

static void strategy_unref(cw_strategy *s)
{
    if (atomic_fetch_sub(&s->refs, 1) == 1) {
        cw_pool_destroy(&s->pool);
        pthread_mutex_destroy(&s->lock);
        free(s);
    }
}

static void keeper_unwind(void *arg)
{
    cw_strategy *s = arg;
    cw_pool_stop(&s->pool);
    pthread_mutex_lock(&s->lock);
    s->keeper_gone = true;
    pthread_mutex_unlock(&s->lock);
    strategy_unref(s);
}

static void *keeper_main(cw_ctx *ctx, void *arg)
{
    cw_strategy *s = arg;
    char unit = 1;
    CW_CLEANUP_PUSH(ctx, keeper_unwind, s);
    cw_oneshot_send(s->started, &unit); /* a creator aborted meanwhile no longer listens */
    cw_wait forever = cw_wait_pending(ctx);
    cw_select(&forever, 1);
    CW_CLEANUP_POP(ctx, true);
    return NULL;
}

/* The creator was aborted while waiting for the keeper. The keeper's own
 * reference goes with the keeper, if it ever runs. */
static void creator_unwind(void *arg)
{
    cw_strategy *s = arg;
    cw_pool_stop(&s->pool);
    strategy_unref(s);
}

/* A keeper that ended without running will never stop a pool: keep none. */
static void keeper_never_ran(cw_strategy *s)
{
    cw_handle_release(s->keeper);
    s->keeper = NULL;
    s->keeper_gone = true;
    cw_pool_stop(&s->pool);
    strategy_unref(s);
}

static int start_keeper(cw_strategy *s, cw_ctx *ctx)
{
    s->started = cw_oneshot_new(ctx, 1);
    if (!s->started)
        return CW_ERR_NOMEM;
    atomic_fetch_add(&s->refs, 1); /* the keeper's */
    s->keeper_gone = false;
    s->keeper = cw_spawn(cw_child(ctx, "strategy"), keeper_main, s);
    if (!s->keeper) {
        cw_oneshot_sender_drop(s->started);
        cw_oneshot_receiver_drop(s->started);
        s->keeper_gone = true;
        atomic_fetch_sub(&s->refs, 1);
        return CW_ERR_NOMEM;
    }
    char unit;
    cw_wait w[2] = {cw_wait_oneshot(s->started, &unit), cw_wait_join(s->keeper, NULL)};
    int i;
    CW_CLEANUP_PUSH(ctx, creator_unwind, s);
    i = cw_select(w, 2);
    CW_CLEANUP_POP(ctx, false);
    if (i != 0) {
        cw_oneshot_receiver_drop(s->started);
        keeper_never_ran(s);
    }
    return CW_OK;
}

int cw_strategy_new(cw_ctx *ctx, size_t parallelism, cw_strategy **out)
{
    *out = NULL;
    if (parallelism == 0 || parallelism > CW_STRATEGY_MAX_PARALLELISM)
        return CW_ERR_INVALID;
    cw_strategy *s = calloc(1, sizeof *s);
    if (!s)
        return CW_ERR_NOMEM;
    s->parallelism = parallelism;
    s->inline_only = (cw__backend_of(ctx)->capabilities & CW_CAP_DETERMINISTIC) != 0;
    cw_pool_init(&s->pool, parallelism);
    pthread_mutex_init(&s->lock, NULL);
    atomic_init(&s->refs, 1);
    s->keeper_gone = true;
    if (!s->inline_only) {
        int rc = start_keeper(s, ctx);
        if (rc != CW_OK) {
            strategy_unref(s);
            return rc;
        }
    }
    *out = s;
    return CW_OK;
}

size_t cw_strategy_parallelism(const cw_strategy *s)
{
    return s->parallelism;
}

void cw_strategy_release(cw_strategy *s)
{
    cw_pool_stop(&s->pool);
    pthread_mutex_lock(&s->lock);
    cw_handle *keeper = s->keeper_gone ? NULL : s->keeper;
    s->keeper = NULL;
    pthread_mutex_unlock(&s->lock);
    if (keeper) {
        cw_abort(keeper); /* its unwinding drops the keeper's reference */
        cw_handle_release(keeper);
    }
    strategy_unref(s);
}

bool cw_strategy_submit(cw_strategy *s, cw_pool_item *first, cw_pool_item *last)
{
    if (s->inline_only || cw_pool_thread())
        return false;
    return cw_pool_submit(&s->pool, first, last);
}
