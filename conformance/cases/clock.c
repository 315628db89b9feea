/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * clock.c - the runtime clock, sleeping and timeouts (spec/07-clock.md).
 */
#include "cases/util.h"

static void *clock_sleep_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_time start = cw_current(ctx);
    ck_assert_int_eq(cw_sleep(ctx, 10 * CW_MSEC), CW_OK);
    ck_assert_uint_ge(cw_current(ctx) - start, 10 * CW_MSEC);
    return NULL;
}

CWC_CASE(clock_sleep, "clock", "CLK-001 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, clock_sleep_root, NULL);
}

static void *clock_sleep_until_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_time now = cw_current(ctx);
    ck_assert_int_eq(cw_sleep_until(ctx, now + 100 * CW_MSEC), CW_OK);
    ck_assert_uint_ge(cw_current(ctx) - now, 100 * CW_MSEC);
    /* A deadline already passed completes at once. */
    ck_assert_int_eq(cw_sleep_until(ctx, now), CW_OK);
    return NULL;
}

CWC_CASE(clock_sleep_until, "clock", "CLK-002 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, clock_sleep_until_root, NULL);
}

static void *far_future_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_wait w = cw_wait_sleep_until(ctx, CW_TIME_MAX);
    ck_assert_int_eq(cw_timeout(ctx, CW_MSEC, &w), CW_ERR_TIMEOUT);
    /* A sleep whose end cannot be represented saturates rather than wraps. */
    cw_wait huge = cw_wait_sleep(ctx, CW_FOREVER - 1);
    ck_assert_int_eq(cw_timeout(ctx, CW_MSEC, &huge), CW_ERR_TIMEOUT);
    return NULL;
}

CWC_CASE(clock_sleep_until_far_future, "clock", "CLK-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, far_future_root, NULL);
}

static void *clock_timeout_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_wait ready = cw_wait_ready(ctx, CW_OK);
    ck_assert_int_eq(cw_timeout(ctx, 100 * CW_MSEC, &ready), CW_OK);
    cw_wait pending = cw_wait_pending(ctx);
    cw_time before = cw_current(ctx);
    ck_assert_int_eq(cw_timeout(ctx, 50 * CW_MSEC, &pending), CW_ERR_TIMEOUT);
    ck_assert_uint_ge(cw_current(ctx) - before, 50 * CW_MSEC);
    cw_wait sleep = cw_wait_sleep(ctx, 50 * CW_MSEC);
    ck_assert_int_eq(cw_timeout(ctx, 100 * CW_MSEC, &sleep), CW_OK);
    return NULL;
}

CWC_CASE(clock_timeout, "clock", "CLK-004 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, clock_timeout_root, NULL);
}

/* Readings back to back: a clock that steps back by less than the time
 * a yield takes shows it only here. Returns the last reading. */
static cw_time read_back_to_back(cw_ctx *ctx, cw_time last, int n)
{
    for (int i = 0; i < n; i++) {
        cw_time now = cw_current(ctx);
        CWC_REQUIRE(now >= last, "the clock went back from %llu to %llu", (unsigned long long)last,
                    (unsigned long long)now);
        last = now;
    }
    return last;
}

static void *monotonic_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_time last = cw_current(ctx);
    for (int i = 0; i < 100; i++) {
        cw_yield(ctx);
        cw_time now = cw_current(ctx);
        ck_assert_uint_ge(now, last);
        last = read_back_to_back(ctx, now, 1000);
    }
    return NULL;
}

CWC_CASE(clock_never_goes_back, "clock", "CLK-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, monotonic_root, NULL);
}

/* At the end of time: a deterministic clock jumps to the alarm due at
 * CW_TIME_MAX - 1 (DET-005), and the sleep until CW_TIME_MAX beside it,
 * tried first, still does not complete. A yield then asks for a cycle
 * the clock has no room for: the run may end there, as timed out, but a
 * clock that wrapped round to the past would go back (CLK-005). */
static void *end_of_time_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_wait w[2] = {cw_wait_sleep_until(ctx, CW_TIME_MAX),
                    cw_wait_sleep_until(ctx, CW_TIME_MAX - 1)};
    ck_assert_int_eq(cw_select(w, 2), 1);
    ck_assert_uint_eq(cw_current(ctx), CW_TIME_MAX - 1);
    cw_yield(ctx);
    ck_assert_uint_ge(cw_current(ctx), CW_TIME_MAX - 1);
    return NULL;
}

/* One cycle before the end of time, the clock still has room for that
 * cycle: it advances to CW_TIME_MAX exactly (step 6 of the deterministic
 * loop ends the run only when the clock cannot advance), and the run ends
 * there as timed out, its clock at CW_TIME_MAX (DET-005). */
static void *last_cycle_root(cw_ctx *ctx, void *arg)
{
    cw_duration cycle = *(const cw_duration *)arg;
    ck_assert_int_eq(cw_sleep_until(ctx, CW_TIME_MAX - cycle), CW_OK);
    ck_assert_uint_eq(cw_current(ctx), CW_TIME_MAX - cycle);
    for (;;) {
        cw_yield(ctx);
        ck_assert_uint_eq(cw_current(ctx), CW_TIME_MAX);
    }
    return NULL;
}

CWC_CASE(clock_takes_the_last_cycle_before_the_end_of_time, "clock", "DET-005 CLK-005 RUN-008",
         CW_CAP_DETERMINISTIC | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.start_time = CW_TIME_MAX - 10 * CW_SEC;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, last_cycle_root, &cfg.cycle, &res), CW_ERR_RUN_TIMEOUT);
    ck_assert_uint_eq(res.end_time, CW_TIME_MAX);
}

CWC_CASE(clock_sleep_until_max_at_the_end_of_time, "clock", "CLK-003 CLK-005 DET-005 RUN-008",
         CW_CAP_DETERMINISTIC | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.start_time = CW_TIME_MAX - 10 * CW_SEC;
    cw_run_result res;
    int rc = cwc_run(&cfg, end_of_time_root, NULL, &res);
    ck_assert_msg(rc == CW_OK || rc == CW_ERR_RUN_TIMEOUT, "a run at the end of time: %s, %s",
                  cw_strerror(rc), res.message);
}
