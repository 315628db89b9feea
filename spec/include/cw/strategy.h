/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/strategy.h - parallel strategies: CPU work on a pool of threads,
 * awaited from a task without holding up its worker.
 *
 * Unlike the other headers, these are not backend entries: they are a
 * library written over the public interface (wakers, park, spawn, cleanup
 * handlers), the same on every backend. On a deterministic backend every
 * operation runs inline on the caller, so runs stay reproducible.
 * Rules: spec/14-parallel.md.
 */
#ifndef CW_STRATEGY_H
#define CW_STRATEGY_H

#include <stddef.h>

#include "cw/types.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cw_strategy cw_strategy; /* a pool of threads and how to split work over it */
typedef struct cw_job cw_job;           /* one closure submitted to a strategy's pool */

/* The largest parallelism a strategy accepts. */
#define CW_STRATEGY_MAX_PARALLELISM 1024
/* A range is cut into up to this many chunks per thread, so a thread that
 * falls behind (preempted, slower items) holds up the others less. */
#define CW_STRATEGY_CHUNKS_PER_THREAD 4

/* A fold: `identity` writes the neutral accumulator, `fold` adds the items
 * [begin, end) to one in order, `reduce` merges `other` (the later range)
 * into `acc`. Accumulators are `acc_size` bytes, suitably aligned for any
 * type. `discard`, if set, releases what an accumulator owns when an aborted
 * caller leaves it behind [PAR-009]. The functions may run on any thread and
 * at the same time as each other; they must not call suspending functions or
 * panic. */
typedef struct cw_fold {
    size_t acc_size;
    void (*identity)(void *acc, void *arg);
    void (*fold)(void *acc, size_t begin, size_t end, void *arg);
    void (*reduce)(void *acc, void *other, void *arg);
    void (*discard)(void *acc, void *arg);
    void *arg;
} cw_fold;

/* Writes the result for item `i` to `out`. Same constraints as cw_fold's. */
typedef void (*cw_map_fn)(void *out, size_t i, void *arg);

/* A job body: runs once with the strategy it was submitted to, which it may
 * use again (nested use runs inline [PAR-006]). Returns the job's value. */
typedef void *(*cw_job_fn)(cw_strategy *s, void *arg);

/* A strategy of `parallelism` threads, made by the task of `ctx` (which is
 * not consumed). Its pool's threads start at the first operation that needs
 * them and stop when that task ends, when the run ends, or at
 * cw_strategy_release, whichever comes first [PAR-008]. CW_OK with *out
 * owned by the caller (cw_strategy_release); CW_ERR_INVALID for a
 * parallelism of 0 or above CW_STRATEGY_MAX_PARALLELISM and CW_ERR_NOMEM,
 * both with *out NULL [PAR-001]. Suspends briefly on a backend without
 * CW_CAP_DETERMINISTIC. */
CW_EXTERN int cw_strategy_new(cw_ctx *ctx, size_t parallelism, cw_strategy **out);

/* The parallelism the strategy was made with. */
CW_EXTERN size_t cw_strategy_parallelism(const cw_strategy *s);

/* Stop the pool (waiting for work already running on it) and give up the
 * caller's claim. Call it from a task of the run that made `s`, or after
 * that run ended, once no operation on `s` is in progress. */
CW_EXTERN void cw_strategy_release(cw_strategy *s);

/* Fold the items [begin, end) into `*out` (f->acc_size bytes) [PAR-002].
 * `ctx` is the calling task's context: the task suspends while the pool
 * works. NULL when the caller is not a task (a pool thread, a thread of the
 * program): then the calling thread waits. CW_OK; CW_ERR_INVALID for
 * begin > end, acc_size 0 or a missing function; CW_ERR_NOMEM. On an
 * error no function was called. */
CW_EXTERN int cw_strategy_fold(cw_strategy *s, cw_ctx *ctx, size_t begin, size_t end,
                               const cw_fold *f, void *out);

/* Call fn(out + (i - begin) * elem_size, i, arg) once for every i in
 * [begin, end), so that `out` holds the results in input order [PAR-003].
 * `ctx` and the results are as for cw_strategy_fold; CW_ERR_INVALID for
 * begin > end, elem_size 0 or a NULL fn. */
CW_EXTERN int cw_strategy_map(cw_strategy *s, cw_ctx *ctx, size_t begin, size_t end,
                              size_t elem_size, cw_map_fn fn, void *arg, void *out);

/* Submit fn(s, arg) to the pool: it runs once, whether or not it is joined
 * [PAR-007]. CW_OK with *out owned by the caller (cw_job_join or
 * cw_job_release); CW_ERR_INVALID for a NULL fn; CW_ERR_NOMEM. */
CW_EXTERN int cw_strategy_spawn(cw_strategy *s, cw_job_fn fn, void *arg, cw_job **out);

/* Wait until the job ran and consume it: its value goes to *value (which
 * may be NULL). `ctx` as for cw_strategy_fold. If the waiting task is
 * aborted, the job runs on, detached. Returns CW_OK. */
CW_EXTERN int cw_job_join(cw_job *j, cw_ctx *ctx, void **value);

/* Give up the job without waiting: it runs on, and its value is dropped. */
CW_EXTERN void cw_job_release(cw_job *j);

#ifdef __cplusplus
}
#endif
#endif
