/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/types.h - the scalar types and opaque object types of the interface.
 *
 * Every object the interface hands out (context, handle, channel, signal,
 * waker) begins with a pointer to the backend table that made it. That one
 * rule is what lets the inline functions of the other headers dispatch
 * without any global state, and several backends live in one process.
 */
#ifndef CW_TYPES_H
#define CW_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Marks the functions a library of this interface exports. Most of the
 * interface is inline functions calling through a backend's table, so the
 * functions declared with CW_EXTERN (rate limiters, strategies, and an
 * implementation's own entry points) are the whole of what a program links
 * against: built with -fvisibility=hidden, a library exports them and
 * nothing else. An implementation may define CW_EXTERN before including
 * these headers. */
#ifndef CW_EXTERN
#if defined(__GNUC__) || defined(__clang__)
#define CW_EXTERN __attribute__((visibility("default")))
#else
#define CW_EXTERN
#endif
#endif

/* Nanoseconds since the Unix epoch. The deterministic backend's clock is
 * virtual; the native backend's is the wall clock. */
typedef uint64_t cw_time;
/* Nanoseconds. */
typedef uint64_t cw_duration;

/* The latest representable time; a sleep until it never ends. */
#define CW_TIME_MAX UINT64_MAX
/* "No deadline", where a duration is optional. */
#define CW_FOREVER UINT64_MAX

#define CW_NSEC ((cw_duration)1)
#define CW_USEC ((cw_duration)1000)
#define CW_MSEC ((cw_duration)1000000)
#define CW_SEC ((cw_duration)1000000000)

/* A probability as an exact fraction, num/den: num 0 is never, num == den
 * always, and num above den (or above 0 with den 0) is invalid. A backend
 * decides with one draw of its seeded stream, below(den) < num, and draws
 * nothing for never and always (spec/11-deterministic.md). */
typedef struct cw_rate {
    uint64_t num;
    uint64_t den;
} cw_rate;

#define CW_RATE_NEVER ((cw_rate){0, 1})
#define CW_RATE_ALWAYS ((cw_rate){1, 1})

/* Whether `r` is a rate: num 0 over anything (a zeroed rate is off), or a
 * fraction no larger than 1 [RUN-002]. */
static inline bool cw_rate_valid(cw_rate r)
{
    return r.num == 0 || (r.den > 0 && r.num <= r.den);
}

typedef struct cw_backend cw_backend;

/* The common prefix of every object: see spec/10-backend.md [ABI-002]. */
typedef struct cw_object {
    const cw_backend *backend;
} cw_object;

typedef struct cw_ctx cw_ctx;             /* a task's view of the runtime */
typedef struct cw_handle cw_handle;       /* the result of a spawned task */
typedef struct cw_chan cw_chan;           /* an mpsc channel, bounded or not */
typedef struct cw_oneshot cw_oneshot;     /* a channel for exactly one value */
typedef struct cw_signal cw_signal;       /* a claim on the stop signal */
typedef struct cw_waker cw_waker;         /* a way to wake one task, from anywhere */

/* A task body. `ctx` belongs to the task (spec/03-context.md); the
 * return value is what cw_join hands to the joiner. */
typedef void *(*cw_task_fn)(cw_ctx *ctx, void *arg);

static inline const cw_backend *cw__backend_of(const void *object)
{
    return ((const cw_object *)object)->backend;
}

#ifdef __cplusplus
}
#endif
#endif
