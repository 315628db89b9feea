/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_counter_add loses an update when another thread adds to a counter at
 * the same moment, as a read-modify-write without a lock or an atomic does
 * (MET-011: no update is lost). */
#define CWM_BASE "native"
#include "mutant.h"

#include <sched.h>

static atomic_int adding; /* threads inside an add now */

static void racy_add(cw_metric *m, uint64_t n)
{
    if (atomic_fetch_add(&adding, 1) == 0) {
        sched_yield(); /* the window a racing add falls into */
        cwm_base_metrics->counter_add(m, n);
    } /* else: overwritten by the add already under way */
    atomic_fetch_sub(&adding, 1);
}

static void mutate(void)
{
    cwm_metrics.counter_add = racy_add;
}
