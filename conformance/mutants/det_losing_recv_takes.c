/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A channel receive that lost a select still takes a value when one is
 * there: the value is gone, though the select reported another wait
 * (SEL-002: a losing receive takes no value). */
#define CWM_BASE "deterministic"
#include "mutant.h"

static cwm_ops_seen recv_kind;

static void noting_wait_recv(cw_wait *w, cw_chan *c, void *elem)
{
    cwm_base->wait_recv(w, c, elem);
    cwm_learn(w, &recv_kind);
}

static int greedy_select(cw_wait *waits, size_t n, bool block)
{
    int won = cwm_base->select(waits, n, block);
    for (size_t i = 0; won >= 0 && i < n; i++)
        if ((int)i != won && cwm_is(&waits[i], &recv_kind))
            (void)cwm_base->select(&waits[i], 1, false);
    return won;
}

static void mutate(void)
{
    cwm.wait_recv = noting_wait_recv;
    cwm.select = greedy_select;
}
