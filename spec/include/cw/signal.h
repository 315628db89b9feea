/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/signal.h - the runtime's stop signal.
 *
 * cw_stop announces a value to every holder of a signal from cw_stopped and
 * waits until all of them have released their signal. Rules:
 * spec/05-signals.md.
 */
#ifndef CW_SIGNAL_H
#define CW_SIGNAL_H

#include "cw/clock.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A claim on the stop signal. Until it is released, a cw_stop in progress
 * waits for it (unless stop was already called: then the signal is already
 * resolved and holds nothing back). The caller owns it. */
static inline cw_signal *cw_stopped(cw_ctx *ctx)
{
    return cw__backend_of(ctx)->stopped(ctx);
}

static inline void cw_signal_release(cw_signal *s)
{
    cw__backend_of(s)->signal_release(s);
}

/* Completes with the stop value in *value once cw_stop was called. */
static inline cw_wait cw_wait_signal(cw_signal *s, int32_t *value)
{
    cw_wait w;
    cw__backend_of(s)->wait_signal(&w, s, value);
    return w;
}

static inline int cw_signal_wait(cw_signal *s, int32_t *value)
{
    cw_wait w = cw_wait_signal(s, value);
    return cw_wait_one(&w);
}

/* Stop with `value` (the first stop's value wins) when first tried, then
 * complete (CW_OK) once every signal handed out before the stop is released. */
static inline cw_wait cw_wait_stop(cw_ctx *ctx, int32_t value)
{
    cw_wait w;
    cw__backend_of(ctx)->wait_stop(&w, ctx, value);
    return w;
}

/* Stop and wait at most `timeout` (CW_FOREVER: no limit): CW_OK,
 * CW_ERR_TIMEOUT with signals still held, or CW_ERR_NOMEM at once when the
 * backend had no memory for the timeout's alarm (cw_timeout, CLK-008). */
static inline int cw_stop(cw_ctx *ctx, int32_t value, cw_duration timeout)
{
    cw_wait w = cw_wait_stop(ctx, value);
    if (timeout == CW_FOREVER)
        return cw_wait_one(&w);
    return cw_timeout(ctx, timeout, &w);
}

#ifdef __cplusplus
}
#endif
#endif
