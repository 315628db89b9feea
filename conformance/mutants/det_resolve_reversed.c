/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_resolve gives a name's addresses in the reverse of the order they
 * were registered (NET-020). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int reversed_resolve(cw_ctx *ctx, const char *host, cw_addr *out, size_t cap, size_t *n,
                            cw_resolve_error *err)
{
    int rc = cwm_base_network->resolve(ctx, host, out, cap, n, err);
    for (size_t i = 0; rc == CW_OK && i < *n / 2; i++) {
        cw_addr t = out[i];
        out[i] = out[*n - 1 - i];
        out[*n - 1 - i] = t;
    }
    return rc;
}

static void mutate(void)
{
    cwm_network.resolve = reversed_resolve;
}
