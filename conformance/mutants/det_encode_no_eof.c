/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_metrics_encode leaves out the final "# EOF" line, so a scraper cannot
 * tell a complete exposition from a cut one (MET-006). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static char *endless_encode(cw_ctx *ctx)
{
    char *text = cwm_base_metrics->encode(ctx);
    char *eof = text ? strstr(text, "# EOF\n") : NULL;
    if (eof)
        *eof = '\0';
    return text;
}

static void mutate(void)
{
    cwm_metrics.encode = endless_encode;
}
