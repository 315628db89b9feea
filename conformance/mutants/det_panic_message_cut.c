/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A panic's message loses its last character on its way to
 * result.message (PAN-001, RUN-004). */
#define CWM_BASE "deterministic"
#include "mutant.h"

#include <string.h>

static void cutting_panic(cw_ctx *ctx, const char *message)
{
    char msg[CW_PANIC_MESSAGE_MAX];
    size_t n = strlen(message);
    memcpy(msg, message, n + 1);
    if (n > 0)
        msg[n - 1] = '\0';
    cwm_base->panic(ctx, msg);
}

static void mutate(void)
{
    cwm.panic = cutting_panic;
}
