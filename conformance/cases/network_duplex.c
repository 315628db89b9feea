/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_duplex.c - many connections, each used by several tasks at once
 * (spec/18-network.md): both halves busy at once, and halves closed while
 * the other half of their connection is busy.
 *
 * On every connection one task sends while another receives, on both
 * sides, and the echoing side hands each message from its receiving task
 * to its sending task through a channel. The receiving tasks wait in
 * selects that mix the stream with a sleep or with a channel. On a
 * parallel backend these tasks run on different workers at once, so a
 * runtime that guards a connection's halves, its waiters or its readiness
 * with too little locking loses, duplicates or reorders bytes here (or is
 * caught by a thread sanitizer), and one that locks too much still passes:
 * this asserts what must hold, not how it is achieved.
 */
#include <stdio.h>
#include <string.h>

#include "cases/network_util.h"

enum { DUPLEX_CONNS = 16, DUPLEX_MSGS = 120, DUPLEX_LEN = 24 };

/* Message `seq` of connection `conn`: both numbers, then a pattern of
 * both, so that a byte of another message or connection shows. */
static void duplex_msg(int conn, int seq, uint8_t out[DUPLEX_LEN])
{
    snprintf((char *)out, DUPLEX_LEN, "%03d:%05d:", conn, seq);
    for (size_t i = 10; i < DUPLEX_LEN; i++)
        out[i] = (uint8_t)(conn * 31 + seq * 7 + (int)i);
}

/* One message as one chunk: the send's result. */
static int duplex_send(cw_sink *s, const uint8_t bytes[DUPLEX_LEN])
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf b;
    int rc = l ? cw_iobuf_copy(cwc_backend, bytes, DUPLEX_LEN, &b) : CW_ERR_NOMEM;
    if (rc == CW_OK && (rc = cw_iobufs_append(l, &b)) != CW_OK)
        cw_iobuf_release(&b);
    if (rc == CW_OK)
        rc = cw_sink_send(s, l);
    if (l)
        cw_iobufs_release(l);
    return rc;
}

/* One side of one connection, and what its tasks share. */
struct duplex_side {
    cw_ctx *ctx;
    struct half_pair halves;
    cw_chan *relay; /* echoing side: from its receiving task to its sending one */
    cw_chan *never; /* echoing side: a channel nothing is sent on */
    int conn;
};

/* Send message `seq` of its connection on the side's sink. */
static void send_message(const struct duplex_side *d, int seq)
{
    uint8_t bytes[DUPLEX_LEN];
    duplex_msg(d->conn, seq, bytes);
    int rc = duplex_send(d->halves.sink, bytes);
    CWC_REQUIRE(rc == CW_OK, "connection %d, message %d: send gave %d", d->conn, seq, rc);
}

/* Receive the next message on the side's stream: it must be message
 * `seq` of its connection, whole. */
static void expect_message(const struct duplex_side *d, int seq)
{
    uint8_t want[DUPLEX_LEN];
    duplex_msg(d->conn, seq, want);
    cw_iobufs *got = NULL;
    int rc = cw_stream_recv(d->halves.stream, DUPLEX_LEN, &got);
    CWC_REQUIRE(rc == CW_OK, "connection %d, message %d: recv gave %d", d->conn, seq, rc);
    CWC_REQUIRE(cw_iobufs_equal_bytes(got, want, DUPLEX_LEN),
                "connection %d, message %d: other bytes came", d->conn, seq);
    cw_iobufs_release(got);
}

/* Echoing side, receiving: each message within a generous timeout (a
 * select of the stream and a sleep), then one select of the stream and a
 * channel that stays empty, so both kinds of wait share selects with a
 * stream, in either place. */
static void *echo_receiver(cw_ctx *ctx, void *arg)
{
    struct duplex_side *d = arg;
    for (int seq = 0; seq < DUPLEX_MSGS; seq++) {
        cw_iobufs *got = NULL;
        cw_wait w = cw_wait_stream_recv(d->halves.stream, DUPLEX_LEN, &got);
        int rc;
        if (seq % 2) {
            rc = cw_timeout(ctx, 60 * CW_SEC, &w);
        } else {
            /* The stream first, then second: each of the select's objects
             * is guarded, not only the one it happens to name first. */
            int unused, mine = seq % 4 ? 1 : 0;
            cw_wait both[2];
            both[mine] = w;
            both[1 - mine] = cw_wait_recv(d->never, &unused);
            int won = cw_select(both, 2);
            CWC_REQUIRE(won == mine, "connection %d, message %d: select gave %d", d->conn, seq,
                        won);
            rc = both[mine].result;
        }
        CWC_REQUIRE(rc == CW_OK, "connection %d, message %d: recv gave %d", d->conn, seq, rc);
        uint8_t bytes[DUPLEX_LEN];
        rc = cw_iobufs_copy_out(got, bytes, DUPLEX_LEN);
        CWC_REQUIRE(rc == CW_OK && cw_iobufs_len(got) == 0, "connection %d: not %d bytes", d->conn,
                    DUPLEX_LEN);
        cw_iobufs_release(got);
        rc = cw_chan_send(d->relay, bytes);
        CWC_REQUIRE(rc == CW_OK, "connection %d: relay gave %d", d->conn, rc);
    }
    return NULL;
}

/* Echoing side, sending: what the receiving task relayed, in order. */
static void *echo_sender(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct duplex_side *d = arg;
    for (int seq = 0; seq < DUPLEX_MSGS; seq++) {
        uint8_t bytes[DUPLEX_LEN];
        int rc = cw_chan_recv(d->relay, bytes);
        CWC_REQUIRE(rc == CW_OK, "connection %d: relay gave %d", d->conn, rc);
        rc = duplex_send(d->halves.sink, bytes);
        CWC_REQUIRE(rc == CW_OK, "connection %d, echo %d: send gave %d", d->conn, seq, rc);
    }
    return NULL;
}

/* Dialing side, sending every message of its connection. */
static void *dial_sender(cw_ctx *ctx, void *arg)
{
    struct duplex_side *d = arg;
    for (int seq = 0; seq < DUPLEX_MSGS; seq++) {
        send_message(d, seq);
        if (seq % 16 == 0)
            cw_yield(ctx); /* let the echo interleave with the sends */
    }
    return NULL;
}

/* Dialing side, receiving: exactly its own messages, in order [NET-016]. */
static void *dial_receiver(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct duplex_side *d = arg;
    for (int seq = 0; seq < DUPLEX_MSGS; seq++)
        expect_message(d, seq);
    return NULL;
}

static cw_handle *start(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    return cw_spawn(cw_child(ctx, "duplex"), fn, arg);
}

static void *duplex_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct duplex_side dial[DUPLEX_CONNS], echo[DUPLEX_CONNS];
    struct half_pair first_a, first_b;
    cw_listener *l = connect_halves(ctx, &first_a, &first_b);
    dial[0] = (struct duplex_side){ctx, first_a, NULL, NULL, 0};
    echo[0] = (struct duplex_side){ctx, first_b, NULL, NULL, 0};
    for (int i = 1; i < DUPLEX_CONNS; i++) {
        dial[i] = (struct duplex_side){ctx, {NULL, NULL}, NULL, NULL, i};
        echo[i] = dial[i];
        connect_through(ctx, l, &dial[i].halves, &echo[i].halves);
    }
    cw_handle *h[4 * DUPLEX_CONNS];
    for (int i = 0; i < DUPLEX_CONNS; i++) {
        echo[i].relay = cw_chan_new(ctx, DUPLEX_LEN, 4);
        echo[i].never = cw_chan_new(ctx, sizeof(int), 1);
        h[4 * i] = start(ctx, echo_receiver, &echo[i]);
        h[4 * i + 1] = start(ctx, echo_sender, &echo[i]);
        h[4 * i + 2] = start(ctx, dial_receiver, &dial[i]);
        h[4 * i + 3] = start(ctx, dial_sender, &dial[i]);
    }
    for (int i = 0; i < 4 * DUPLEX_CONNS; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    for (int i = 0; i < DUPLEX_CONNS; i++) {
        cw_chan_receiver_drop(echo[i].relay);
        cw_chan_sender_drop(echo[i].relay);
        cw_chan_receiver_drop(echo[i].never);
        cw_chan_sender_drop(echo[i].never);
        close_halves(&dial[i].halves);
        close_halves(&echo[i].halves);
    }
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_duplex_connections, "network", "NET-016 NET-008 NET-009 NET-011 SEL-001 RUN-008",
         CWC_REPEATED)
{
    cwc_run_ok(NULL, duplex_root, NULL);
}

/* ---- Halves that close while the other half works ------------------------------------- */

/* On each connection each side sends some messages and closes its sink,
 * and receives the peer's messages, then the end, and closes its stream.
 * One direction carries few messages and the other many, alternating with
 * the connection, so some sinks close while their own stream is still
 * receiving and some streams close while their sink is still sending, on
 * both sides, with the tasks on different workers where the backend has
 * them. The halves are independent [NET-001]: every message still arrives
 * whole and in order, and each stream sees the end only after all of its
 * peer's bytes [NET-014]. */
enum { HALF_FEW = 6, HALF_MANY = 90, HALF_TO_DIALER = 50000 };

struct closing_half {
    struct duplex_side *side;
    int sends;    /* the messages its sink sends before it closes */
    int receives; /* the messages its stream gets before the end */
    int first;    /* the seq of its first message sent; the peer's is the other */
};

static void *closing_sender(cw_ctx *ctx, void *arg)
{
    struct closing_half *c = arg;
    struct duplex_side *d = c->side;
    for (int i = 0; i < c->sends; i++) {
        send_message(d, c->first + i);
        if (i % 8 == 7)
            cw_yield(ctx);
    }
    cw_sink_close(d->halves.sink);
    d->halves.sink = NULL;
    return NULL;
}

static void *closing_receiver(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct closing_half *c = arg;
    struct duplex_side *d = c->side;
    int from = c->first == 0 ? HALF_TO_DIALER : 0;
    for (int i = 0; i < c->receives; i++)
        expect_message(d, from + i);
    cw_iobufs *more = NULL;
    int rc = cw_stream_recv(d->halves.stream, 1, &more);
    CWC_REQUIRE(rc == CW_ERR_RECV_FAILED, "connection %d: a recv past the end gave %d", d->conn,
                rc);
    cw_stream_close(d->halves.stream);
    d->halves.stream = NULL;
    return NULL;
}

static void *closing_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static struct duplex_side dial[DUPLEX_CONNS], acc[DUPLEX_CONNS];
    static struct closing_half half[2 * DUPLEX_CONNS];
    cw_listener *l = connect_halves(ctx, &dial[0].halves, &acc[0].halves);
    for (int i = 1; i < DUPLEX_CONNS; i++)
        connect_through(ctx, l, &dial[i].halves, &acc[i].halves);
    cw_handle *h[4 * DUPLEX_CONNS];
    for (int i = 0; i < DUPLEX_CONNS; i++) {
        int out = i % 2 ? HALF_MANY : HALF_FEW, back = i % 2 ? HALF_FEW : HALF_MANY;
        dial[i].conn = acc[i].conn = i;
        half[2 * i] = (struct closing_half){&dial[i], out, back, 0};
        half[2 * i + 1] = (struct closing_half){&acc[i], back, out, HALF_TO_DIALER};
        for (int k = 0; k < 2; k++) {
            h[4 * i + 2 * k] = start(ctx, closing_receiver, &half[2 * i + k]);
            h[4 * i + 2 * k + 1] = start(ctx, closing_sender, &half[2 * i + k]);
        }
    }
    for (int i = 0; i < 4 * DUPLEX_CONNS; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    for (int i = 0; i < DUPLEX_CONNS; i++)
        ck_assert(!dial[i].halves.sink && !dial[i].halves.stream && !acc[i].halves.sink &&
                  !acc[i].halves.stream);
    cw_listener_close(l);
    return NULL;
}

/* Without zero_linger: with it, the close of a connection's last half
 * may reset the connection before the peer read what was sent [NET-018]. */
CWC_CASE(network_halves_close_while_the_other_half_works, "network",
         "NET-001 NET-014 NET-016 NET-009 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.zero_linger = false;
    cwc_run_ok(&cfg, closing_root, NULL);
}
