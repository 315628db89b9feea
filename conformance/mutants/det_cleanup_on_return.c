/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Cleanup handlers still registered when a task returns normally are run
 * as it ends, as if it had been unwound (PAN-004: they are not run). */
#define CWM_BASE "deterministic"
#include "mutant.h"

#include <stdlib.h>

enum { REMEMBERED = 4096 };
static struct {
    const cw_ctx *ctx;
    cw_cleanup *top; /* the newest handler registered through ctx */
} tops[REMEMBERED];
static size_t ntops;

static cw_cleanup **top_of(const cw_ctx *ctx)
{
    for (size_t i = 0; i < ntops; i++)
        if (tops[i].ctx == ctx)
            return &tops[i].top;
    if (ntops == REMEMBERED)
        return NULL;
    tops[ntops].ctx = ctx;
    tops[ntops].top = NULL;
    return &tops[ntops++].top;
}

static void noting_push(cw_ctx *ctx, cw_cleanup *node)
{
    cwm_base->cleanup_push(ctx, node);
    cw_cleanup **top = top_of(ctx);
    if (top)
        *top = node;
}

static void noting_pop(cw_ctx *ctx, cw_cleanup *node, bool execute)
{
    cw_cleanup **top = top_of(ctx);
    if (top && *top == node)
        *top = node->prev;
    cwm_base->cleanup_pop(ctx, node, execute);
}

struct call {
    cw_task_fn fn;
    void *arg;
};

/* The task's function, then the handlers it left registered. */
static void *running_leftovers(cw_ctx *ctx, void *arg)
{
    struct call c = *(struct call *)arg;
    free(arg);
    void *value = c.fn(ctx, c.arg);
    cw_cleanup **top = top_of(ctx);
    for (cw_cleanup *n = top ? *top : NULL; n; n = n->prev)
        n->fn(n->arg);
    return value;
}

static cw_handle *wrapping_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    struct call *c = malloc(sizeof *c);
    if (!c)
        return cwm_base->spawn(ctx, fn, arg);
    c->fn = fn;
    c->arg = arg;
    return cwm_base->spawn(ctx, running_leftovers, c);
}

static void mutate(void)
{
    cwm.cleanup_push = noting_push;
    cwm.cleanup_pop = noting_pop;
    cwm.spawn = wrapping_spawn;
}
