/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_metric_release never removes a metric: after the last handle is
 * given up it stays in the output and keeps its value (MET-002). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void keeping_release(cw_metric *m)
{
    (void)m;
}

static void mutate(void)
{
    cwm_metrics.release = keeping_release;
}
