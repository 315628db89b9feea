/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Every bind leaves one descriptor open for good, as a backend that loses
 * track of a socket it probed does (NAT-006: when cw_start returns, every
 * descriptor the run opened is closed). */
#define CWM_BASE "native"
#include "mutant.h"

#include <fcntl.h>

static int leaking_bind(cw_ctx *ctx, const cw_addr *addr, cw_listener **out)
{
    (void)open("/dev/null", O_RDONLY | O_CLOEXEC); /* never closed */
    return cwm_base_network->bind(ctx, addr, out);
}

static void mutate(void)
{
    cwm_network.bind = leaking_bind;
}
