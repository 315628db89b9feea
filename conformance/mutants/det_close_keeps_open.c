/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Closing a sink does not tell the peer: its stream never sees the end of
 * the connection, and a recv waits for ever (NET-014). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void silent_close(cw_sink *s)
{
    (void)s; /* leaked until the run ends, which frees it */
}

static void mutate(void)
{
    cwm_network.sink_close = silent_close;
}
