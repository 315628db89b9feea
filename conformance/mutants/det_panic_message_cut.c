/* A panic's message loses its last character on its way to
 * result.message (PAN-001, RUN-004). */
#define CWM_BASE "deterministic"
#include "mutant.h"

#include <stdarg.h>
#include <stdio.h>

static void forward_panic(cw_ctx *ctx, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    cwm_base->vpanic(ctx, fmt, ap);
    va_end(ap);
}

static void cutting_vpanic(cw_ctx *ctx, const char *fmt, va_list ap)
{
    char msg[512];
    int n = vsnprintf(msg, sizeof msg, fmt, ap);
    if (n > 0 && (size_t)n < sizeof msg)
        msg[n - 1] = '\0';
    forward_panic(ctx, "%s", msg);
}

static void mutate(void)
{
    cwm.vpanic = cutting_vpanic;
}
