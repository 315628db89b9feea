/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A recv turned away because another task's recv waits on the stream
 * poisons the stream: every later recv there fails with CW_ERR_CLOSED
 * (NET-035: the refused call changes nothing). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cwm_set poisoned;

static int poisoning_recv(cw_stream *s, size_t len, cw_iobufs **out)
{
    if (cwm_set_has(&poisoned, s)) {
        *out = NULL;
        return CW_ERR_CLOSED;
    }
    int rc = cwm_base_network->stream_recv(s, len, out);
    if (rc == CW_ERR_INVALID)
        cwm_set_add(&poisoned, s);
    return rc;
}

static void mutate(void)
{
    cwm_network.stream_recv = poisoning_recv;
}
