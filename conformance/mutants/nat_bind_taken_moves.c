/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Binding an address already in use quietly listens on a free port
 * instead of failing with CW_ERR_BIND_FAILED (NET-003). */
#define CWM_BASE "native"
#include "mutant.h"

static int moving_bind(cw_ctx *ctx, const cw_addr *addr, cw_listener **out)
{
    int rc = cwm_base_network->bind(ctx, addr, out);
    if (rc != CW_ERR_BIND_FAILED || addr->port == 0)
        return rc;
    cw_addr any_port = *addr;
    any_port.port = 0;
    return cwm_base_network->bind(ctx, &any_port, out);
}

static void mutate(void)
{
    cwm_network.bind = moving_bind;
}
