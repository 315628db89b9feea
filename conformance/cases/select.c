/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * select.c - waiting for the first of several operations (spec/08-select.md).
 */
#include "cases/util.h"

static void *select_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_wait both_ready[2] = {cw_wait_ready(ctx, 1), cw_wait_ready(ctx, 2)};
    int i = cw_select(both_ready, 2);
    ck_assert_int_eq(i, 0);
    ck_assert_int_eq(both_ready[0].result, 1);

    cw_wait second[2] = {cw_wait_pending(ctx), cw_wait_ready(ctx, 2)};
    i = cw_select(second, 2);
    ck_assert_int_eq(i, 1);
    ck_assert_int_eq(second[1].result, 2);
    ck_assert_int_eq(cw_select(second, 0), CW_ERR_INVALID);
    return NULL;
}

CWC_CASE(select, "select", "SEL-001 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, select_root, NULL);
}

static void *select_loop_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_chan *c = cw_chan_new(ctx, sizeof(int), 0);
    int v = -1;
    for (int k = 0; k < 2; k++) {
        cw_wait w[2] = {cw_wait_recv(c, &v), cw_wait_sleep(ctx, 100 * CW_MSEC)};
        ck_assert_int_eq(cw_select(w, 2), 1);
    }
    int zero = 0, one = 1;
    ck_assert_int_eq(cw_chan_send(c, &zero), CW_OK);
    ck_assert_int_eq(cw_chan_send(c, &one), CW_OK);

    /* The receive loses to a ready branch: it must take nothing. */
    cw_wait prefer[2] = {cw_wait_ready(ctx, CW_OK), cw_wait_recv(c, &v)};
    ck_assert_int_eq(cw_select(prefer, 2), 0);
    ck_assert_int_eq(v, -1);

    for (int k = 0; k < 2; k++) {
        cw_wait w[2] = {cw_wait_sleep(ctx, 100 * CW_MSEC), cw_wait_recv(c, &v)};
        ck_assert_int_eq(cw_select(w, 2), 1);
        ck_assert_int_eq(v, k);
    }
    cw_chan_sender_drop(c);
    cw_chan_receiver_drop(c);
    return NULL;
}

CWC_CASE(select_loop, "select", "SEL-001 SEL-002", 0)
{
    cwc_run_ok(NULL, select_loop_root, NULL);
}

static void *poll_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_chan *c = cw_chan_new(ctx, sizeof(int), 1);
    int v = 0;
    cw_wait recv = cw_wait_recv(c, &v);
    ck_assert_int_eq(cw_poll(&recv, 1), CW_ERR_WOULD_BLOCK);
    int seven = 7;
    ck_assert_int_eq(cw_chan_try_send(c, &seven), CW_OK);
    ck_assert_int_eq(cw_chan_try_send(c, &seven), CW_ERR_WOULD_BLOCK);
    ck_assert_int_eq(cw_poll(&recv, 1), 0);
    ck_assert_int_eq(v, 7);
    /* The same wait may be used again: it tries its operation anew. */
    ck_assert_int_eq(cw_poll(&recv, 1), CW_ERR_WOULD_BLOCK);
    cw_chan_sender_drop(c);
    cw_chan_receiver_drop(c);
    return NULL;
}

CWC_CASE(select_poll_never_blocks, "select", "SEL-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, poll_root, NULL);
}
