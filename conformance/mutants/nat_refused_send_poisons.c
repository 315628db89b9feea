/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A send turned away because another task's send waits on the sink
 * poisons the sink: every later send there fails with CW_ERR_CLOSED
 * (NET-035: the refused call changes nothing). */
#define CWM_BASE "native"
#include "mutant.h"

static cwm_set poisoned;

static int poisoning_send(cw_sink *s, const cw_iobufs *bufs)
{
    if (cwm_set_has(&poisoned, s))
        return CW_ERR_CLOSED;
    int rc = cwm_base_network->sink_send(s, bufs);
    if (rc == CW_ERR_INVALID)
        cwm_set_add(&poisoned, s);
    return rc;
}

static void mutate(void)
{
    cwm_network.sink_send = poisoning_send;
}
