/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * runner.c - rules of the run as a whole (spec/02-runner.md) that any
 * backend obeys, whatever its clock: the run timeout, and the
 * configurations refused before anything runs.
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

static void *nap_root(cw_ctx *ctx, void *arg)
{
    cw_sleep(ctx, CW_MSEC);
    return arg;
}

/* A timeout so long that start + timeout passes the end of time is no
 * timeout at all: the sum saturates rather than wrapping to the past. */
CWC_CASE(run_timeout_near_forever, "runner", "RUN-005 RUN-008", CWC_REPEATED)
{
    const cw_duration huge[] = {CW_FOREVER - 1, CW_FOREVER / 2 + 1, CW_FOREVER - CW_SEC};
    for (size_t i = 0; i < sizeof huge / sizeof huge[0]; i++) {
        cw_config cfg = cwc_config();
        cfg.timeout = huge[i];
        cwc_run_ok(&cfg, nap_root, NULL);
    }
}

static void *marks_ran(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    *(int *)arg = 1;
    return NULL;
}

/* `cfg` is refused with CW_ERR_INVALID and a reason, and nothing runs. */
static void expect_refused(const cw_config *cfg)
{
    int ran = 0;
    cw_run_result res;
    ck_assert_int_eq(cw_start(cwc_backend, cfg, marks_ran, &ran, &res), CW_ERR_INVALID);
    ck_assert_int_eq(res.status, CW_ERR_INVALID);
    ck_assert_msg(res.message[0] != '\0', "a refused configuration without a reason");
    ck_assert_int_eq(ran, 0);
}

CWC_CASE(config_bounds_refused, "runner", "RUN-002 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.stack_size = ((size_t)1 << 30) + 1;
    expect_refused(&cfg);
    cfg = cwc_config();
    cfg.stack_size = SIZE_MAX;
    expect_refused(&cfg);
    cfg = cwc_config();
    cfg.blob_layouts = cw_blob_range_of(CW_BLOB_LAYOUT_LATEST, CW_BLOB_LAYOUT_V0);
    expect_refused(&cfg);
    cfg = cwc_config();
    cfg.blob_layouts = cw_blob_range_of(CW_BLOB_LAYOUT_V0, CW_BLOB_LAYOUT_LATEST + 1);
    expect_refused(&cfg);
    cfg = cwc_config();
    cfg.size = 8;
    expect_refused(&cfg);
    /* The bound itself is valid: the run starts (or finds no memory for
     * a stack that large, RUN-006). */
    cfg = cwc_config();
    cfg.stack_size = (size_t)1 << 30;
    int ran = 0;
    cw_run_result res;
    int rc = cw_start(cwc_backend, &cfg, marks_ran, &ran, &res);
    ck_assert_msg(rc == CW_OK ? ran == 1 : rc == CW_ERR_NOMEM, "a 1 GiB stack: %s, %s",
                  cw_strerror(rc), res.message);
}

/* `cfg == NULL` means the defaults of cw_config_default (RUN-002): the run
 * starts and ends like any other. Every other case passes a configuration
 * (cwc_run fills one in for NULL), so this one calls cw_start itself. */
CWC_CASE(config_null_means_defaults, "runner", "RUN-002 RUN-001 RUN-008", CWC_REPEATED)
{
    cw_run_result res;
    ck_assert_int_eq(cw_start(cwc_backend, NULL, nap_root, &res, &res), CW_OK);
    ck_assert_int_eq(res.status, CW_OK);
    ck_assert_ptr_eq(res.value, &res);
    ck_assert_str_eq(res.message, "");
}
