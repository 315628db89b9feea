/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A label that starts with a digit is accepted (silently prefixed with
 * "n") instead of panicking the caller (CTX-002). */
#define CWM_BASE "deterministic"
#include "mutant.h"

#include <stdio.h>

static cw_ctx *lenient_child(cw_ctx *ctx, const char *label)
{
    if (label && label[0] >= '0' && label[0] <= '9') {
        char fixed[256];
        snprintf(fixed, sizeof fixed, "n%s", label);
        return cwm_base->child(ctx, fixed);
    }
    return cwm_base->child(ctx, label);
}

static void mutate(void)
{
    cwm.child = lenient_child;
}
