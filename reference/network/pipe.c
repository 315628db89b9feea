/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * pipe.c - in-memory byte pipes: a sink that appends straight to its peer
 * stream's buffer. The deterministic backend's connections are two of them
 * (deterministic/memory_network.c); the mock channel, on every backend, is
 * one on its own.
 *
 * Nothing here depends on real time or on the host: a send appends to the
 * peer's buffer and wakes the task waiting on it, and the scheduler decides
 * when that task runs. So every run of a seed replays.
 *
 * With a network latency or jitter in the run's configuration, the bytes of
 * a dialed connection are in flight for a while first [NET-027]: each send
 * is a segment with an arrival time on the virtual clock, queued on the
 * receiving stream, and the stream's own alarm (one with no task, see
 * core/alarm.c) makes the due segments visible and wakes the readers. An
 * alarm rather than a check when a reader looks is what lets the scheduler
 * jump the clock to the next arrival when every task waits.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"
#include "network/net.h"

static void reset(cw_sink *s);

void cw_mem_link(cw_sink *sink, cw_stream *stream)
{
    sink->reader = stream;
    stream->writer = sink;
}

/* ---- Bytes in flight [NET-027] -------------------------------------------------------- */

static bool latency_on(const cw_rt *rt)
{
    return cw_rt_config(rt)->network_latency != 0 || cw_rt_config(rt)->network_jitter != 0;
}

static uint64_t add_saturating(uint64_t a, uint64_t b)
{
    return a > UINT64_MAX - b ? UINT64_MAX : a + b;
}

/* When the bytes of a send made now arrive: after the latency and a draw in
 * [0, jitter], and never before the previous send's, so that a direction's
 * bytes stay in order. Nothing is drawn without jitter, which leaves the
 * random stream (and so the schedule) of such a run as it was. */
static cw_time arrival_time(cw_stream *s)
{
    cw_rt *rt = s->rt;
    cw_duration jitter = cw_rt_config(rt)->network_jitter;
    cw_duration delay = cw_rt_config(rt)->network_latency;
    if (jitter) {
        uint64_t r = cw_rt_draw(rt);
        /* next() % (jitter + 1), where jitter + 1 would wrap to 0 at the top */
        delay = add_saturating(delay, jitter == UINT64_MAX ? r : r % (jitter + 1));
    }
    cw_time at = add_saturating(cw_rt_now(rt), delay);
    return at > s->last_arrival ? at : s->last_arrival;
}

static cw_segment *segment_at(cw_stream *s, size_t i)
{
    return &s->segs[(s->seg_head + i) % s->seg_cap];
}

/* Room for one more segment in the ring, keeping their order. */
static bool segment_reserve(cw_stream *s)
{
    if (s->nsegs < s->seg_cap)
        return true;
    size_t old = s->seg_cap, cap = old ? 2 * old : 16;
    cw_segment *segs = malloc(cap * sizeof *segs);
    if (!segs)
        return false;
    for (size_t i = 0; old > 0 && i < s->nsegs; i++)
        segs[i] = s->segs[(s->seg_head + i) % old];
    free(s->segs);
    s->segs = segs;
    s->seg_cap = cap;
    s->seg_head = 0;
    return true;
}

static void audit_deliver(cw_stream *s, size_t len)
{
    /* Formatting the address costs more than the rest of an arrival: skip
     * it in a run that keeps no digest. */
    if (!cw_audited(s->rt))
        return;
    char text[CW_ADDR_TEXT_MAX];
    uint8_t n[8];
    cw_be64(n, len);
    cw_field f[2] = {{cw_addr_format(&s->remote, text), strlen(text)}, {n, 8}};
    cw_audit(s->rt, "deliver", f, 2);
}

/* Make every segment due by `now` visible, and the end if it came with the
 * last of them. */
static void arrive_due(cw_stream *s, cw_time now)
{
    if (s->held)
        return;
    bool arrived = false;
    while (s->nsegs > 0 && segment_at(s, 0)->at <= now) {
        cw_segment *g = segment_at(s, 0);
        s->len += g->len;
        s->flying -= g->len;
        s->eof = s->eof || g->eof;
        arrived = arrived || g->len > 0 || g->eof;
        audit_deliver(s, g->len);
        s->seg_head = (s->seg_head + 1) % s->seg_cap;
        s->nsegs--;
    }
    if (s->nsegs == 0 && s->end_held) {
        s->end_held = false;
        s->eof = arrived = true;
    }
    if (arrived)
        cw_waiters_wake(s->rt, &s->waiters);
}

static void arm_arrival(cw_stream *s)
{
    cw_waitv_of(&s->arrival)->deadline = segment_at(s, 0)->at;
    bool armed = cw_rt_alarm_arm(s->rt, &s->arrival, NULL);
    (void)armed; /* in its reserved place: it cannot fail */
}

/* The stream's alarm is due: the oldest segments arrived. */
static void arrival_fire(cw_wait *w)
{
    cw_stream *s = w->object;
    cw_rt *rt = s->rt;
    cw_rt_lock(rt);
    arrive_due(s, cw_rt_now(rt));
    if (s->nsegs > 0 && !s->held) /* a held stream waits for its repair */
        arm_arrival(s);
    cw_rt_unlock(rt);
}

static const cw_alarm_ops arrival_ops = {arrival_fire};

/* A dialed connection's stream: its bytes will take the run's latency.
 * Its arrival alarm's place is reserved now, so that a send never finds
 * the alarm heap full; false when memory is exhausted. */
bool cw_pipe_delay(cw_stream *s)
{
    if (!cw_rt_alarm_reserve(s->rt))
        return false;
    s->delayed = true;
    memset(&s->arrival, 0, sizeof s->arrival);
    s->arrival.backend = s->hdr.backend;
    s->arrival.ops = &arrival_ops;
    s->arrival.object = s;
    cw_waitv_of(&s->arrival)->rt = s->rt;
    return true;
}

/* Put `len` bytes just copied after the buffered ones in flight. Every
 * segment already queued arrives later than now (the scheduler delivers
 * what is due before any task runs again), so a send that arrives now had
 * nothing ahead of it. */
static void send_in_flight(cw_stream *s, size_t len)
{
    cw_time at = arrival_time(s);
    cw_time now = cw_rt_now(s->rt);
    s->last_arrival = at;
    s->flying += len;
    s->nsegs++;
    *segment_at(s, s->nsegs - 1) = (cw_segment){at, len, false};
    if (at <= now)
        arrive_due(s, now);
    else if (s->nsegs == 1 && !s->held)
        arm_arrival(s);
}

void cw_mem_hold(cw_stream *s)
{
    if (s->held)
        return;
    s->held = true;
    if (s->nsegs > 0)
        cw_rt_alarm_disarm(s->rt, &s->arrival);
}

void cw_mem_release(cw_stream *s)
{
    if (!s->held)
        return;
    s->held = false;
    arrive_due(s, cw_rt_now(s->rt));
    if (s->nsegs > 0)
        arm_arrival(s);
}

bool cw_mem_deliver(cw_stream *s, const cw_iobufs *bufs)
{
    size_t len = cw_iobufs_len(bufs);
    /* Bytes stay behind those held or in flight, so that they keep their order. */
    bool delayed = s->delayed && (latency_on(s->rt) || s->held || s->nsegs > 0);
    if (!cw_stream_reserve(s, len) || (delayed && !segment_reserve(s)))
        return false;
    uint8_t *at = s->buf + s->off + s->len + s->flying;
    const cw_iobuf *c;
    for (size_t i = 0; (c = cw_iobufs_chunk(bufs, i)); i++) {
        if (c->len)
            memcpy(at, c->data, c->len);
        at += c->len;
    }
    if (delayed) {
        send_in_flight(s, len);
        return true;
    }
    s->len += len;
    if (len)
        cw_waiters_wake(s->rt, &s->waiters);
    return true;
}

int cw_mem_send(cw_sink *s, const cw_iobufs *bufs)
{
    cw_stream *r = s->reader;
    if (!r)
        return CW_ERR_SEND_FAILED;
    /* Only connections reset, never the mock channel; decided before the
     * jitter is drawn (11-deterministic.md). */
    if (r->delayed && cw_rt_chance(s->rt, cw_rt_config(s->rt)->network_reset)) {
        reset(s);
        return CW_ERR_SEND_FAILED;
    }
    return cw_mem_deliver(r, bufs) ? CW_OK : CW_ERR_NOMEM;
}

void cw_mem_writer_closed(cw_stream *s)
{
    s->writer = NULL;
    if (s->nsegs > 0) {
        segment_at(s, s->nsegs - 1)->eof = true; /* the end follows the last bytes */
        return;
    }
    if (s->held) {
        s->end_held = true;
        return;
    }
    s->eof = true;
    cw_waiters_wake(s->rt, &s->waiters);
}

/* Each side's sink loses its stream, as if both streams were closed, and
 * each stream ends after what is already in flight to it [NET-032]. */
static void reset(cw_sink *s)
{
    cw_stream *theirs = s->reader, *ours = s->twin;
    s->reader = NULL;
    if (theirs)
        cw_mem_writer_closed(theirs);
    if (ours && ours->writer) {
        ours->writer->reader = NULL;
        cw_mem_writer_closed(ours);
    }
}

void cw_mem_drop_flight(cw_stream *s)
{
    if (s->delayed) {
        cw_rt_alarm_disarm(s->rt, &s->arrival);
        cw_rt_alarm_unreserve(s->rt);
        s->delayed = false;
    }
    free(s->segs);
    s->segs = NULL;
    s->nsegs = s->seg_cap = s->seg_head = 0;
    s->flying = 0;
}

int cw_mem_mock_channel(cw_ctx *ctx, cw_sink **sink, cw_stream **stream)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_addr none;
    memset(&none, 0, sizeof none);
    none.family = CW_ADDR_IPV4;
    cw_rt_lock(rt);
    bool made = cw_net_open(rt) && cw_halves_new(rt, cw_ctx_backend(ctx), &none, sink, stream);
    if (made)
        cw_mem_link(*sink, *stream);
    cw_rt_unlock(rt);
    return made ? CW_OK : CW_ERR_NOMEM;
}
