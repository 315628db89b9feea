/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Closing a listener keeps the connections dialed to it and never
 * accepted open: their dialers never see the connection end (NET-026). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static void hoarding_close(cw_listener *l)
{
    for (;;) { /* take every pending connection, and keep it */
        cw_wait w;
        cw_conn c;
        cwm_base_network->wait_accept(&w, l, &c);
        if (cwm_base->select(&w, 1, false) != 0 || w.result != CW_OK)
            break;
    }
    cwm_base_network->listener_close(l);
}

static void mutate(void)
{
    cwm_network.listener_close = hoarding_close;
}
