/*
 * runner.c - how a run ends, checked on every backend (spec/02-runner.md).
 * The deterministic cases pin the virtual clock as well; these hold for
 * any clock.
 */
#include "cases/util.h"

/* The clock as the root last read it, before the run was cut. */
static cw_time last_seen;

static void *sleep_loop(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (;;) {
        last_seen = cw_current(ctx);
        cw_sleep(ctx, CW_MSEC);
    }
    return NULL;
}

/* Never idle: a timeout must not wait for the run to go quiet. */
static void *yield_loop(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "spinner"), cwc_spin_task, NULL));
    for (;;) {
        last_seen = cw_current(ctx);
        cw_yield(ctx);
    }
    return NULL;
}

static void *sleep_then_return(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_int_eq(cw_sleep(ctx, 10 * CW_MSEC), CW_OK);
    return (void *)(intptr_t)7;
}

static void expect_timeout(cw_task_fn root)
{
    cw_config cfg = cwc_config();
    cfg.timeout = 50 * CW_MSEC;
    cw_run_result res;
    last_seen = 0;
    ck_assert_int_eq(cwc_run(&cfg, root, NULL, &res), CW_ERR_RUN_TIMEOUT);
    ck_assert_str_eq(res.message, "runtime timeout");
    ck_assert_uint_gt(last_seen, 0);
    ck_assert_uint_ge(res.end_time, last_seen);
}

CWC_CASE(run_timeout_ends_any_run, "runner", "RUN-005", 0)
{
    expect_timeout(sleep_loop);
    expect_timeout(yield_loop);
    /* A timeout not yet due changes nothing. */
    cw_config cfg = cwc_config();
    cfg.timeout = 10 * CW_SEC;
    ck_assert_ptr_eq(cwc_run_ok(&cfg, sleep_then_return, NULL), (void *)(intptr_t)7);
}
