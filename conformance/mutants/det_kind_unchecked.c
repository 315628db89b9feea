/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Value functions do not check the kind of metric they are given: a
 * counter add on a gauge adds to it, a gauge set on a counter's value
 * moves a gauge (MET-013: on another kind, updates change nothing). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void loose_counter_add(cw_metric *m, uint64_t n)
{
    cwm_base_metrics->counter_add(m, n);
    cwm_base_metrics->gauge_add(m, (int64_t)n); /* nothing on a counter; adds on a gauge */
}

static void mutate(void)
{
    cwm_metrics.counter_add = loose_counter_add;
}
