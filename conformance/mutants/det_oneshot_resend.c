/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A second cw_oneshot_send returns CW_OK instead of CW_ERR_INVALID: the
 * sender cannot tell its value was dropped (CHN-005). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static int quiet_oneshot_send(cw_oneshot *o, const void *elem)
{
    int rc = cwm_base->oneshot_send(o, elem);
    return rc == CW_ERR_INVALID ? CW_OK : rc;
}

static void mutate(void)
{
    cwm.oneshot_send = quiet_oneshot_send;
}
