/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * native_net_io.c - a parallel backend's TCP connections behave the same
 * whichever way cfg.io_backend sends its I/O (NAT-008): many connections
 * echo messages of every size around the read buffer, a recv that lost a
 * select poisons its stream and closing that stream leaves the sink
 * working, and the end of the peer's sink ends the stream after its
 * bytes, a reset by the peer fails a recv and a send waiting for room; accepts that lost a select
 * leave the connections dialed after them in order, and closing the listener closes the one never
 * accepted. Each way with one worker (no other thread to bring a completion back) and with the
 * default, half the peers on dedicated threads that end before the run does. Skipped on backends
 * without CW_CAP_PARALLEL.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cases/fds.h"
#include "cases/network_util.h"

enum { CONNS = 8, ROUNDS = 24, READ_BUFFER = 4096, MAX_MESSAGE = 3 * READ_BUFFER + 17 };
enum { PARKED = 200 };

/* Message `round` of connection `id`: its length and its bytes. */
static size_t message_len(unsigned id, unsigned round)
{
    return 1 + (round * 2654435761u + id * 40503u) % MAX_MESSAGE;
}

static void message_fill(uint8_t *buf, size_t len, unsigned id, unsigned round)
{
    for (size_t i = 0; i < len; i++)
        buf[i] = (uint8_t)(i * 31 + round * 7 + id);
}

/* The accepting side of one connection: every message back as it came. */
static void *echo_peer(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct half_pair *p = arg;
    for (unsigned r = 0; r < ROUNDS; r++) {
        uint8_t head[4] = {0};
        cw_iobufs *got = NULL;
        ck_assert_int_eq(cw_stream_recv(p->stream, sizeof head, &got), CW_OK);
        ck_assert_int_eq(cw_iobufs_copy_out(got, head, sizeof head), CW_OK);
        cw_iobufs_release(got);
        size_t len = (size_t)head[0] << 24 | (size_t)head[1] << 16 | (size_t)head[2] << 8 | head[3];
        ck_assert_int_eq(cw_stream_recv(p->stream, len, &got), CW_OK);
        CWC_REQUIRE(cw_sink_send(p->sink, got) == CW_OK, "peer %p: round %u sent back", (void *)p,
                    r);
        cw_iobufs_release(got);
    }
    close_halves(p);
    free(p);
    return NULL;
}

typedef struct dialer {
    cw_addr where;
    unsigned id;
} dialer;

static void *echo_client(cw_ctx *ctx, void *arg)
{
    dialer *d = arg;
    struct half_pair p;
    ck_assert_int_eq(cw_dial(ctx, &d->where, &p.sink, &p.stream), CW_OK);
    uint8_t *buf = malloc(4 + MAX_MESSAGE);
    ck_assert_ptr_nonnull(buf);
    for (unsigned r = 0; r < ROUNDS; r++) {
        size_t len = message_len(d->id, r);
        buf[0] = (uint8_t)(len >> 24), buf[1] = (uint8_t)(len >> 16);
        buf[2] = (uint8_t)(len >> 8), buf[3] = (uint8_t)len;
        message_fill(buf + 4, len, d->id, r);
        CWC_REQUIRE(send_data(p.sink, buf, 4 + len) == CW_OK, "client %u: round %u sent", d->id, r);
        recv_data(p.stream, buf + 4, len);
    }
    free(buf);
    close_halves(&p);
    return NULL;
}

/* CONNS connections at once, each with its own task on either side. */
static void many_echoes(cw_ctx *ctx)
{
    cw_addr any = cw_addr_loopback4(0);
    cw_listener *l;
    dialer d[CONNS];
    cw_handle *h[2 * CONNS];
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    for (unsigned i = 0; i < CONNS; i++) {
        ck_assert_int_eq(cw_listener_local_addr(l, &d[i].where), CW_OK);
        d[i].id = i;
        h[i] = cw_spawn(cw_child(ctx, "client"), echo_client, &d[i]);
    }
    for (unsigned i = 0; i < CONNS; i++) {
        cw_conn c;
        ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
        struct half_pair *p = malloc(sizeof *p);
        ck_assert_ptr_nonnull(p);
        *p = (struct half_pair){c.sink, c.stream};
        /* Every other peer on a thread of its own, which ends with it:
         * what the kernel still receives for others must outlive it. */
        cw_ctx *child = cw_child(ctx, "peer");
        h[CONNS + i] = cw_spawn(i % 2 ? cw_dedicated(child) : child, echo_peer, p);
    }
    for (unsigned i = 0; i < 2 * CONNS; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    cw_listener_close(l);
}

/* A recv that lost a select poisons its stream [NET-010]; closing that
 * stream, which may still have been receiving, leaves its sink and the
 * peer's halves working. */
static void lost_recv_then_close(cw_ctx *ctx)
{
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_iobufs *got = NULL;
    cw_wait both[2] = {cw_wait_stream_recv(a.stream, 8, &got), cw_wait_sleep(ctx, 2 * CW_MSEC)};
    ck_assert_int_eq(cw_select(both, 2), 1);
    ck_assert_int_eq(cw_stream_recv(a.stream, 8, &got), CW_ERR_CLOSED);
    cw_stream_close(a.stream); /* nothing has come: it may still be receiving */
    a.stream = NULL;
    ck_assert_int_eq(send_text(b.sink, "too late"), CW_OK);
    ck_assert_int_eq(send_text(a.sink, "still here"), CW_OK);
    recv_text(b.stream, "still here");
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
}

/* More receivers than a backend may hand the kernel at once, each parked
 * on its own connection with one worker, then all served. */
static void *parked_recv(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    recv_text(arg, "wake");
    return NULL;
}

static void many_parked(cw_ctx *ctx)
{
    struct half_pair *a = calloc(PARKED, sizeof *a), *b = calloc(PARKED, sizeof *b);
    cw_handle **h = calloc(PARKED, sizeof *h);
    ck_assert(a && b && h);
    cw_listener *l = connect_halves(ctx, &a[0], &b[0]);
    for (unsigned i = 1; i < PARKED; i++)
        connect_through(ctx, l, &a[i], &b[i]);
    for (unsigned i = 0; i < PARKED; i++)
        h[i] = cw_spawn(cw_child(ctx, "parked"), parked_recv, b[i].stream);
    cw_sleep(ctx, CW_MSEC); /* they park, with one worker before any is served */
    for (unsigned i = 0; i < PARKED; i++)
        CWC_REQUIRE(send_text(a[i].sink, "wake") == CW_OK, "connection %u", i);
    for (unsigned i = 0; i < PARKED; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
        close_halves(&a[i]);
        close_halves(&b[i]);
    }
    cw_listener_close(l);
    free(a), free(b), free(h);
}

/* The peer's sink ends: its bytes first, then the end [NET-014]. */
static void end_after_bytes(cw_ctx *ctx)
{
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    ck_assert_int_eq(send_text(b.sink, "tail"), CW_OK);
    cw_sink_close(b.sink);
    b.sink = NULL;
    recv_text(a.stream, "tail");
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(a.stream, 1, &got), CW_ERR_RECV_FAILED);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
}

/* A plain peer resets the connection (SO_LINGER of zero, then close): a
 * recv, waiting or made after, fails and does not wait for bytes that
 * cannot come [NET-014]. */
static void reset_by_peer(cw_ctx *ctx)
{
    cw_listener *l;
    cw_conn c;
    int peer = plain_peer_accepted(ctx, &l, &c);
    cw_iobufs *got = NULL;
    cw_wait first = cw_wait_stream_recv(c.stream, 4, &got);
    ck_assert_int_eq(cw_poll(&first, 1), CW_ERR_WOULD_BLOCK); /* nothing yet */
    plain_peer_reset(peer);
    ck_assert_int_eq(cw_stream_recv(c.stream, 4, &got), CW_ERR_RECV_FAILED);
    ck_assert_ptr_null(got);
    /* The kernel has reported the reset: sends fail, the first as
     * SEND_FAILED (one may be taken before the failure is known) and the
     * rest on a poisoned half [NET-013]. */
    int rc = CW_OK;
    for (int i = 0; i < 4 && rc == CW_OK; i++)
        rc = send_text(c.sink, "after the reset");
    ck_assert_int_eq(rc, CW_ERR_SEND_FAILED);
    ck_assert_int_eq(send_text(c.sink, "again"), CW_ERR_CLOSED);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    cw_listener_close(l);
}

/* A send larger than the connection's buffers, to a plain peer that reads
 * nothing. */
enum { BIG_SEND = 32 * 1024 * 1024 };

struct big_send {
    cw_sink *sink;
    int rc;
};

static void *big_sender(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct big_send *bs = arg;
    uint8_t *bytes = calloc(1, BIG_SEND);
    ck_assert_ptr_nonnull(bytes);
    bs->rc = send_data(bs->sink, bytes, BIG_SEND);
    free(bytes);
    return NULL;
}

/* The peer resets the connection while a send waits for room: the send
 * cannot hand its bytes to the connection, so it completes with
 * CW_ERR_SEND_FAILED [NET-014] (a backend may be sending its rest through
 * the kernel meanwhile, as with CW_IO_URING, and must report that the
 * kernel failed it). The pause before the reset only lets the send get
 * under way; whenever the reset comes, the send fails. */
static void reset_during_send(cw_ctx *ctx)
{
    cw_listener *l;
    cw_conn c;
    int peer = plain_peer_accepted(ctx, &l, &c);
    struct big_send bs = {c.sink, CW_OK};
    cw_handle *h = cw_spawn(cw_child(ctx, "big_sender"), big_sender, &bs);
    ck_assert_ptr_nonnull(h);
    ck_assert_int_eq(cw_sleep(ctx, 20 * CW_MSEC), CW_OK);
    plain_peer_reset(peer);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    ck_assert_msg(bs.rc == CW_ERR_SEND_FAILED, "a send the peer reset gave %d (%s) [NET-014]",
                  bs.rc, cw_strerror(bs.rc));
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    cw_listener_close(l);
}

/* An accept that loses a select to a sleep, nothing having been dialed:
 * the backend may still be accepting for it. */
static void lose_accept(cw_ctx *ctx, cw_listener *l)
{
    cw_conn c;
    cw_wait race[2] = {cw_wait_accept(l, &c), cw_wait_sleep(ctx, 2 * CW_MSEC)};
    ck_assert_int_eq(cw_select(race, 2), 1);
}

/* Two dials after a lost accept: the accepts that follow hand out their
 * connections in the order dialed [NET-005]. A third after another, and
 * the listener closed: that connection, dialed and never accepted, is
 * closed [NET-026], and so the dialer's stream ends. */
static void lost_accepts(cw_ctx *ctx)
{
    static const char *const says[2] = {"first", "second"};
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    lose_accept(ctx, l);
    struct half_pair a[2], b[2];
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(cw_dial(ctx, &where, &a[i].sink, &a[i].stream), CW_OK);
        ck_assert_int_eq(send_text(a[i].sink, says[i]), CW_OK);
    }
    for (int i = 0; i < 2; i++) {
        accept_into(l, &b[i]);
        recv_text(b[i].stream, says[i]);
    }
    lose_accept(ctx, l);
    struct half_pair never;
    ck_assert_int_eq(cw_dial(ctx, &where, &never.sink, &never.stream), CW_OK);
    cw_sleep(ctx, 2 * CW_MSEC); /* the connection reaches the listener */
    cw_listener_close(l);
    cw_iobufs *got = NULL;
    cw_wait end[2] = {cw_wait_stream_recv(never.stream, 1, &got), cw_wait_sleep(ctx, 10 * CW_SEC)};
    ck_assert_msg(cw_select(end, 2) == 0, "a connection never accepted is still open");
    ck_assert_int_ne(end[0].result, CW_OK);
    for (int i = 0; i < 2; i++) {
        close_halves(&a[i]);
        close_halves(&b[i]);
    }
    close_halves(&never);
    /* Closed while it may still be accepting, nothing dialed: it stops
     * listening at once, so its address can be bound again [NET-026]. */
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    lose_accept(ctx, l);
    cw_listener_close(l);
    ck_assert_int_eq(cw_bind(ctx, &where, &l), CW_OK);
    cw_listener_close(l);
}

static void *tcp_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    many_echoes(ctx);
    lost_recv_then_close(ctx);
    many_parked(ctx);
    end_after_bytes(ctx);
    reset_by_peer(ctx);
    reset_during_send(ctx);
    lost_accepts(ctx);
    return NULL;
}

CWC_CASE(native_tcp_each_way, "native", "NAT-008 NET-005 NET-010 NET-014 NET-016 NET-026",
         CW_CAP_PARALLEL | CWC_NEEDS_NETWORK | CWC_OWN_IO)
{
    static const cw_io_backend ways[] = {CW_IO_URING, CW_IO_THREADS, CW_IO_AUTO};
    static const unsigned workers[] = {1, 0};
    cwc_fdset before;
    cwc_open_fds(&before);
    for (size_t i = 0; i < sizeof ways / sizeof ways[0]; i++) {
        for (size_t k = 0; k < 2; k++) {
            cw_config cfg = cwc_config();
            cfg.io_backend = ways[i];
            cfg.read_buffer_size = READ_BUFFER;
            if (workers[k])
                cfg.worker_threads = workers[k];
            cw_run_result res;
            int rc = cwc_run(&cfg, tcp_root, NULL, &res);
            if (ways[i] == CW_IO_URING && cwc_no_ring(rc))
                break; /* no ring here: native_io_backend_chosen_and_reported */
            ck_assert_msg(rc == CW_OK, "io_backend %d, %u workers: status %d (%s)", (int)ways[i],
                          workers[k], rc, res.message);
            cwc_no_new_fds(&before, "a run over TCP"); /* the run's rings and sockets too */
        }
    }
}
