/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_metrics_encode writes a `"` inside a label value or help text as it
 * is, not as `\"` (MET-009): the label ends early for a scraper. */
#define CWM_BASE "deterministic"
#include "mutant.h"

static char *unescaped_encode(cw_ctx *ctx)
{
    char *text = cwm_base_metrics->encode(ctx);
    if (!text)
        return NULL;
    char *out = text;
    for (const char *in = text; *in; in++) {
        if (in[0] == '\\' && in[1] == '"')
            continue; /* drop the backslash, keep the quote */
        *out++ = *in;
    }
    *out = '\0';
    return text;
}

static void mutate(void)
{
    cwm_metrics.encode = unescaped_encode;
}
