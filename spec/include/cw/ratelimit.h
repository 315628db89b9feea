/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/ratelimit.h - rate limiting on the runtime clock (GCRA).
 *
 * A quota says how fast cells replenish and how many may be taken at once.
 * A limiter checks one cell against it at a time: accepted now, or refused
 * with the earliest time the next cell is available. A keyed limiter keeps
 * one such state per key and forgets keys that are idle.
 *
 * Like cw/strategy.h, a library over the public interface rather than
 * backend entries: limiters read the clock with cw_current and wait with
 * cw_sleep_until, so virtual time drives them on a deterministic backend.
 * The exact arithmetic is in spec/15-ratelimit.md.
 */
#ifndef CW_RATELIMIT_H
#define CW_RATELIMIT_H

#include <stddef.h>
#include <stdint.h>

#include "cw/error.h"
#include "cw/types.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How fast cells come back and how many are available at once. */
typedef struct cw_quota {
    cw_duration interval; /* time to replenish one cell, at least 1 ns */
    uint32_t burst;       /* cells that may be taken at one instant, at least 1 */
} cw_quota;

/* `cells` cells per `period`: interval = max(period / cells, 1 ns), rounded
 * down, and a burst of `cells` [RATE-001]. CW_ERR_INVALID for a zero count
 * or period, leaving *q unchanged. */
static inline int cw_quota_per(cw_quota *q, uint32_t cells, cw_duration period)
{
    if (cells == 0 || period == 0)
        return CW_ERR_INVALID;
    q->interval = period / cells ? period / cells : 1;
    q->burst = cells;
    return CW_OK;
}

/* Replace the burst. CW_ERR_INVALID for 0, leaving *q unchanged. */
static inline int cw_quota_allow_burst(cw_quota *q, uint32_t burst)
{
    if (burst == 0)
        return CW_ERR_INVALID;
    q->burst = burst;
    return CW_OK;
}

typedef struct cw_limiter cw_limiter;             /* one GCRA state */
typedef struct cw_keyed_limiter cw_keyed_limiter; /* one GCRA state per key */

/* A limiter for quota `q`, owned by the caller (cw_limiter_free). It is
 * plain memory, not an object of a run: it may be used by several tasks and
 * threads at once, by several runs, and outlive them. CW_ERR_INVALID for a
 * quota with a zero interval or burst, CW_ERR_NOMEM; *out is NULL then. */
CW_EXTERN int cw_limiter_new(const cw_quota *q, cw_limiter **out);
CW_EXTERN void cw_limiter_free(cw_limiter *l);

/* Take one cell at time `now`: CW_OK, or CW_ERR_WOULD_BLOCK with the
 * earliest time a cell is available in *next (which may be NULL), the state
 * left unchanged [RATE-002]. */
CW_EXTERN int cw_limiter_check_at(cw_limiter *l, cw_time now, cw_time *next);

/* cw_limiter_check_at at cw_current(ctx) [RATE-003]. */
CW_EXTERN int cw_limiter_check(cw_limiter *l, cw_ctx *ctx, cw_time *next);

/* Take one cell, sleeping on the runtime clock until one is available.
 * Suspends the task of `ctx`. Returns CW_OK. */
CW_EXTERN int cw_limiter_until_ready(cw_limiter *l, cw_ctx *ctx);

/* A keyed limiter: every key (a byte string, compared by value) has the
 * state a cw_limiter of quota `q` would have [RATE-004]. Same ownership and
 * errors as cw_limiter_new; freed by cw_keyed_limiter_free. */
CW_EXTERN int cw_keyed_limiter_new(const cw_quota *q, cw_keyed_limiter **out);
CW_EXTERN void cw_keyed_limiter_free(cw_keyed_limiter *l);

/* As cw_limiter_check_at for the key key[0 .. len). A key not held yet is
 * stored, which may first evict idle keys [RATE-005]; CW_ERR_NOMEM when it
 * cannot be stored (nothing changed), CW_ERR_INVALID for len >= 2^32 or
 * a NULL key with len > 0 (NULL with len 0 is the empty key) [RATE-004]. */
CW_EXTERN int cw_keyed_limiter_check_at(cw_keyed_limiter *l, const void *key, size_t len,
                                        cw_time now, cw_time *next);
CW_EXTERN int cw_keyed_limiter_check(cw_keyed_limiter *l, cw_ctx *ctx, const void *key, size_t len,
                                     cw_time *next);
/* CW_OK once a cell was taken, or the error of cw_keyed_limiter_check. */
CW_EXTERN int cw_keyed_limiter_until_ready(cw_keyed_limiter *l, cw_ctx *ctx, const void *key,
                                           size_t len);

/* Forget every key that is idle at `now` (or at cw_current(ctx)): it would
 * behave exactly like a key never seen [RATE-005]. */
CW_EXTERN void cw_keyed_limiter_retain_recent_at(cw_keyed_limiter *l, cw_time now);
CW_EXTERN void cw_keyed_limiter_retain_recent(cw_keyed_limiter *l, cw_ctx *ctx);

/* The number of keys held. */
CW_EXTERN size_t cw_keyed_limiter_len(cw_keyed_limiter *l);

#ifdef __cplusplus
}
#endif
#endif
