/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Aborting a task aborts its siblings too, the other tasks spawned from
 * children of the same context (TASK-005: siblings and their subtrees are
 * untouched). */
#define CWM_BASE "deterministic"
#include "mutant.h"

enum { REMEMBERED = 4096 };
static struct {
    const cw_ctx *child, *parent;
} children[REMEMBERED];
static size_t nchildren;
static struct {
    cw_handle *h;
    const cw_ctx *parent;
} spawned[REMEMBERED];
static size_t nspawned;

static const cw_ctx *parent_of(const cw_ctx *ctx)
{
    for (size_t i = nchildren; i-- > 0;)
        if (children[i].child == ctx)
            return children[i].parent;
    return NULL;
}

static cw_ctx *noting_child(cw_ctx *ctx, const char *label)
{
    cw_ctx *c = cwm_base->child(ctx, label);
    if (c && nchildren < REMEMBERED)
        children[nchildren].child = c, children[nchildren++].parent = ctx;
    return c;
}

static cw_handle *noting_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    const cw_ctx *parent = parent_of(ctx);
    cw_handle *h = cwm_base->spawn(ctx, fn, arg);
    if (h && parent && nspawned < REMEMBERED)
        spawned[nspawned].h = h, spawned[nspawned++].parent = parent;
    return h;
}

static void releasing(cw_handle *h)
{
    for (size_t i = 0; i < nspawned; i++)
        if (spawned[i].h == h)
            spawned[i] = spawned[--nspawned];
    cwm_base->handle_release(h);
}

static void wide_abort(cw_handle *h)
{
    const cw_ctx *parent = NULL;
    for (size_t i = 0; i < nspawned; i++)
        if (spawned[i].h == h)
            parent = spawned[i].parent;
    cwm_base->abort(h);
    for (size_t i = 0; parent && i < nspawned; i++)
        if (spawned[i].parent == parent && spawned[i].h != h)
            cwm_base->abort(spawned[i].h);
}

static void mutate(void)
{
    cwm.child = noting_child;
    cwm.spawn = noting_spawn;
    cwm.handle_release = releasing;
    cwm.abort = wide_abort;
}
