/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_counter_add keeps only the low 32 bits of the amount added (MET-011). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void narrow_counter_add(cw_metric *m, uint64_t n)
{
    cwm_base_metrics->counter_add(m, (uint32_t)n);
}

static void mutate(void)
{
    cwm_metrics.counter_add = narrow_counter_add;
}
