/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * turn.c - whose call a half carries. A half takes one send (a stream,
 * one recv) at a time [NET-035], and one that waited and was given up
 * leaves the half poisoned [NET-010], found out by the next call.
 *
 * Each call gets a ticket at its first try and keeps it across the tries
 * of its wait. `live` names the call waiting or under way, so another's
 * is refused and changes nothing; `busy` names the one that waited and
 * has not completed, so that when it is given up (its wait disarmed
 * without completing) the next call, with another ticket, finds it there.
 * A call that tries and neither completes nor waits (a poll, or a select
 * another wait won) puts both back as they were, unless part of it
 * happened: then it stays `busy`, since giving it up lost that part.
 */
#include "network/net.h"

int cw_turn_begin(cw_turn *t, uint64_t *ticket, cw_turn_mark *was)
{
    if (t->live && t->live != *ticket)
        return CW_ERR_INVALID;
    if (t->busy && t->busy != *ticket)
        return CW_ERR_CLOSED;
    if (!*ticket)
        *ticket = ++t->tickets;
    *was = (cw_turn_mark){t->busy, t->live};
    t->busy = t->live = *ticket;
    return CW_OK;
}

void cw_turn_pause(cw_turn *t, cw_turn_mark was, bool started)
{
    if (!started)
        t->busy = was.busy;
    t->live = was.live;
}

void cw_turn_end(cw_turn *t)
{
    t->busy = t->live = 0;
}

void cw_turn_arm(cw_turn *t, uint64_t ticket)
{
    t->busy = t->live = ticket;
}

void cw_turn_disarm(cw_turn *t, uint64_t ticket)
{
    if (t->live == ticket)
        t->live = 0;
}
