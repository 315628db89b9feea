/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/context.h - contexts and the supervision tree.
 *
 * A context is a task's view of the runtime and its place in the
 * supervision tree. cw_child makes a new one below it; cw_spawn consumes one.
 * Rules: spec/03-context.md.
 */
#ifndef CW_CONTEXT_H
#define CW_CONTEXT_H

#include <stdbool.h>

#include "cw/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How the next task spawned from a context runs. */
enum cw_execution {
    CW_EXEC_SHARED = 0,          /* on the shared executor (the default) */
    CW_EXEC_SHARED_BLOCKING = 1, /* may block its thread: a blocking pool where there is one */
    CW_EXEC_DEDICATED = 2,       /* on a thread of its own where there are threads */
};

/* A new context one level below `ctx`, labelled "<ctx label>_<label>" (or
 * `label` under the root). The caller owns it: pass it to cw_spawn or
 * release it. An invalid label panics the calling task [CTX-002]. */
static inline cw_ctx *cw_child(cw_ctx *ctx, const char *label)
{
    return cw__backend_of(ctx)->child(ctx, label);
}

/* Set attribute `key` to `value` on `ctx` (a copy of both is kept), replacing
 * an earlier value for the same key. Returns `ctx`. An invalid key panics. */
static inline cw_ctx *cw_with_attribute(cw_ctx *ctx, const char *key, const char *value)
{
    cw__backend_of(ctx)->with_attribute(ctx, key, value);
    return ctx;
}

/* The context's label path ("" for the root). Valid while `ctx` lives. */
static inline const char *cw_label(const cw_ctx *ctx)
{
    return cw__backend_of(ctx)->label(ctx);
}

/* Choose how the next spawn from `ctx` runs; returns `ctx`. */
static inline cw_ctx *cw_shared(cw_ctx *ctx, bool blocking)
{
    cw__backend_of(ctx)->set_execution(ctx, blocking ? CW_EXEC_SHARED_BLOCKING : CW_EXEC_SHARED);
    return ctx;
}

static inline cw_ctx *cw_dedicated(cw_ctx *ctx)
{
    cw__backend_of(ctx)->set_execution(ctx, CW_EXEC_DEDICATED);
    return ctx;
}

/* Give up a context made by cw_child without spawning from it. */
static inline void cw_ctx_release(cw_ctx *ctx)
{
    cw__backend_of(ctx)->ctx_release(ctx);
}

#ifdef __cplusplus
}
#endif
#endif
