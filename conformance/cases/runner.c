/*
 * runner.c - rules of the run as a whole (spec/02-runner.md) that any
 * backend obeys, whatever its clock.
 */
#include <string.h>

#include "cases/util.h"

static void *sleep_forever_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (;;)
        cw_sleep(ctx, CW_SEC);
    return NULL;
}

static void *yield_forever_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (;;)
        cw_yield(ctx);
    return NULL;
}

/* The run timeout ends a run that sleeps and one that never suspends for
 * long, on the runtime's clock, virtual or not: 100 ms of it. */
CWC_CASE(run_timeout_ends_any_run, "runner", "RUN-005", 0)
{
    cw_task_fn roots[] = {sleep_forever_root, yield_forever_root};
    for (int i = 0; i < 2; i++) {
        cw_config cfg = cwc_config();
        cfg.timeout = 100 * CW_MSEC;
        cw_run_result res;
        ck_assert_int_eq(cwc_run(&cfg, roots[i], NULL, &res), CW_ERR_RUN_TIMEOUT);
        ck_assert_str_eq(res.message, "runtime timeout");
    }
}
