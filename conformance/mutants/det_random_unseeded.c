/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_random draws from the OS instead of the run's seeded stream: two runs
 * with one seed see different bytes (DET-001). */
#define CWM_BASE "deterministic"
#include "mutant.h"

#include <sys/random.h>

static void os_random(cw_ctx *ctx, void *buf, size_t len)
{
    cwm_base->random(ctx, buf, len); /* keeps the audit event and the draw */
    if (getrandom(buf, len, 0) != (ssize_t)len)
        memset(buf, 0x5a, len);
}

static void mutate(void)
{
    cwm.random = os_random;
}
