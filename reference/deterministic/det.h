/*
 * det.h - private to the deterministic backend: its PRNG, audit chain,
 * alarm heap and scheduler state. The algorithm is specified in
 * spec/11-deterministic.md, which this folder follows step by step.
 */
#ifndef CW_DET_H
#define CW_DET_H

#include <sched.h>
#include <stdatomic.h>

#include "core/internal.h"

/* ---- PRNG (prng.c): xoshiro256** seeded through splitmix64 ---- */
typedef struct cw_prng {
    uint64_t s[4];
} cw_prng;

void cw_prng_seed(cw_prng *p, uint64_t seed);
uint64_t cw_prng_next(cw_prng *p);
/* A value in [0, bound) by the specified reduction: next() % bound. */
uint64_t cw_prng_below(cw_prng *p, uint64_t bound);
void cw_prng_fill(cw_prng *p, void *buf, size_t len);

/* ---- Audit chain (audit.c) ---- */
typedef struct cw_auditor {
    uint8_t digest[32];
    void *md;     /* the SHA-256 implementation, fetched once */
    void *md_ctx; /* one hashing context, reused by every event */
} cw_auditor;

void cw_auditor_init(cw_auditor *a);
void cw_auditor_free(cw_auditor *a);
void cw_auditor_event(cw_auditor *a, const char *label, const cw_field *fields, size_t n);
void cw_auditor_hex(const cw_auditor *a, char out[65]);

/* ---- A spinlock for the ready queue ----
 * Only a wake from a thread outside the run ever contends for it, and the
 * sections it guards are a few stores long: cheaper than a mutex on the
 * path every yield and wake takes. */
typedef struct cw_spin {
    atomic_flag held;
} cw_spin;

static inline void cw_spin_lock(cw_spin *s)
{
    while (atomic_flag_test_and_set_explicit(&s->held, memory_order_acquire))
        sched_yield();
}

static inline void cw_spin_unlock(cw_spin *s)
{
    atomic_flag_clear_explicit(&s->held, memory_order_release);
}

/* ---- The runtime (scheduler.c) ---- */
typedef struct cw_det {
    cw_rt rt;         /* first: the core sees only this */
    cw_coro main;     /* the scheduler's own context */
    cw_task *current; /* the task running now, or NULL */
    pthread_t thread; /* the one thread the run's tasks execute on */
    cw_spin lock;     /* the ready queue and wake flags: wakers may be on other threads */
    cw_task **ready;  /* runnable in the next iteration */
    size_t nready, cap;
    cw_alarms alarms;
    cw_time now;
    cw_time deadline; /* of the run timeout; CW_TIME_MAX when none */
    cw_prng prng;
    cw_auditor auditor;
    uint64_t iterations;
    /* runtime_iterations and runtime_task_polls; a task's polls series is
     * kept in its sched_data, found on its first resumption. */
    cw_metric *iterations_metric, *task_polls;
} cw_det;

/* Runs whose objects name `self`: the deterministic table or one derived
 * from it (backend.c gives the table's own entries). */
int cw_det_start_as(const cw_backend *self, const cw_config *cfg, cw_task_fn root, void *arg,
                    cw_run_result *out);
int cw_det_start_checkpoint_as(const cw_backend *self, const cw_config *cfg, cw_task_fn root,
                               void *arg, cw_run_result *out, cw_checkpoint **cp);
int cw_det_recover_as(const cw_backend *self, cw_checkpoint *from, cw_task_fn root, void *arg,
                      cw_run_result *out, cw_checkpoint **cp);
int cw_det_audit_digest(cw_ctx *ctx, char out[65]);

/* ---- Crash and recovery (recover.c) ---- */
/* When every task of `d` has ended: crash its storage and take what
 * survives, before the run's objects are freed. */
cw_checkpoint *cw_det_checkpoint_new(cw_det *d);
/* At the very end of the run: the clock, the random stream, the digest. */
void cw_det_checkpoint_seal(cw_det *d, cw_checkpoint *cp);
const cw_config *cw_det_checkpoint_config(const cw_checkpoint *cp);
/* Start `d` where `cp`'s run crashed; frees `cp`'s shell. */
void cw_det_resume(cw_det *d, cw_checkpoint *cp);
void cw_det_checkpoint_free(cw_checkpoint *cp);

#endif
