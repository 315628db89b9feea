/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_args.c - arguments a network call can check and must refuse
 * (NET-020): an error code, never a crash or a made-up answer; and one it
 * must not (out NULL with cap 0).
 */
#include "cases/util.h"

static void *resolve_args_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr out[4];
    size_t n = 7;
    ck_assert_int_eq(cw_resolve(ctx, NULL, out, 4, &n, NULL), CW_ERR_INVALID);
    ck_assert_uint_eq(n, 0);
    n = 7;
    ck_assert_int_eq(cw_resolve(ctx, "localhost", NULL, 4, &n, NULL), CW_ERR_INVALID);
    ck_assert_uint_eq(n, 0);
    n = 7;
    ck_assert_int_eq(cw_resolve(ctx, "localhost", NULL, 1, &n, NULL), CW_ERR_INVALID);
    ck_assert_uint_eq(n, 0);
    /* Room for none is no mistake: no array is needed to hold none. */
    n = 7;
    int rc = cw_resolve(ctx, "localhost", NULL, 0, &n, NULL);
    ck_assert_msg(rc == CW_OK || rc == CW_ERR_RESOLVE_FAILED, "cap 0, out NULL: %s",
                  cw_strerror(rc));
    ck_assert_uint_eq(n, 0);
    return NULL;
}

CWC_CASE(network_resolve_bad_arguments, "network", "NET-020 RUN-008",
         CWC_NEEDS_NETWORK | CWC_REPEATED)
{
    cwc_run_ok(NULL, resolve_args_root, NULL);
}
