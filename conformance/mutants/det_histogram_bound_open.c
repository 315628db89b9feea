/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A histogram observation equal to a bucket's bound is counted in the next
 * bucket, as if bounds were exclusive (MET-011: the first bucket whose
 * bound is >= v). The sum is off by the same ulp. */
#define CWM_BASE "deterministic"
#include "mutant.h"

#include <math.h>

static void exclusive_observe(cw_metric *m, double v)
{
    cwm_base_metrics->histogram_observe(m, isfinite(v) ? nextafter(v, INFINITY) : v);
}

static void mutate(void)
{
    cwm_metrics.histogram_observe = exclusive_observe;
}
