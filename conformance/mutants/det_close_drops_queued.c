/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* When the last sender of a channel is dropped, the values still queued
 * are thrown away: the receiver gets CW_ERR_CLOSED at once (CHN-003: the
 * queued values first, then CW_ERR_CLOSED). */
#define CWM_BASE "deterministic"
#include "mutant.h"

enum { REMEMBERED = 1024, MAX_ELEM = 4096 };
static struct {
    cw_chan *chan;
    size_t elem_size;
    int senders;
} chans[REMEMBERED];
static size_t nchans;

static int index_of(const cw_chan *c)
{
    for (size_t i = 0; i < nchans; i++)
        if (chans[i].chan == c)
            return (int)i;
    return -1;
}

static cw_chan *noting_new(cw_ctx *ctx, size_t elem_size, size_t capacity)
{
    cw_chan *c = cwm_base->chan_new(ctx, elem_size, capacity);
    if (c && nchans < REMEMBERED)
        chans[nchans].chan = c, chans[nchans].elem_size = elem_size, chans[nchans++].senders = 1;
    return c;
}

static void noting_add(cw_chan *c)
{
    int i = index_of(c);
    if (i >= 0)
        chans[i].senders++;
    cwm_base->chan_sender_add(c);
}

/* Take every queued value, and forget it. */
static void drain(cw_chan *c, size_t elem_size)
{
    static unsigned char sink[MAX_ELEM];
    if (elem_size > sizeof sink)
        return;
    for (;;) {
        cw_wait w;
        cwm_base->wait_recv(&w, c, sink);
        if (cwm_base->select(&w, 1, false) != 0 || w.result != CW_OK)
            return;
    }
}

static void dropping_drop(cw_chan *c)
{
    int i = index_of(c);
    if (i >= 0 && --chans[i].senders == 0)
        drain(c, chans[i].elem_size);
    cwm_base->chan_sender_drop(c);
}

static void mutate(void)
{
    cwm.chan_new = noting_new;
    cwm.chan_sender_add = noting_add;
    cwm.chan_sender_drop = dropping_drop;
}
