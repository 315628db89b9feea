/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_gauge_add with a negative delta does nothing: a gauge only goes up
 * through cw_gauge_add and cw_gauge_dec (MET-011). */
#define CWM_BASE "native"
#include "mutant.h"

static void rising_gauge_add(cw_metric *m, int64_t delta)
{
    if (delta >= 0)
        cwm_base_metrics->gauge_add(m, delta);
}

static void mutate(void)
{
    cwm_metrics.gauge_add = rising_gauge_add;
}
