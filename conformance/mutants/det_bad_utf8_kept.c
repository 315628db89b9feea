/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_metrics_encode writes a byte that begins no well-formed UTF-8
 * sequence as it is, not as U+FFFD (MET-009): the output is not valid
 * UTF-8. The mutant undoes the replacement, writing 0xFF in its place. */
#define CWM_BASE "deterministic"
#include "mutant.h"

static char *raw_encode(cw_ctx *ctx)
{
    char *text = cwm_base_metrics->encode(ctx);
    if (!text)
        return NULL;
    char *out = text;
    for (const char *in = text; *in; in++) {
        if (strncmp(in, "\xEF\xBF\xBD", 3) == 0) {
            *out++ = (char)0xFF;
            in += 2;
            continue;
        }
        *out++ = *in;
    }
    *out = '\0';
    return text;
}

static void mutate(void)
{
    cwm_metrics.encode = raw_encode;
}
