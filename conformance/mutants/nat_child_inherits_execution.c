/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_child gives its context the parent's execution mode, where it must
 * start at CW_EXEC_SHARED (CTX-001): a child of a dedicated context spawns
 * its tasks on threads of their own, a child of a blocking one on the
 * blocking pool. */
#define CWM_BASE "native"
#include "mutant.h"

enum { REMEMBERED = 4096 };
static struct {
    const cw_ctx *ctx;
    int mode;
} modes[REMEMBERED];
static atomic_size_t nmodes;

static int mode_of(const cw_ctx *ctx)
{
    size_t n = atomic_load(&nmodes);
    for (size_t i = n; i-- > 0;)
        if (modes[i].ctx == ctx)
            return modes[i].mode;
    return CW_EXEC_SHARED;
}

static void note(const cw_ctx *ctx, int mode)
{
    size_t i = atomic_fetch_add(&nmodes, 1);
    if (i < REMEMBERED)
        modes[i].ctx = ctx, modes[i].mode = mode;
}

static void noting_set_execution(cw_ctx *ctx, int mode)
{
    cwm_base->set_execution(ctx, mode);
    note(ctx, mode);
}

static cw_ctx *inheriting_child(cw_ctx *ctx, const char *label)
{
    cw_ctx *c = cwm_base->child(ctx, label);
    int mode = mode_of(ctx);
    if (c && mode != CW_EXEC_SHARED)
        noting_set_execution(c, mode);
    return c;
}

static void mutate(void)
{
    cwm.set_execution = noting_set_execution;
    cwm.child = inheriting_child;
}
