/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_backends.c - what each kind of backend adds to the network
 * (spec/18-network.md): the deterministic network's ports and replay, and
 * real TCP with its timeouts, checked against a peer written without the
 * runtime. The TCP cases use 127.0.0.1 only.
 */
#include <arpa/inet.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cases/network_util.h"

#define DET CW_CAP_DETERMINISTIC
#define PAR CW_CAP_PARALLEL

/* ---- Deterministic: ports and replay ------------------------------------------------------------
 */

static void *ports_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr nothing = cw_addr_loopback4(1), where;
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &nothing, &sink, &stream), CW_ERR_CONNECTION_FAILED);
    cw_listener *l;
    cw_addr any = cw_addr_loopback4(0);
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    ck_assert_uint_eq(where.port, 1024);
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_OK);
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    /* The failed dial took 32768. */
    cw_addr expect = cw_addr_loopback4(CW_NET_EPHEMERAL_FIRST + 1);
    ck_assert(cw_addr_equal(&c.peer, &expect));
    ck_assert_int_eq(send_text(sink, "ping"), CW_OK);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(c.stream, 4, &got), CW_OK);
    ck_assert_int_eq(cw_sink_send(c.sink, got), CW_OK);
    cw_iobufs_release(got);
    ck_assert_int_eq(cw_stream_recv(stream, 4, &got), CW_OK);
    ck_assert(cw_iobufs_equal_bytes(got, "ping", 4));
    cw_iobufs_release(got);
    cw_sink_close(sink);
    cw_stream_close(stream);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_deterministic_ports_and_replay, "network", "NET-007 NET-017 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cw_run_result a, b;
    ck_assert_int_eq(cwc_run(&cfg, ports_root, NULL, &a), CW_OK);
    ck_assert_int_eq(cwc_run(&cfg, ports_root, NULL, &b), CW_OK);
    ck_assert_str_eq(a.digest, b.digest);
}

/* Port 0 takes the lowest free port from 1024 up, per address: a port
 * freed by a close is taken again, and another address starts over. */
static void *lowest_port_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_listener *l[4], *other, *again;
    cw_addr any = cw_addr_loopback4(0), where, elsewhere = cw_addr_ipv4(10, 0, 0, 9, 0);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(cw_bind(ctx, &any, &l[i]), CW_OK);
        ck_assert_int_eq(cw_listener_local_addr(l[i], &where), CW_OK);
        ck_assert_uint_eq(where.port, 1024 + i);
    }
    ck_assert_int_eq(cw_bind(ctx, &elsewhere, &other), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(other, &where), CW_OK);
    ck_assert_uint_eq(where.port, 1024);
    cw_listener_close(l[1]);
    ck_assert_int_eq(cw_bind(ctx, &any, &again), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(again, &where), CW_OK);
    ck_assert_uint_eq(where.port, 1025);
    cw_listener_close(l[0]);
    cw_listener_close(l[2]);
    cw_listener_close(l[3]);
    cw_listener_close(again);
    cw_listener_close(other);
    return NULL;
}

CWC_CASE(network_bind_zero_takes_the_lowest_port, "network", "NET-004 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, lowest_port_root, NULL);
}

static void *exhaust(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr nothing = cw_addr_loopback4(1);
    cw_sink *sink;
    cw_stream *stream;
    for (unsigned p = CW_NET_EPHEMERAL_FIRST; p < CW_NET_EPHEMERAL_END; p++) {
        int rc = cw_dial(ctx, &nothing, &sink, &stream);
        CWC_REQUIRE(rc == CW_ERR_CONNECTION_FAILED, "dial %u of the range: %d", p, rc);
    }
    cw_dial(ctx, &nothing, &sink, &stream); /* panics */
    return NULL;
}

static void *exhaust_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h = cw_spawn(cw_child(ctx, "dialer"), exhaust, NULL);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_EXITED);
    cw_handle_release(h);
    return NULL;
}

CWC_CASE(network_ephemeral_ports_exhausted, "network", "NET-007 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.catch_panics = true;
    cfg.audit = false;
    cwc_run_ok(&cfg, exhaust_root, NULL);
}

/* ---- Deterministic: latency and jitter -------------------------------------------------- */

#define LATENCY (50 * CW_MSEC)

static void *latency_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_time t0 = cw_current(ctx);
    ck_assert_int_eq(send_text(a.sink, "hello"), CW_OK); /* the send itself does not wait */
    ck_assert_uint_eq(cw_current(ctx), t0);
    expect_nothing_yet(b.stream, 5);
    cw_sleep_until(ctx, t0 + LATENCY - 1);
    expect_nothing_yet(b.stream, 5);
    /* The recv waits for the arrival, on the virtual clock. */
    recv_text(b.stream, "hello");
    ck_assert_uint_eq(cw_current(ctx), t0 + LATENCY);
    /* The other direction takes the latency too. */
    ck_assert_int_eq(send_text(b.sink, "back"), CW_OK);
    expect_nothing_yet(a.stream, 4);
    recv_text(a.stream, "back");
    ck_assert_uint_eq(cw_current(ctx), t0 + 2 * LATENCY);
    /* A sink closed while its one message is on the way: the message
     * arrives whole, and the end only after it [NET-014]. */
    ck_assert_int_eq(send_text(a.sink, "last"), CW_OK);
    cw_sink_close(a.sink);
    a.sink = NULL;
    recv_text(b.stream, "last");
    ck_assert_uint_eq(cw_current(ctx), t0 + 3 * LATENCY);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(b.stream, 1, &got), CW_ERR_RECV_FAILED);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_latency_fixed, "network", "NET-027 NET-017 NET-014 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.cycle = 1; /* the clock can be one nanosecond before the arrival */
    cfg.network_latency = LATENCY;
    cwc_run_ok(&cfg, latency_root, NULL);
}

/* Numbered messages, each carrying its number, the time it was sent and
 * bytes derived from the number, so that order, timing and content can all
 * be checked on arrival. */
#define JITTER_MESSAGES 300
#define JITTER_LATENCY (10 * CW_MSEC)
#define JITTER_SPREAD (20 * CW_MSEC)
#define MSG_LEN 32

struct jitter_run {
    cw_duration spread; /* the run's network_jitter */
    cw_time arrived[JITTER_MESSAGES];
    size_t late; /* arrivals later than their send plus the latency */
};

static void put_be64(uint8_t *p, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static uint64_t get_be64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return v;
}

static void *jitter_sender(cw_ctx *ctx, void *arg)
{
    cw_sink *sink = arg;
    for (uint64_t i = 0; i < JITTER_MESSAGES; i++) {
        uint8_t msg[MSG_LEN];
        put_be64(msg, i);
        put_be64(msg + 8, cw_current(ctx));
        for (size_t k = 16; k < MSG_LEN; k++)
            msg[k] = (uint8_t)(i * 7 + k);
        cw_iobufs *l = cw_iobufs_new(cwc_backend);
        cw_iobuf b;
        ck_assert_int_eq(cw_iobuf_copy(cwc_backend, msg, sizeof msg, &b), CW_OK);
        ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
        ck_assert_int_eq(cw_sink_send(sink, l), CW_OK);
        cw_iobufs_release(l);
        /* Bursts of five sent at one instant, then a pause: many messages
         * in flight at once, and sends whose draws would reorder them. */
        if (i % 5 == 4)
            cw_sleep(ctx, CW_MSEC + (i % 3) * 100 * CW_USEC);
    }
    return NULL;
}

static void check_message(const cw_iobufs *got, uint64_t i, cw_time now, struct jitter_run *r)
{
    uint8_t msg[MSG_LEN];
    size_t at = 0;
    const cw_iobuf *c;
    for (size_t k = 0; (c = cw_iobufs_chunk(got, k)); k++) {
        memcpy(msg + at, c->data, c->len);
        at += c->len;
    }
    CWC_REQUIRE(at == MSG_LEN, "message %" PRIu64 ": %zu bytes", i, at);
    CWC_REQUIRE(get_be64(msg) == i, "message %" PRIu64 " out of order", i);
    for (size_t k = 16; k < MSG_LEN; k++)
        CWC_REQUIRE(msg[k] == (uint8_t)(i * 7 + k), "message %" PRIu64 ": byte %zu", i, k);
    cw_time sent = get_be64(msg + 8);
    CWC_REQUIRE(now >= sent + JITTER_LATENCY, "message %" PRIu64 " came early", i);
    CWC_REQUIRE(now <= sent + JITTER_LATENCY + r->spread, "message %" PRIu64 " came late", i);
    CWC_REQUIRE(i == 0 || now >= r->arrived[i - 1], "message %" PRIu64 " before the last", i);
    r->arrived[i] = now;
    r->late += now > sent + JITTER_LATENCY;
}

static void *jitter_root(cw_ctx *ctx, void *arg)
{
    struct jitter_run *r = arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_handle *h = cw_spawn(cw_child(ctx, "sender"), jitter_sender, a.sink);
    /* This task waits whenever nothing is visible, and the clock moves one
     * nanosecond a step: each message is received at its arrival time. */
    for (uint64_t i = 0; i < JITTER_MESSAGES; i++) {
        cw_iobufs *got = NULL;
        ck_assert_int_eq(cw_stream_recv(b.stream, MSG_LEN, &got), CW_OK);
        check_message(got, i, cw_current(ctx), r);
        cw_iobufs_release(got);
    }
    ck_assert_uint_gt(r->late, 0);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

static cw_config jitter_config(uint64_t seed, struct jitter_run *r, cw_duration spread)
{
    cw_config cfg = cwc_config();
    cfg.seed = seed;
    cfg.cycle = 1; /* one nanosecond: an arrival is seen at its exact time */
    cfg.network_latency = JITTER_LATENCY;
    cfg.network_jitter = spread;
    memset(r, 0, sizeof *r);
    r->spread = spread;
    return cfg;
}

CWC_CASE(network_latency_jitter_in_order, "network", "NET-027 NET-008 NET-009 RUN-008",
         DET | CWC_REPEATED)
{
    struct jitter_run r;
    cw_config cfg = jitter_config(cwc_seed, &r, JITTER_SPREAD);
    cwc_run_ok(&cfg, jitter_root, &r);
}

/* The draw is in [0, network_jitter], both ends included: with a jitter of
 * one nanosecond some messages come that nanosecond late (NET-027). */
CWC_CASE(network_jitter_of_one_nanosecond, "network", "NET-027 RUN-008", DET | CWC_REPEATED)
{
    struct jitter_run r;
    cw_config cfg = jitter_config(cwc_seed, &r, 1);
    cwc_run_ok(&cfg, jitter_root, &r);
}

CWC_CASE(network_latency_replay, "network", "NET-027 NET-017 RUN-008", DET | CWC_REPEATED)
{
    static struct jitter_run one, again, other;
    cw_run_result a, b, c;
    cw_config cfg = jitter_config(7, &one, JITTER_SPREAD);
    again.spread = other.spread = JITTER_SPREAD;
    ck_assert_int_eq(cwc_run(&cfg, jitter_root, &one, &a), CW_OK);
    ck_assert_int_eq(cwc_run(&cfg, jitter_root, &again, &b), CW_OK);
    ck_assert_str_eq(a.digest, b.digest);
    ck_assert(memcmp(one.arrived, again.arrived, sizeof one.arrived) == 0);
    cfg.seed = 8;
    ck_assert_int_eq(cwc_run(&cfg, jitter_root, &other, &c), CW_OK);
    ck_assert(memcmp(one.arrived, other.arrived, sizeof one.arrived) != 0);
    ck_assert_str_ne(a.digest, c.digest);
}

/* A few sends over a connection, then the run's next random value. */
static void *draw_after_sends_root(cw_ctx *ctx, void *arg)
{
    uint64_t *next = arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(send_text(a.sink, "tick"), CW_OK);
        recv_text(b.stream, "tick");
    }
    *next = cw_random_u64(ctx);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

/* Only jitter draws from the run's PRNG: with none, the random stream is
 * the one a run without latency has. */
CWC_CASE(network_latency_draws_only_with_jitter, "network", "NET-027 RUN-008", DET | CWC_REPEATED)
{
    uint64_t plain, late, jittered;
    cw_config cfg = cwc_config();
    cfg.audit = false;
    cwc_run_ok(&cfg, draw_after_sends_root, &plain);
    cfg.network_latency = LATENCY;
    cwc_run_ok(&cfg, draw_after_sends_root, &late);
    ck_assert_uint_eq(late, plain);
    cfg.network_jitter = LATENCY;
    cwc_run_ok(&cfg, draw_after_sends_root, &jittered);
    ck_assert_uint_ne(jittered, plain);
}

static void *close_in_flight_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_time t0 = cw_current(ctx);
    ck_assert_int_eq(send_text(a.sink, "abc"), CW_OK);
    ck_assert_int_eq(send_text(a.sink, "defg"), CW_OK);
    cw_sink_close(a.sink);
    a.sink = NULL;
    /* The end has not arrived either: a recv of one byte still waits. */
    expect_nothing_yet(b.stream, 1);
    recv_text(b.stream, "abcdefg");
    ck_assert_uint_eq(cw_current(ctx), t0 + LATENCY);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(b.stream, 1, &got), CW_ERR_RECV_FAILED);
    ck_assert_ptr_null(got);

    /* A stream closed with bytes in flight to it drops them; sends to it
     * then fail at once. */
    ck_assert_int_eq(send_text(b.sink, "lost"), CW_OK);
    cw_stream_close(a.stream);
    a.stream = NULL;
    ck_assert_int_eq(send_text(b.sink, "more"), CW_ERR_SEND_FAILED);
    ck_assert_int_eq(send_text(b.sink, "more"), CW_ERR_CLOSED);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_latency_close_in_flight, "network", "NET-027 NET-014 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.network_latency = LATENCY;
    cwc_run_ok(&cfg, close_in_flight_root, NULL);
}

/* Bytes in flight keep a waiting run going until they arrived; a recv that
 * needs more than ever comes then stalls the run. */
static void *stall_after_arrival_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    connect_halves(ctx, &a, &b);
    ck_assert_int_eq(send_text(a.sink, "four"), CW_OK);
    cw_iobufs *got = NULL;
    cw_stream_recv(b.stream, 8, &got);
    return NULL;
}

/* The root ends with bytes still in flight: the run ends with it. */
static void *end_in_flight_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    connect_halves(ctx, &a, &b);
    ck_assert_int_eq(send_text(a.sink, "never seen"), CW_OK);
    return NULL;
}

/* Bytes dropped by closing their stream hold nothing, nor does the end of
 * their sink when it was closed behind them (`arg` not NULL): the recv
 * that never completes stalls the run at once, the clock nowhere near
 * their arrival. */
static void *stall_after_drop_root(cw_ctx *ctx, void *arg)
{
    struct half_pair a, b;
    connect_halves(ctx, &a, &b);
    ck_assert_int_eq(send_text(a.sink, "dropped"), CW_OK);
    if (arg)
        cw_sink_close(a.sink);
    cw_stream_close(b.stream);
    cw_iobufs *got = NULL;
    cw_stream_recv(a.stream, 1, &got); /* nothing is ever sent this way */
    return NULL;
}

CWC_CASE(network_latency_stall_and_end, "network", "NET-027 DET-006 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.network_latency = LATENCY;
    cw_run_result res;
    cw_time start = cfg.start_time;
    ck_assert_int_eq(cwc_run(&cfg, stall_after_arrival_root, NULL, &res), CW_ERR_STALLED);
    ck_assert_uint_ge(res.end_time, start + LATENCY);
    cfg.network_latency = 3600 * CW_SEC;
    ck_assert_int_eq(cwc_run(&cfg, end_in_flight_root, NULL, &res), CW_OK);
    ck_assert_uint_lt(res.end_time, start + CW_SEC);
    for (int sink_closed = 0; sink_closed < 2; sink_closed++) {
        ck_assert_int_eq(cwc_run(&cfg, stall_after_drop_root, sink_closed ? &cfg : NULL, &res),
                         CW_ERR_STALLED);
        ck_assert_uint_lt(res.end_time, start + CW_SEC);
    }
}

static void *mock_instant_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    cw_time t0 = cw_current(ctx);
    ck_assert_int_eq(send_text(sink, "now"), CW_OK);
    uint8_t seen[4];
    ck_assert_uint_eq(cw_stream_peek(stream, sizeof seen, seen), 3);
    ck_assert(memcmp(seen, "now", 3) == 0);
    recv_text(stream, "now");
    ck_assert_uint_eq(cw_current(ctx), t0);
    cw_sink_close(sink);
    cw_stream_close(stream);
    return NULL;
}

CWC_CASE(network_latency_mock_channel_instant, "network", "NET-027 NET-024 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.network_latency = LATENCY;
    cfg.network_jitter = LATENCY;
    cwc_run_ok(&cfg, mock_instant_root, NULL);
}

/* ---- TCP: a plain socket client ----------------------------------------------------------------
 */

struct plain {
    uint16_t port;
    char reply[8];
    atomic_int done; /* 1: ok, -1: failed */
};

/* A blocking client on its own thread, written without the runtime. */
static void *plain_client(void *arg)
{
    struct plain *p = arg;
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in to;
    memset(&to, 0, sizeof to);
    to.sin_family = AF_INET;
    to.sin_port = htons(p->port);
    to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int ok = fd >= 0 && connect(fd, (struct sockaddr *)&to, sizeof to) == 0 &&
             write(fd, "ping!", 5) == 5;
    size_t got = 0;
    while (ok && got < 5) {
        ssize_t r = read(fd, p->reply + got, 5 - got);
        ok = r > 0;
        got += ok ? (size_t)r : 0;
    }
    if (fd >= 0)
        close(fd);
    atomic_store(&p->done, ok ? 1 : -1);
    return NULL;
}

static void *plain_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    struct plain p = {.port = where.port};
    atomic_init(&p.done, 0);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, plain_client, &p), 0);
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    cw_addr lo = cw_addr_loopback4(c.peer.port);
    ck_assert(cw_addr_equal(&c.peer, &lo));
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(c.stream, 5, &got), CW_OK);
    ck_assert(cw_iobufs_equal_bytes(got, "ping!", 5));
    ck_assert_int_eq(cw_sink_send(c.sink, got), CW_OK);
    cw_iobufs_release(got);
    for (int i = 0; i < 10000 && atomic_load(&p.done) == 0; i++)
        cw_sleep(ctx, CW_MSEC);
    pthread_join(t, NULL);
    ck_assert_int_eq(atomic_load(&p.done), 1);
    ck_assert(memcmp(p.reply, "ping!", 5) == 0);
    /* The client closed: a recv needing more fails. */
    ck_assert_int_eq(cw_stream_recv(c.stream, 1, &got), CW_ERR_RECV_FAILED);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_tcp_plain_socket_client, "network", "NET-018 NET-014 RUN-008", PAR | CWC_REPEATED)
{
    cwc_run_ok(NULL, plain_root, NULL);
}

/* ---- TCP: timeouts ------------------------------------------------------------------------------
 */

static void *timeout_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(b.stream, 4, &got), CW_ERR_TIMEOUT);
    ck_assert_int_eq(send_text(a.sink, "late"), CW_OK);
    ck_assert_int_eq(cw_stream_recv(b.stream, 4, &got), CW_ERR_CLOSED);
    /* The other direction is untouched. */
    ck_assert_int_eq(send_text(b.sink, "back"), CW_OK);
    ck_assert_int_eq(cw_stream_recv(a.stream, 4, &got), CW_OK);
    ck_assert(cw_iobufs_equal_bytes(got, "back", 4));
    cw_iobufs_release(got);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_tcp_read_timeout, "network", "NET-019 NET-010 RUN-008", PAR | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.read_timeout = 20 * CW_MSEC;
    cwc_run_ok(&cfg, timeout_root, NULL);
}

/* A peer that accepts and never reads: the kernel's buffers fill, and a
 * send then waits for room until the run's write timeout. */
#define WRITE_CHUNK (1024 * 1024)
#define WRITE_TRIES 128

static void *write_timeout_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    uint8_t *bytes = calloc(1, WRITE_CHUNK);
    cw_iobufs *list = cw_iobufs_new(cwc_backend);
    cw_iobuf chunk;
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, bytes, WRITE_CHUNK, &chunk), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(list, &chunk), CW_OK);
    free(bytes);
    int rc = CW_OK;
    for (int i = 0; i < WRITE_TRIES && rc == CW_OK; i++)
        rc = cw_sink_send(a.sink, list);
    ck_assert_int_eq(rc, CW_ERR_TIMEOUT);
    ck_assert_int_eq(cw_sink_send(a.sink, list), CW_ERR_CLOSED); /* poisoned */
    cw_iobufs_release(list);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_tcp_write_timeout, "network", "NET-019 NET-010", PAR)
{
    cw_config cfg = cwc_config();
    cfg.write_timeout = 200 * CW_MSEC;
    cwc_run_ok(&cfg, write_timeout_root, NULL);
}

/* A send far larger than the kernel's buffers, to a peer that reads
 * nothing and then closes its connection: the send has bytes left that
 * can never go, and the kernel says so (a reset), so it MUST fail with
 * CW_ERR_SEND_FAILED (NET-014), whenever the close came. */
struct doomed_send {
    cw_sink *sink;
    cw_iobufs *list;
};

static void *send_all(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct doomed_send *d = arg;
    return (void *)(intptr_t)cw_sink_send(d->sink, d->list);
}

static void *closed_mid_send_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    uint8_t *bytes = calloc(1, 64 * WRITE_CHUNK);
    ck_assert_ptr_nonnull(bytes);
    struct doomed_send d = {a.sink, cw_iobufs_new(cwc_backend)};
    cw_iobuf chunk;
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, bytes, 64 * WRITE_CHUNK, &chunk), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(d.list, &chunk), CW_OK);
    free(bytes);
    cw_handle *h = cw_spawn(cw_child(ctx, "sender"), send_all, &d);
    ck_assert_int_eq(cw_sleep(ctx, 20 * CW_MSEC), CW_OK); /* most often, it waits for room */
    close_halves(&b);
    void *rc = NULL;
    ck_assert_int_eq(cw_join(h, &rc), CW_OK);
    ck_assert_msg((intptr_t)rc == CW_ERR_SEND_FAILED,
                  "a send to a connection its peer closed unread ended with %s [NET-014]",
                  cw_strerror((int)(intptr_t)rc));
    cw_handle_release(h);
    cw_iobufs_release(d.list);
    close_halves(&a);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_tcp_send_to_a_peer_closed_unread, "network", "NET-014 NET-013", PAR)
{
    cwc_run_ok(NULL, closed_mid_send_root, NULL);
}

/* ---- TCP: connect timeout -----------------------------------------------------------------------
 */

/* A listener that never accepts, its queue filled by plain connects: the
 * kernel drops further SYNs, so a dial can only time out. */
static void *connect_timeout_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a;
    memset(&a, 0, sizeof a);
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof a;
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)&a, sizeof a), 0);
    ck_assert_int_eq(listen(lfd, 0), 0);
    ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)&a, &len), 0);
    int fill[4];
    for (int i = 0; i < 4; i++) {
        fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
        (void)connect(fill[i], (struct sockaddr *)&a, sizeof a);
    }
    cw_sleep(ctx, 20 * CW_MSEC);
    cw_addr where = cw_addr_loopback4(ntohs(a.sin_port));
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_ERR_TIMEOUT);
    ck_assert_ptr_null(sink);
    for (int i = 0; i < 4; i++)
        close(fill[i]);
    close(lfd);
    return NULL;
}

CWC_CASE(network_tcp_connect_timeout, "network", "NET-006 RUN-008", PAR | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.connect_timeout = 100 * CW_MSEC;
    cwc_run_ok(&cfg, connect_timeout_root, NULL);
}

/* ---- TCP: a dial given up while its connect is pending ------------------------------------
 */

/* A loopback listener that never accepts, its queue filled by plain
 * connects, so the kernel drops a dial's SYN and retransmits it later. */
static int full_listener(struct sockaddr_in *a, int fill[4])
{
    int lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(lfd, 0);
    memset(a, 0, sizeof *a);
    a->sin_family = AF_INET;
    a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof *a;
    ck_assert_int_eq(bind(lfd, (struct sockaddr *)a, sizeof *a), 0);
    ck_assert_int_eq(listen(lfd, 0), 0);
    ck_assert_int_eq(getsockname(lfd, (struct sockaddr *)a, &len), 0);
    for (int i = 0; i < 4; i++) {
        fill[i] = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        ck_assert_int_ge(fill[i], 0);
        (void)connect(fill[i], (struct sockaddr *)a, sizeof *a); /* in progress, or queued */
    }
    return lfd;
}

static void *timed_out_dial(cw_ctx *ctx, void *arg)
{
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, arg, &sink, &stream), CW_ERR_TIMEOUT);
    ck_assert_ptr_null(sink);
    ck_assert_ptr_null(stream);
    return NULL;
}

/* A task that writes over a deep stretch of its stack: a later task may
 * be given the stack of one that ended, so this is what is left where a
 * dial's state was. */
static void *scribbler(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    volatile unsigned char deep[16 * 1024];
    memset((void *)deep, 0xEE, sizeof deep);
    return (void *)(uintptr_t)deep[(uintptr_t)arg % sizeof deep];
}

static void spawn_and_join(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    cw_handle *h = cw_spawn(cw_child(ctx, "turn"), fn, arg);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
}

/* A dial that timed out has given up its connect (NET-006): when the
 * kernel later learns the connect's end (the listener closed, so the
 * retransmitted SYN is refused), nothing of the dial is left to hear of
 * it, though the dialing task ended and other tasks ran on its stack. The
 * run goes on, connects anew and ends as any other. */
static void *given_up_dial_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct sockaddr_in a;
    int fill[4];
    int lfd = full_listener(&a, fill);
    cw_addr where = cw_addr_loopback4(ntohs(a.sin_port));
    spawn_and_join(ctx, timed_out_dial, &where);
    for (int i = 0; i < 8; i++)
        spawn_and_join(ctx, scribbler, NULL);
    ck_assert_int_eq(close(lfd), 0);
    for (int i = 0; i < 4; i++)
        ck_assert_int_eq(close(fill[i]), 0);
    /* Past the kernel's first retransmission of the SYN (1 s). */
    ck_assert_int_eq(cw_sleep(ctx, 1500 * CW_MSEC), CW_OK);
    for (int i = 0; i < 8; i++)
        spawn_and_join(ctx, scribbler, NULL);
    struct half_pair x, y;
    cw_listener *l = connect_halves(ctx, &x, &y);
    ck_assert_int_eq(send_text(x.sink, "after"), CW_OK);
    recv_text(y.stream, "after");
    close_halves(&x);
    close_halves(&y);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_tcp_given_up_dial_is_settled, "network", "NET-006 NAT-008",
         PAR | CWC_NEEDS_NETWORK)
{
    cw_config cfg = cwc_config();
    cfg.connect_timeout = 100 * CW_MSEC;
    cwc_run_ok(&cfg, given_up_dial_root, NULL);
}
