/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* cw_family_remove reports success and removes nothing: the child stays in
 * the output, and a child that never existed is not refused (MET-012). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int pretend_remove(cw_metric *family, const char *const *values)
{
    (void)family, (void)values;
    return CW_OK;
}

static void mutate(void)
{
    cwm_metrics.family_remove = pretend_remove;
}
