/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * config-probe.c - what a build of the library says when a run asks for
 * io_uring (NAT-008): ci/config-test.sh links it against a scratch build
 * made without liburing and one made with it.
 *
 * Prints "status CODE (TEXT): message" and exits 0 whatever the status: the
 * script decides what the configuration it built should have answered.
 */
#include <stdio.h>

#include "cwrt/cwrt.h"

static void *root(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

int main(void)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.io_backend = CW_IO_URING;
    cw_run_result res;
    int rc = cw_start(cw_backend_native(), &cfg, root, NULL, &res);
    printf("status %d (%s): %s\n", rc, rc == CW_OK ? "ok" : cw_strerror(rc), res.message);
    return 0;
}
