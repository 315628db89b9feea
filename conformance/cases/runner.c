/*
 * runner.c - starting a run (spec/02-runner.md): the configurations that
 * must be refused before anything runs.
 */
#include "cases/util.h"

static void *must_not_run(cw_ctx *ctx, void *arg)
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
    ck_assert_int_eq(cw_start(cwc_backend, cfg, must_not_run, &ran, &res), CW_ERR_INVALID);
    ck_assert_int_eq(res.status, CW_ERR_INVALID);
    ck_assert_msg(res.message[0] != '\0', "a refused configuration without a reason");
    ck_assert_int_eq(ran, 0);
}

CWC_CASE(config_bounds_refused, "runner", "RUN-002", 0)
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
}
