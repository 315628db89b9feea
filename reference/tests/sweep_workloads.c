/*
 * sweep_workloads.c - the allocation sweep's programs, on the
 * deterministic backend (one thread, so every run of a workload makes the
 * same allocations in the same order and "the N-th" names one call).
 */
#include <stdint.h>
#include <string.h>

#include "cwrt/cwrt.h"
#include "tests/sweep_workloads.h"

/* A run's status is acceptable when it is success or exhausted memory. */
static int run_ok(int rc)
{
    return rc == CW_OK || rc == CW_ERR_NOMEM ? 0 : 1;
}

static int start(cw_task_fn root, void *arg)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cw_run_result res;
    int rc = cw_start(cw_backend_deterministic(), &cfg, root, arg, &res);
    if (rc != res.status)
        return 1;
    return run_ok(rc);
}

/* ---- An empty run ----------------------------------------------------------- */

static void *returns_arg(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

static int run_empty(void)
{
    return start(returns_arg, NULL);
}

/* ---- Spawn trees with aborts ------------------------------------------------ */

static void *sleeper(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (;;)
        if (cw_sleep(ctx, CW_MSEC) != CW_OK)
            return NULL;
}

/* Two sleeping children under a task that then waits forever. */
static void *parent(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (int i = 0; i < 2; i++) {
        cw_ctx *c = cw_child(ctx, "leaf");
        cw_handle *h = c ? cw_spawn(c, sleeper, NULL) : NULL;
        if (h)
            cw_handle_release(h);
    }
    cw_sleep(ctx, CW_FOREVER);
    return NULL;
}

static int *bad_flag(cw_ctx *ctx)
{
    (void)ctx;
    static int bad;
    return &bad;
}

/* The join of a spawned task: its value, an abort, or exhausted memory. */
static void check_join(cw_ctx *ctx, cw_handle *h, void *want, int want_rc)
{
    void *v = NULL;
    int rc = cw_join(h, &v);
    if (!(rc == want_rc && (rc != CW_OK || v == want)) && rc != CW_ERR_NOMEM)
        *bad_flag(ctx) = 1;
    cw_handle_release(h);
}

static void check_aborted_join(cw_ctx *ctx, cw_handle *h)
{
    void *v = NULL;
    int rc = cw_join(h, &v);
    if (!(rc == CW_ERR_CLOSED || rc == CW_ERR_NOMEM || (rc == CW_OK && v == NULL)))
        *bad_flag(ctx) = 1;
    cw_handle_release(h);
}

static void *tree_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *kept[3] = {0};
    for (int i = 0; i < 3; i++) {
        cw_ctx *c = cw_child(ctx, "branch");
        kept[i] = c ? cw_spawn(c, parent, NULL) : NULL;
    }
    cw_sleep(ctx, 3 * CW_MSEC);
    /* A parent whose sleep found no memory for its alarm has returned
     * before the abort: then its join gives its NULL value. */
    for (int i = 0; i < 3; i++)
        if (kept[i]) {
            cw_abort(kept[i]);
            check_aborted_join(ctx, kept[i]);
        }
    cw_ctx *c = cw_child(ctx, "last");
    cw_handle *h = c ? cw_spawn(c, returns_arg, &kept) : NULL;
    if (h)
        check_join(ctx, h, &kept, CW_OK);
    return *bad_flag(ctx) ? NULL : ctx;
}

static int run_tree(void)
{
    *bad_flag(NULL) = 0;
    int rc = start(tree_root, NULL);
    return rc || *bad_flag(NULL);
}

const cw_sweep_workload cw_sweep_workloads[] = {
    {"empty_run", run_empty},
    {"spawn_tree", run_tree},
    {NULL, NULL},
};
