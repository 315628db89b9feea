/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_metrics_encode writes each HELP line without its closing period
 * (MET-007: the help as registered, and a period). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static char *periodless_encode(cw_ctx *ctx)
{
    char *text = cwm_base_metrics->encode(ctx);
    if (!text)
        return NULL;
    char *out = text;
    for (const char *in = text; *in; in++) {
        bool help_end = in[0] == '.' && in[1] == '\n';
        if (help_end) { /* a period ending a line that began "# HELP " */
            const char *line = in;
            while (line > text && line[-1] != '\n')
                line--;
            if (strncmp(line, "# HELP ", 7) == 0)
                continue;
        }
        *out++ = *in;
    }
    *out = '\0';
    return text;
}

static void mutate(void)
{
    cwm_metrics.encode = periodless_encode;
}
