/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * pacing.c - cw_pace (07-clock.md, CLK-006, CLK-007): outside work seen to
 * complete `latency` after the call on a deterministic backend, the whole
 * run waiting for it if it is late; on a real-time backend as soon as it
 * is done, without holding a worker.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <time.h>
#include <unistd.h>

#include "cases/util.h"

#define DET CW_CAP_DETERMINISTIC

/* Outside work: a thread that finishes after `real_ms` of real time. */
typedef struct outside {
    atomic_bool finished;
    atomic_int asked; /* calls of done() */
    unsigned real_ms;
    pthread_t thread;
} outside;

static void *outside_work(void *arg)
{
    outside *o = arg;
    usleep(o->real_ms * 1000u);
    atomic_store(&o->finished, true);
    return NULL;
}

static void outside_start(outside *o, unsigned real_ms)
{
    atomic_init(&o->finished, false);
    atomic_init(&o->asked, 0);
    o->real_ms = real_ms;
    ck_assert_int_eq(pthread_create(&o->thread, NULL, outside_work, o), 0);
}

static bool outside_done(void *arg)
{
    outside *o = arg;
    atomic_fetch_add(&o->asked, 1);
    return atomic_load(&o->finished);
}

static uint64_t real_ms_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000u + (uint64_t)ts.tv_nsec / 1000000u;
}

/* Counts its own wake-ups, a millisecond apart on the runtime clock. */
static void *ticker(cw_ctx *ctx, void *arg)
{
    atomic_int *ticks = arg;
    for (;;) {
        cw_sleep(ctx, CW_MSEC);
        atomic_fetch_add(ticks, 1);
    }
    return NULL;
}

static void *on_time_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    outside o;
    outside_start(&o, 0);
    pthread_join(o.thread, NULL); /* done before it is paced */
    cw_time t0 = cw_current(ctx);
    uint64_t r0 = real_ms_now();
    ck_assert_int_eq(cw_pace(ctx, 30 * CW_SEC, outside_done, &o), CW_OK);
    ck_assert_uint_eq(cw_current(ctx), t0 + 30 * CW_SEC);     /* the latency, on the clock */
    ck_assert_uint_lt(real_ms_now() - r0, cwc_scaled(10000)); /* virtual, not real */
    ck_assert_int_gt(atomic_load(&o.asked), 0);
    return NULL;
}

CWC_CASE(pace_completes_after_its_latency, "clock", "CLK-006 RUN-008", DET | CWC_REPEATED)
{
    cwc_run_ok(NULL, on_time_root, NULL);
}

static void *late_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static atomic_int ticks;
    atomic_init(&ticks, 0);
    cw_handle_release(cw_spawn(cw_child(ctx, "ticker"), ticker, &ticks));
    outside o;
    /* Read before the work starts: a case descheduled between the two
     * would otherwise see less of the work's 150 ms than it lasted. */
    uint64_t r0 = real_ms_now();
    outside_start(&o, 150);
    cw_time t0 = cw_current(ctx);
    ck_assert_int_eq(cw_pace(ctx, 5 * CW_MSEC, outside_done, &o), CW_OK);
    ck_assert(atomic_load(&o.finished));
    ck_assert_uint_ge(real_ms_now() - r0, 140); /* it waited for the work */
    /* ... with the clock and every other task standing still. */
    ck_assert_uint_eq(cw_current(ctx), t0 + 5 * CW_MSEC);
    int during = atomic_load(&ticks);
    ck_assert_int_le(during, 5);
    cw_sleep(ctx, 10 * CW_MSEC);
    ck_assert_int_gt(atomic_load(&ticks), during); /* and the run goes on after */
    pthread_join(o.thread, NULL);
    return NULL;
}

CWC_CASE(pace_holds_the_run_for_late_work, "clock", "CLK-006", DET)
{
    cw_config cfg = cwc_config();
    cfg.cycle = CW_MSEC;
    cwc_run_ok(&cfg, late_root, NULL);
}

static void *real_time_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static atomic_int ticks;
    atomic_init(&ticks, 0);
    cw_handle_release(cw_spawn(cw_child(ctx, "ticker"), ticker, &ticks));
    outside o;
    outside_start(&o, 100);
    uint64_t r0 = real_ms_now();
    ck_assert_int_eq(cw_pace(ctx, 3600 * CW_SEC, outside_done, &o), CW_OK);
    uint64_t took = real_ms_now() - r0;
    ck_assert(atomic_load(&o.finished));
    ck_assert_uint_lt(took, cwc_scaled(10000)); /* the latency is ignored (ms) */
    /* One worker, and the ticker ran on it meanwhile: pace did not hold it. */
    ck_assert_int_gt(atomic_load(&ticks), 0);
    pthread_join(o.thread, NULL);
    return NULL;
}

CWC_CASE(pace_waits_for_the_work_alone, "clock", "CLK-007 RUN-008",
         CWC_UNLESS_DETERMINISTIC | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.worker_threads = 1;
    cwc_run_ok(&cfg, real_time_root, NULL);
}
