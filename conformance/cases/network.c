/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network.c - listeners, connections, the resolver and the mock channel
 * (spec/18-network.md), on every backend: in memory on a deterministic
 * one, over loopback TCP on the others. Addresses are loopback only.
 */
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "cases/network_util.h"
#include "cases/util.h"

#define DET CW_CAP_DETERMINISTIC

static bool is_det(void)
{
    return (cwc_backend->capabilities & CW_CAP_DETERMINISTIC) != 0;
}

static bool is_loopback(const cw_addr *a)
{
    cw_addr six = cw_addr_loopback6(a->port);
    return (a->family == CW_ADDR_IPV4 && a->ip[0] == 127) || cw_addr_equal(a, &six);
}

/* A list holding bytes[0 .. len) in chunks of at most `chunk` bytes. */
static cw_iobufs *bufs_of(const void *bytes, size_t len, size_t chunk)
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    ck_assert_ptr_nonnull(l);
    for (size_t at = 0; at < len; at += chunk) {
        size_t n = len - at < chunk ? len - at : chunk;
        cw_iobuf b;
        ck_assert_int_eq(cw_iobuf_copy(cwc_backend, (const uint8_t *)bytes + at, n, &b), CW_OK);
        ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
    }
    return l;
}

static int send_bytes(cw_sink *s, const void *bytes, size_t len)
{
    cw_iobufs *l = bufs_of(bytes, len, len ? len : 1);
    int rc = cw_sink_send(s, l);
    cw_iobufs_release(l);
    return rc;
}

/* Receive exactly len bytes and require them to equal `want`. */
static void recv_expect(cw_stream *s, const void *want, size_t len)
{
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(s, len, &got), CW_OK);
    ck_assert_ptr_nonnull(got);
    ck_assert(cw_iobufs_equal_bytes(got, want, len));
    cw_iobufs_release(got);
}

static void conn_close(cw_sink *sink, cw_stream *stream)
{
    cw_sink_close(sink);
    cw_stream_close(stream);
}

/* A listener on loopback of `family`, port chosen by the backend. */
static cw_listener *listen_loopback(cw_ctx *ctx, int family, cw_addr *where)
{
    cw_addr any = family == CW_ADDR_IPV6 ? cw_addr_loopback6(0) : cw_addr_loopback4(0);
    cw_listener *l = NULL;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, where), CW_OK);
    ck_assert_int_eq(where->family, family);
    ck_assert_msg(is_loopback(where), "a loopback bind listens on another address");
    ck_assert_uint_ne(where->port, 0);
    return l;
}

/* ---- Echo ------------------------------------------------------------------------------ */

/* Serve one connection: echo messages of `size` bytes until the peer closes. */
static void *echo_conn(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_conn *c = arg;
    size_t size = 5;
    cw_iobufs *msg = NULL;
    while (cw_stream_recv(c->stream, size, &msg) == CW_OK) {
        ck_assert_int_eq(cw_sink_send(c->sink, msg), CW_OK);
        cw_iobufs_release(msg);
    }
    ck_assert_ptr_null(msg);
    conn_close(c->sink, c->stream);
    free(c);
    return NULL;
}

struct server {
    cw_listener *l;
    int conns; /* how many to accept */
};

static void *echo_server(cw_ctx *ctx, void *arg)
{
    struct server *sv = arg;
    cw_handle **h = calloc((size_t)sv->conns, sizeof *h);
    for (int i = 0; i < sv->conns; i++) {
        cw_conn *c = malloc(sizeof *c);
        ck_assert_int_eq(cw_listener_accept(sv->l, c), CW_OK);
        ck_assert(is_loopback(&c->peer));
        h[i] = cw_spawn(cw_child(ctx, "conn"), echo_conn, c);
    }
    for (int i = 0; i < sv->conns; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    free(h);
    return NULL;
}

static void echo_family(cw_ctx *ctx, int family)
{
    cw_addr where;
    struct server sv = {listen_loopback(ctx, family, &where), 1};
    cw_handle *h = cw_spawn(cw_child(ctx, "server"), echo_server, &sv);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_OK);
    ck_assert_ptr_eq(cw__backend_of(sink), cwc_backend);
    ck_assert_ptr_eq(cw__backend_of(stream), cwc_backend);
    ck_assert_int_eq(send_bytes(sink, "hello", 5), CW_OK);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(stream, 5, &got), CW_OK);
    ck_assert(cw_iobufs_equal_bytes(got, "hello", 5));
    /* The runtime allocates received bytes from its network pool. */
    ck_assert(cw_iobuf_is_pooled(cw_iobufs_chunk(got, 0)));
    cw_iobufs_release(got);
    conn_close(sink, stream);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cw_listener_close(sv.l);
}

static void *echo_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    echo_family(ctx, CW_ADDR_IPV4);
    echo_family(ctx, CW_ADDR_IPV6);
    return NULL;
}

CWC_CASE(network_echo_round_trip, "network",
         "NET-001 NET-004 NET-005 NET-008 NET-011 NET-015 NET-018 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, echo_root, NULL);
    if (!is_det()) {
        cw_config cfg = cwc_config();
        cfg.worker_threads = 1; /* a waiting task never holds the only worker */
        cwc_run_ok(&cfg, echo_root, NULL);
    }
}

/* ---- Many connections ---------------------------------------------------------------------- */

struct client {
    cw_addr where;
    int id;
};

static void *echo_client(cw_ctx *ctx, void *arg)
{
    struct client *c = arg;
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &c->where, &sink, &stream), CW_OK);
    for (int round = 0; round < 3; round++) {
        char msg[16];
        snprintf(msg, sizeof msg, "%02d:%02d", c->id % 100, round);
        ck_assert_int_eq(send_bytes(sink, msg, 5), CW_OK);
        recv_expect(stream, msg, 5);
    }
    conn_close(sink, stream);
    return NULL;
}

#define CLIENTS 64

static void *many_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr where;
    struct server sv = {listen_loopback(ctx, CW_ADDR_IPV4, &where), CLIENTS};
    cw_handle *server = cw_spawn(cw_child(ctx, "server"), echo_server, &sv);
    struct client c[CLIENTS];
    cw_handle *h[CLIENTS];
    for (int i = 0; i < CLIENTS; i++) {
        c[i] = (struct client){where, i};
        h[i] = cw_spawn(cw_child(ctx, "client"), echo_client, &c[i]);
    }
    for (int i = 0; i < CLIENTS; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    ck_assert_int_eq(cw_join(server, NULL), CW_OK);
    cw_handle_release(server);
    cw_listener_close(sv.l);
    return NULL;
}

CWC_CASE(network_many_connections, "network", "NET-016 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, many_root, NULL);
}

/* ---- Large messages ---------------------------------------------------------------------------
 */

#define LARGE (1024 * 1024 + 17)

struct pair {
    cw_sink *sink;
    cw_stream *stream;
};

/* A connected pair through a listener: a's sink reaches b's stream and back. */
static void connect_pair(cw_ctx *ctx, struct pair *a, struct pair *b, cw_listener **l)
{
    cw_addr where;
    *l = listen_loopback(ctx, CW_ADDR_IPV4, &where);
    ck_assert_int_eq(cw_dial(ctx, &where, &a->sink, &a->stream), CW_OK);
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(*l, &c), CW_OK);
    b->sink = c.sink;
    b->stream = c.stream;
}

/* Both ends of a connect_pair and its listener. */
static void close_pair(struct pair *a, struct pair *b, cw_listener *l)
{
    conn_close(a->sink, a->stream);
    conn_close(b->sink, b->stream);
    cw_listener_close(l);
}

static uint8_t pattern(size_t i)
{
    return (uint8_t)(i * 31 + i / 251);
}

static void *large_sender(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_sink *s = arg;
    uint8_t *bytes = malloc(LARGE);
    for (size_t i = 0; i < LARGE; i++)
        bytes[i] = pattern(i);
    /* The same bytes twice: once in 1,000-byte chunks, once in one chunk. */
    cw_iobufs *many = bufs_of(bytes, LARGE, 1000);
    ck_assert_uint_gt(cw_iobufs_chunk_count(many), 1000);
    ck_assert_int_eq(cw_sink_send(s, many), CW_OK);
    cw_iobufs_release(many);
    ck_assert_int_eq(send_bytes(s, bytes, LARGE), CW_OK);
    free(bytes);
    return NULL;
}

static void check_pattern(const cw_iobufs *got, size_t from)
{
    const cw_iobuf *c;
    size_t at = from, wrong = 0;
    for (size_t i = 0; (c = cw_iobufs_chunk(got, i)); i++)
        for (size_t j = 0; j < c->len; j++, at++)
            wrong += c->data[j] != pattern(at);
    ck_assert_uint_eq(wrong, 0);
}

static void *large_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    cw_handle *h = cw_spawn(cw_child(ctx, "sender"), large_sender, a.sink);
    /* The first copy in one recv, the second in uneven pieces. */
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(b.stream, LARGE, &got), CW_OK);
    ck_assert_uint_eq(cw_iobufs_len(got), LARGE);
    check_pattern(got, 0);
    cw_iobufs_release(got);
    size_t pieces[] = {1, 4095, 70001, 500000, LARGE - 1 - 4095 - 70001 - 500000};
    size_t at = 0;
    for (size_t i = 0; i < sizeof pieces / sizeof pieces[0]; i++) {
        ck_assert_int_eq(cw_stream_recv(b.stream, pieces[i], &got), CW_OK);
        ck_assert_uint_eq(cw_iobufs_len(got), pieces[i]);
        check_pattern(got, at);
        at += pieces[i];
        cw_iobufs_release(got);
    }
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    close_pair(&a, &b, l);
    return NULL;
}

CWC_CASE(network_large_messages, "network", "NET-008 NET-009", 0)
{
    cwc_run_ok(NULL, large_root, NULL);
}

/* ---- Exactly len, across partial deliveries
 * ------------------------------------------------------ */

static void *trickle(cw_ctx *ctx, void *arg)
{
    cw_sink *s = arg;
    for (int i = 0; i < 10; i++) {
        char byte = (char)('a' + i);
        ck_assert_int_eq(send_bytes(s, &byte, 1), CW_OK);
        cw_sleep(ctx, CW_MSEC);
    }
    return NULL;
}

static void *exact_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(b.stream, 0, &got), CW_OK);
    ck_assert_uint_eq(cw_iobufs_len(got), 0);
    cw_iobufs_release(got);
    cw_handle *h = cw_spawn(cw_child(ctx, "trickle"), trickle, a.sink);
    recv_expect(b.stream, "abcdefghij", 10);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    close_pair(&a, &b, l);
    return NULL;
}

CWC_CASE(network_recv_exact_len, "network", "NET-011 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, exact_root, NULL);
}

/* ---- Closing under a waiting task --------------------------------------------------------- */

static void *recv_waiter(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_iobufs *got = NULL;
    int rc = cw_stream_recv(arg, 4, &got);
    ck_assert_ptr_null(got);
    return (void *)(intptr_t)rc;
}

static void *accept_waiter(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_conn c;
    memset(&c, 0xA5, sizeof c);
    int rc = cw_listener_accept(arg, &c);
    if (rc != CW_OK) /* a failed accept hands out no halves [NET-005] */
        ck_assert(c.sink == NULL && c.stream == NULL);
    return (void *)(intptr_t)rc;
}

/* Sends until a send fails: over TCP to a peer that never reads, it ends
 * up waiting for room. */
static void *send_waiter(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    size_t len = 1 << 20;
    uint8_t *bytes = calloc(1, len);
    cw_iobufs *l = bufs_of(bytes, len, len);
    free(bytes);
    int rc;
    while ((rc = cw_sink_send(arg, l)) == CW_OK) {
    }
    cw_iobufs_release(l);
    return (void *)(intptr_t)rc;
}

static void expect_result(cw_handle *h, int want)
{
    void *v = NULL;
    ck_assert_int_eq(cw_join(h, &v), CW_OK);
    ck_assert_int_eq((int)(intptr_t)v, want);
    cw_handle_release(h);
}

/* Tasks wait on a stream, a listener and (over TCP) a sink; each is closed
 * under them. One worker makes "they wait" certain when the root runs:
 * a task runs until it suspends, and the root's sleep ends after them. */
static void *close_under_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b, c, d;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    cw_handle *recv = cw_spawn(cw_child(ctx, "recv"), recv_waiter, b.stream);
    cw_handle *send = NULL;
    if (!is_det()) {
        cw_conn cc;
        cw_addr where;
        ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
        ck_assert_int_eq(cw_dial(ctx, &where, &c.sink, &c.stream), CW_OK);
        ck_assert_int_eq(cw_listener_accept(l, &cc), CW_OK);
        d.sink = cc.sink;
        d.stream = cc.stream;
        send = cw_spawn(cw_child(ctx, "send"), send_waiter, c.sink);
    }
    cw_handle *accept = cw_spawn(cw_child(ctx, "accept"), accept_waiter, l);
    cw_sleep(ctx, 20 * CW_MSEC);
    cw_stream_close(b.stream);
    cw_listener_close(l);
    expect_result(recv, CW_ERR_CLOSED);
    expect_result(accept, CW_ERR_CLOSED);
    if (send) {
        cw_sink_close(c.sink);
        expect_result(send, CW_ERR_CLOSED);
        cw_stream_close(c.stream);
        conn_close(d.sink, d.stream);
    }
    /* Bytes sent to the closed stream: refused (NET-014), or taken and
     * dropped over TCP, where the socket stays open for the sink. Either
     * way the sink is unaffected. */
    int late = send_bytes(a.sink, "late", 4);
    ck_assert_msg(late == CW_OK || late == CW_ERR_SEND_FAILED, "a send to a closed stream gave %s",
                  cw_strerror(late));
    cw_sleep(ctx, 5 * CW_MSEC);
    /* The other half of the connection is still there. */
    ck_assert_int_eq(send_bytes(b.sink, "ok", 2), CW_OK);
    recv_expect(a.stream, "ok", 2);
    cw_sink_close(b.sink);
    conn_close(a.sink, a.stream);
    return NULL;
}

CWC_CASE(network_close_under_a_waiting_task, "network", "NET-001 NET-005 RUN-008", CWC_REPEATED)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.worker_threads = 1;
    cwc_run_ok(&cfg, close_under_root, NULL);
}

/* ---- One port on both loopbacks [NET-003, NET-004] ---------------------------------------- */

/* A listener on [::1]:P holds that address only: 127.0.0.1:P is another
 * address and binds too. (Over TCP another process may hold 127.0.0.1:P;
 * a few fresh ports make that a non-issue.) */
static void *both_loopbacks_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    int rc = CW_ERR_BIND_FAILED;
    for (int attempt = 0; attempt < 8 && rc != CW_OK; attempt++) {
        cw_addr six;
        cw_listener *l6 = listen_loopback(ctx, CW_ADDR_IPV6, &six);
        cw_addr four = cw_addr_loopback4(six.port);
        cw_listener *l4 = NULL;
        rc = cw_bind(ctx, &four, &l4);
        if (rc == CW_OK)
            cw_listener_close(l4);
        cw_listener_close(l6);
    }
    ck_assert_int_eq(rc, CW_OK);
    return NULL;
}

CWC_CASE(network_one_port_on_both_loopbacks, "network", "NET-003 NET-004 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, both_loopbacks_root, NULL);
}

/* ---- An address of no family [NET-039] ----------------------------------------------- */

/* The address of a live listener, but for its family: neither bound nor
 * dialed; the listener still takes the next good dial and its bytes. */
static void *no_family_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr where;
    cw_listener *l = listen_loopback(ctx, CW_ADDR_IPV4, &where);
    cw_addr bad = where;
    for (uint8_t family = 0; family < 12; family += 11) { /* none, and one unknown */
        bad.family = family;
        cw_listener *other = NULL;
        ck_assert_int_eq(cw_bind(ctx, &bad, &other), CW_ERR_INVALID);
        cw_sink *sink = NULL;
        cw_stream *stream = NULL;
        ck_assert_int_eq(cw_dial(ctx, &bad, &sink, &stream), CW_ERR_INVALID);
    }
    struct half_pair a, b;
    connect_through(ctx, l, &a, &b);
    ck_assert_int_eq(send_text(a.sink, "!"), CW_OK);
    recv_text(b.stream, "!");
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_address_of_no_family, "network", "NET-039 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, no_family_root, NULL);
}

/* ---- A dial leaves no cleanup handler behind [PAN-004, NET-006] ------------------------- */

struct dialer {
    cw_addr where;
    cw_sink *sink;
    cw_stream *stream;
    cw_oneshot *dialed;
    int handler_runs;
};

static void count_run(void *arg)
{
    ((struct dialer *)arg)->handler_runs++;
}

/* Dials, registers one handler of its own, then waits to be aborted. */
static void *dial_then_wait(cw_ctx *ctx, void *arg)
{
    struct dialer *d = arg;
    ck_assert_int_eq(cw_dial(ctx, &d->where, &d->sink, &d->stream), CW_OK);
    cw_cleanup node;
    cw_cleanup_push(ctx, &node, count_run, d);
    cwc_notify(d->dialed);
    return cwc_pending_task(ctx, NULL);
}

/* Unwinding the dialer runs its one handler and nothing a finished dial left
 * registered: the connection it made stays whole. */
static void *dial_unwound_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct dialer d = {.dialed = cw_oneshot_new(ctx, 1)};
    cw_listener *l = listen_loopback(ctx, CW_ADDR_IPV4, &d.where);
    cw_handle *h = cw_spawn(cw_child(ctx, "dialer"), dial_then_wait, &d);
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    cwc_await(d.dialed);
    cw_abort(h);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    ck_assert_int_eq(d.handler_runs, 1);
    ck_assert_int_eq(send_bytes(d.sink, "ping", 4), CW_OK);
    recv_expect(c.stream, "ping", 4);
    ck_assert_int_eq(send_bytes(c.sink, "pong", 4), CW_OK);
    recv_expect(d.stream, "pong", 4);
    conn_close(d.sink, d.stream);
    conn_close(c.sink, c.stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_dial_leaves_no_cleanup_handler, "network", "PAN-004 NET-006 RUN-008", CWC_REPEATED)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cwc_run_ok(&cfg, dial_unwound_root, NULL);
}

/* A recv that an unwinding task makes on a stream with nothing to read
 * fails at once with CW_ERR_CLOSED [PAN-005], with a read timeout set or
 * not: it would have to wait. */
struct unwound_reader {
    cw_stream *stream;
    cw_oneshot *ready;
    int rc;
};

static void recv_in_cleanup(void *arg)
{
    struct unwound_reader *u = arg;
    cw_iobufs *got = NULL;
    u->rc = cw_stream_recv(u->stream, 1, &got);
    cw_iobufs_release(got);
}

static void *reader_then_wait(cw_ctx *ctx, void *arg)
{
    struct unwound_reader *u = arg;
    CW_CLEANUP_PUSH(ctx, recv_in_cleanup, u);
    cwc_notify(u->ready);
    cwc_pending_task(ctx, NULL);
    CW_CLEANUP_POP(ctx, false);
    return NULL;
}

static void *recv_unwound_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    struct unwound_reader u = {b.stream, cw_oneshot_new(ctx, 1), 12345};
    cw_handle *h = cw_spawn(cw_child(ctx, "reader"), reader_then_wait, &u);
    cwc_await(u.ready);
    cw_abort(h);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    ck_assert_msg(u.rc == CW_ERR_CLOSED, "a recv in a cleanup handler gave %d (%s) [PAN-005]", u.rc,
                  cw_strerror(u.rc));
    close_pair(&a, &b, l);
    return NULL;
}

CWC_CASE(network_recv_while_unwinding, "network", "PAN-005 NET-019 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, recv_unwound_root, NULL);
    cfg.read_timeout = 30 * CW_SEC;
    cwc_run_ok(&cfg, recv_unwound_root, NULL);
}

/* ---- Peek ------------------------------------------------------------------------------------ */

static void *peek_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    uint8_t seen[64];
    ck_assert_uint_eq(cw_stream_peek(b.stream, sizeof seen, seen), 0);
    ck_assert_int_eq(send_bytes(a.sink, "0123456789", 10), CW_OK);
    recv_expect(b.stream, "01", 2);
    /* One delivery of ten bytes: the recv of two left the rest buffered.
     * Over TCP it may still be on its way; wait for it without consuming. */
    for (int i = 0; i < 1000 && cw_stream_peek(b.stream, sizeof seen, seen) < 8; i++)
        cw_sleep(ctx, CW_MSEC);
    ck_assert_uint_eq(cw_stream_peek(b.stream, sizeof seen, seen), 8);
    ck_assert(memcmp(seen, "23456789", 8) == 0);
    ck_assert_uint_eq(cw_stream_peek(b.stream, 3, seen), 3);
    ck_assert(memcmp(seen, "234", 3) == 0);
    recv_expect(b.stream, "23456789", 8);
    ck_assert_uint_eq(cw_stream_peek(b.stream, sizeof seen, seen), 0);
    close_pair(&a, &b, l);
    return NULL;
}

/* A stream that never held a byte: peek shows nothing, whatever it asks. */
static void *fresh_peek_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    uint8_t seen[8];
    ck_assert_uint_eq(cw_stream_peek(b.stream, sizeof seen, seen), 0);
    ck_assert_uint_eq(cw_stream_peek(a.stream, 0, seen), 0);
    cw_sink *ms;
    cw_stream *mr;
    ck_assert_int_eq(cw_mock_channel(ctx, &ms, &mr), CW_OK);
    ck_assert_uint_eq(cw_stream_peek(mr, sizeof seen, seen), 0);
    conn_close(ms, mr);
    close_pair(&a, &b, l);
    return NULL;
}

CWC_CASE(network_peek_fresh_stream, "network", "NET-012 NET-024 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, fresh_peek_root, NULL);
}

CWC_CASE(network_peek_then_recv, "network", "NET-012 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, peek_root, NULL);
}

/* One byte left held by a recv, then a recv longer than what is held: the
 * held byte comes first, then those that arrive after it [NET-009]. */
static void *one_held_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    uint8_t seen[8];
    ck_assert_int_eq(send_bytes(a.sink, "abc", 3), CW_OK);
    recv_expect(b.stream, "ab", 2);
    /* Over TCP the third byte may still be on its way: wait for it (the
     * bound only ends a hang, so a slow machine is never failed here). */
    for (int i = 0; i < 30000 && cw_stream_peek(b.stream, sizeof seen, seen) < 1; i++)
        cw_sleep(ctx, CW_MSEC);
    ck_assert_uint_eq(cw_stream_peek(b.stream, sizeof seen, seen), 1);
    ck_assert_int_eq(send_bytes(a.sink, "defgh", 5), CW_OK);
    recv_expect(b.stream, "cdefgh", 6);
    close_pair(&a, &b, l);
    return NULL;
}

CWC_CASE(network_recv_after_one_byte_held, "network", "NET-009 NET-012 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, one_held_root, NULL);
    cfg.io_backend = CW_IO_THREADS; /* where a recv may read straight into its own buffer */
    cwc_run_ok(&cfg, one_held_root, NULL);
}

/* ---- Bytes that trickle in, then the end ------------------------------------------------------
 */

/* One byte, then one more, then a burst, then the end; each after a pause
 * long enough for it to arrive on its own. */
static void *trickle_sender(cw_ctx *ctx, void *arg)
{
    cw_sink *sink = arg;
    const char *parts[] = {"a", "b", "cdefgh"};
    for (size_t i = 0; i < 3; i++) {
        ck_assert_int_eq(send_bytes(sink, parts[i], strlen(parts[i])), CW_OK);
        cw_sleep(ctx, 20 * CW_MSEC);
    }
    cw_sink_close(sink);
    return NULL;
}

/* Receives of every size over bytes that came one at a time: each recv
 * takes exactly its length, and a recv needing more than came before the
 * end fails [NET-011, NET-014]. */
static void *trickle_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    cw_handle *h = cw_spawn(cw_child(ctx, "sender"), trickle_sender, a.sink);
    recv_expect(b.stream, "a", 1);
    recv_expect(b.stream, "bc", 2);
    recv_expect(b.stream, "def", 3);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(b.stream, 10, &got), CW_ERR_RECV_FAILED);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cw_stream_close(a.stream);
    conn_close(b.sink, b.stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_trickle_then_end, "network", "NET-009 NET-011 NET-014 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.read_timeout = 5 * CW_SEC; /* a stream that misses the end fails in time */
    cwc_run_ok(&cfg, trickle_root, NULL);
}

/* The accepted side of one_byte_exchange: waits for one byte, answers one. */
static void *one_byte_echo(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct pair *b = arg;
    recv_expect(b->stream, "x", 1);
    ck_assert_int_eq(send_bytes(b->sink, "y", 1), CW_OK);
    return NULL;
}

/* Single bytes back and forth, each recv waiting before its byte is sent:
 * a recv of one byte completes when that byte arrives, not when more come
 * after it [NET-011]. The answer races a sleep far longer than any
 * loopback round trip, so a recv that is never woken fails the case. */
static void *one_byte_exchange_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    for (int round = 0; round < 3; round++) {
        cw_handle *h = cw_spawn(cw_child(ctx, "echo"), one_byte_echo, &b);
        ck_assert_int_eq(cw_sleep(ctx, 5 * CW_MSEC), CW_OK); /* the echo is waiting */
        ck_assert_int_eq(send_bytes(a.sink, "x", 1), CW_OK);
        cw_iobufs *got = NULL;
        /* The recv first, then second: a select minds every wait it has. */
        int recv_at = round % 2;
        cw_wait race[2];
        race[recv_at] = cw_wait_stream_recv(a.stream, 1, &got);
        race[1 - recv_at] = cw_wait_sleep(ctx, 30 * CW_SEC);
        ck_assert_msg(cw_select(race, 2) == recv_at,
                      "NET-011: round %d: a one-byte answer never completed the recv waiting "
                      "for it",
                      round);
        ck_assert(cw_iobufs_equal_bytes(got, "y", 1));
        cw_iobufs_release(got);
        ck_assert_int_eq(cw_join(h, NULL), CW_OK);
        cw_handle_release(h);
    }
    conn_close(a.sink, a.stream);
    conn_close(b.sink, b.stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_one_byte_exchange, "network", "NET-011 NET-009 NET-027 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.network_latency = CW_MSEC; /* a deterministic backend's bytes take time [NET-027] */
    cwc_run_ok(&cfg, one_byte_exchange_root, NULL);
}

/* Two sends apart, then the whole connection closed (over TCP, with the
 * default zero_linger, a reset). */
struct burst {
    struct pair half;
    const char *first, *second; /* second may be NULL */
};

static void *burst_sender(cw_ctx *ctx, void *arg)
{
    struct burst *b = arg;
    ck_assert_int_eq(send_bytes(b->half.sink, b->first, strlen(b->first)), CW_OK);
    cw_sleep(ctx, 20 * CW_MSEC);
    if (b->second) {
        ck_assert_int_eq(send_bytes(b->half.sink, b->second, strlen(b->second)), CW_OK);
        cw_sleep(ctx, 20 * CW_MSEC);
    }
    /* The receiving half first: over TCP the socket then goes with the
     * sink, reset rather than shut down. */
    cw_stream_close(b->half.stream);
    cw_sink_close(b->half.sink);
    return NULL;
}

/* Bytes read ahead of a recv, more that come later on their own, and a
 * peer that closed (or reset) the connection meanwhile: every byte that
 * arrived is returned, and a recv needing more fails [NET-012, NET-014]. */
static void *read_ahead_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct burst one = {{NULL, NULL}, "xy", "z"}, two = {{NULL, NULL}, "pq", NULL};
    struct pair b1, b2;
    cw_listener *l1, *l2;
    connect_pair(ctx, &one.half, &b1, &l1);
    connect_pair(ctx, &two.half, &b2, &l2);
    cw_handle *h1 = cw_spawn(cw_child(ctx, "one"), burst_sender, &one);
    cw_handle *h2 = cw_spawn(cw_child(ctx, "two"), burst_sender, &two);
    recv_expect(b1.stream, "x", 1);
    recv_expect(b1.stream, "yz", 2);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(b1.stream, 1, &got), CW_ERR_RECV_FAILED);
    recv_expect(b2.stream, "p", 1);
    ck_assert_int_eq(cw_join(h2, NULL), CW_OK); /* the peer is gone */
    cw_sleep(ctx, 20 * CW_MSEC);
    ck_assert_int_eq(cw_stream_recv(b2.stream, 2, &got), CW_ERR_RECV_FAILED);
    ck_assert_int_eq(cw_join(h1, NULL), CW_OK);
    cw_handle_release(h1);
    cw_handle_release(h2);
    conn_close(b1.sink, b1.stream);
    conn_close(b2.sink, b2.stream);
    cw_listener_close(l1);
    cw_listener_close(l2);
    return NULL;
}

CWC_CASE(network_read_ahead_then_reset, "network", "NET-011 NET-012 NET-014 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.read_timeout = 5 * CW_SEC;
    cwc_run_ok(&cfg, read_ahead_root, NULL);
}

/* The accepting side closes its halves: the dialer sees the end, and its
 * sends fail once the peer is gone [NET-014]. */
static void *accepted_close_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    ck_assert_int_eq(send_bytes(b.sink, "bye", 3), CW_OK);
    conn_close(b.sink, b.stream);
    recv_expect(a.stream, "bye", 3);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(a.stream, 1, &got), CW_ERR_RECV_FAILED);
    ck_assert_ptr_null(got);
    int rc = CW_OK;
    for (int i = 0; i < 200 && rc == CW_OK; i++) { /* over TCP the reset takes a moment */
        rc = send_bytes(a.sink, "x", 1);
        if (rc == CW_OK)
            cw_sleep(ctx, CW_MSEC);
    }
    ck_assert_int_eq(rc, CW_ERR_SEND_FAILED);
    conn_close(a.sink, a.stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_accepted_side_closes, "network", "NET-014 NET-001 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.read_timeout = 5 * CW_SEC;
    cwc_run_ok(&cfg, accepted_close_root, NULL);
}

/* ---- Dial and bind failures ------------------------------------------------------------------ */

static void *dial_nothing_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr where;
    cw_listener *l = listen_loopback(ctx, CW_ADDR_IPV4, &where);
    cw_listener_close(l); /* nothing listens there any more */
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_ERR_CONNECTION_FAILED);
    ck_assert_ptr_null(sink);
    ck_assert_ptr_null(stream);
    /* The address can be bound again. */
    ck_assert_int_eq(cw_bind(ctx, &where, &l), CW_OK);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_dial_nothing, "network", "NET-006 NET-026 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, dial_nothing_root, NULL);
}

/* A listener on 127.0.0.1 listens there only: the same port on another
 * loopback address has nobody behind it. */
static void *exact_address_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr where;
    cw_listener *l = listen_loopback(ctx, CW_ADDR_IPV4, &where);
    cw_addr other = cw_addr_ipv4(127, 0, 0, 2, where.port);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &other, &sink, &stream), CW_ERR_CONNECTION_FAILED);
    ck_assert_ptr_null(sink);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_listens_on_its_address_only, "network", "NET-006 NET-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, exact_address_root, NULL);
}

/* On a deterministic backend addresses match exactly, for binding and for
 * dialing: 0.0.0.0:p and 127.0.0.1:p are two addresses, both can be bound,
 * and a dial to 127.0.0.1:p reaches only a listener on 127.0.0.1:p, not
 * one on 0.0.0.0:p as a TCP listener would take it [NET-037]. */
static void *unspecified_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const uint8_t any6[16] = {0};
    const uint16_t port = 4100;
    cw_addr any = cw_addr_ipv4(0, 0, 0, 0, port), lo = cw_addr_loopback4(port);
    cw_listener *wide, *narrow, *wide6;
    ck_assert_int_eq(cw_bind(ctx, &any, &wide), CW_OK);
    ck_assert_int_eq(cw_bind(ctx, &lo, &narrow), CW_OK);
    cw_addr any6_addr = cw_addr_ipv6(any6, port);
    ck_assert_int_eq(cw_bind(ctx, &any6_addr, &wide6), CW_OK);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &lo, &sink, &stream), CW_OK);
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(narrow, &c), CW_OK);
    conn_close(c.sink, c.stream);
    conn_close(sink, stream);
    cw_listener_close(narrow);
    ck_assert_int_eq(cw_dial(ctx, &lo, &sink, &stream), CW_ERR_CONNECTION_FAILED);
    cw_addr lo6 = cw_addr_loopback6(port);
    ck_assert_int_eq(cw_dial(ctx, &lo6, &sink, &stream), CW_ERR_CONNECTION_FAILED);
    ck_assert_int_eq(cw_dial(ctx, &any, &sink, &stream), CW_OK); /* the address itself */
    ck_assert_int_eq(cw_listener_accept(wide, &c), CW_OK);
    conn_close(c.sink, c.stream);
    conn_close(sink, stream);
    cw_listener_close(wide);
    cw_listener_close(wide6);
    return NULL;
}

CWC_CASE(network_unspecified_address_is_exact, "network", "NET-037 NET-003 NET-006 RUN-008",
         DET | CWC_NEEDS_NETWORK | CWC_REPEATED)
{
    cwc_run_ok(NULL, unspecified_root, NULL);
}

/* A connection dialed and never accepted is closed with its listener: the
 * dialer's stream ends [NET-026]. */
static void *unaccepted_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr where;
    cw_listener *l = listen_loopback(ctx, CW_ADDR_IPV4, &where);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_OK);
    cw_listener_close(l);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(stream, 1, &got), CW_ERR_RECV_FAILED);
    ck_assert_ptr_null(got);
    conn_close(sink, stream);
    return NULL;
}

CWC_CASE(network_unaccepted_closed_with_listener, "network", "NET-026 NET-014 RUN-008",
         CWC_REPEATED)
{
    cwc_run_ok(NULL, unaccepted_root, NULL);
}

static void *double_bind_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (int f = 0; f < 2; f++) {
        cw_addr where;
        cw_listener *l = listen_loopback(ctx, f ? CW_ADDR_IPV6 : CW_ADDR_IPV4, &where);
        cw_listener *again = NULL;
        ck_assert_int_eq(cw_bind(ctx, &where, &again), CW_ERR_BIND_FAILED);
        ck_assert_ptr_null(again);
        cw_listener_close(l);
    }
    if (is_det()) {
        /* Loopback ports of the dialers' range are reserved. */
        cw_addr reserved = cw_addr_loopback4(40000);
        cw_listener *l = NULL;
        ck_assert_int_eq(cw_bind(ctx, &reserved, &l), CW_ERR_BIND_FAILED);
        reserved = cw_addr_loopback6(CW_NET_EPHEMERAL_FIRST);
        ck_assert_int_eq(cw_bind(ctx, &reserved, &l), CW_ERR_BIND_FAILED);
    }
    return NULL;
}

CWC_CASE(network_double_bind, "network", "NET-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, double_bind_root, NULL);
}

/* An address binds again once its listener is closed, though the
 * connection it accepted, closed first on the accepting side, still
 * lingers in the system (TIME_WAIT over TCP) [NET-003]. (Over TCP another
 * process may take the port meanwhile; a few fresh ports make that a
 * non-issue.) */
static void *rebind_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    int rc = CW_ERR_BIND_FAILED;
    for (int attempt = 0; attempt < 8 && rc != CW_OK; attempt++) {
        cw_addr where;
        cw_listener *l = listen_loopback(ctx, CW_ADDR_IPV4, &where);
        cw_sink *sink;
        cw_stream *stream;
        ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_OK);
        cw_conn c;
        ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
        conn_close(c.sink, c.stream);
        conn_close(sink, stream);
        cw_listener_close(l);
        cw_listener *again = NULL;
        rc = cw_bind(ctx, &where, &again);
        if (rc == CW_OK)
            cw_listener_close(again);
    }
    ck_assert_int_eq(rc, CW_OK);
    return NULL;
}

CWC_CASE(network_rebind_after_close, "network", "NET-003 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.zero_linger = false; /* closes end with FIN, not a reset that leaves nothing */
    cwc_run_ok(&cfg, rebind_root, NULL);
}

/* ---- Poisoning ------------------------------------------------------------------------------ */

static void *blocked_recv(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_iobufs *got = NULL;
    cw_stream_recv(arg, 100, &got);
    cw_iobufs_release(got);
    return NULL;
}

static void *poison_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);

    /* A poll that never waited leaves the stream usable. */
    cw_iobufs *got = NULL;
    cw_wait w = cw_wait_stream_recv(b.stream, 5, &got);
    ck_assert_int_eq(cw_poll(&w, 1), CW_ERR_WOULD_BLOCK);

    /* A recv that waited and lost to a timeout poisons the stream. */
    cw_wait race[2] = {cw_wait_stream_recv(b.stream, 5, &got), cw_wait_sleep(ctx, 10 * CW_MSEC)};
    ck_assert_int_eq(cw_select(race, 2), 1);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(send_bytes(a.sink, "abcde", 5), CW_OK);
    ck_assert_int_eq(cw_stream_recv(b.stream, 5, &got), CW_ERR_CLOSED);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(cw_stream_recv(b.stream, 1, &got), CW_ERR_CLOSED);

    /* The other half of the connection still works. */
    ck_assert_int_eq(send_bytes(b.sink, "xyz", 3), CW_OK);
    recv_expect(a.stream, "xyz", 3);

    /* An abort during a recv poisons that stream too. */
    cw_handle *h = cw_spawn(cw_child(ctx, "reader"), blocked_recv, a.stream);
    cw_sleep(ctx, 5 * CW_MSEC);
    cw_abort(h);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    ck_assert_int_eq(send_bytes(b.sink, "more", 4), CW_OK);
    ck_assert_int_eq(cw_stream_recv(a.stream, 4, &got), CW_ERR_CLOSED);

    close_pair(&a, &b, l);
    return NULL;
}

CWC_CASE(network_poison_after_select_timeout, "network", "NET-010 NET-013 NET-023 RUN-008",
         CWC_REPEATED)
{
    cwc_run_ok(NULL, poison_root, NULL);
}

/* Polls for more than has arrived, between recvs of other lengths: each
 * poll changes nothing (NET-010), so every recv still gets the next bytes
 * in order (NET-011), however the stream held what the poll read. */
static void poll_finds_too_little(cw_stream *s, size_t len)
{
    cw_iobufs *got = NULL;
    cw_wait w = cw_wait_stream_recv(s, len, &got);
    ck_assert_int_eq(cw_poll(&w, 1), CW_ERR_WOULD_BLOCK);
    ck_assert_ptr_null(got);
}

static void *poll_between_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    ck_assert_int_eq(send_bytes(a.sink, "0123456789", 10), CW_OK);
    cw_sleep(ctx, 5 * CW_MSEC);
    poll_finds_too_little(b.stream, 100);
    recv_expect(b.stream, "0123", 4);
    poll_finds_too_little(b.stream, 100);
    recv_expect(b.stream, "456789", 6);
    ck_assert_int_eq(send_bytes(a.sink, "abcdefgh", 8), CW_OK);
    cw_sleep(ctx, 5 * CW_MSEC);
    poll_finds_too_little(b.stream, 9);
    recv_expect(b.stream, "abc", 3);
    recv_expect(b.stream, "defgh", 5);
    ck_assert_int_eq(send_bytes(a.sink, "z", 1), CW_OK);
    recv_expect(b.stream, "z", 1);
    close_pair(&a, &b, l);
    return NULL;
}

/* Also with blocking calls on I/O threads, never a ring (NAT-008): a
 * backend may then read a recv's bytes another way. And with a read-ahead
 * buffer much smaller than the default: what a poll read must then go
 * back after the bytes earlier recvs took, however much room is left
 * before them. */
CWC_CASE(network_polls_between_recvs_of_other_lengths, "network", "NET-010 NET-011 NET-023 RUN-008",
         CWC_REPEATED)
{
    cwc_run_ok(NULL, poll_between_root, NULL);
    cw_config cfg = cwc_config();
    cfg.io_backend = CW_IO_THREADS;
    cwc_run_ok(&cfg, poll_between_root, NULL);
    cfg.read_buffer_size = 1000;
    cwc_run_ok(&cfg, poll_between_root, NULL);
}

/* ---- Peer close ------------------------------------------------------------------------------ */

static void *closer(cw_ctx *ctx, void *arg)
{
    cw_sink *s = arg;
    ck_assert_int_eq(send_bytes(s, "abc", 3), CW_OK);
    cw_sleep(ctx, 5 * CW_MSEC);
    cw_sink_close(s);
    return NULL;
}

static void *peer_close_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    cw_handle *h = cw_spawn(cw_child(ctx, "closer"), closer, a.sink);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(b.stream, 5, &got), CW_ERR_RECV_FAILED);
    ck_assert_ptr_null(got);
    ck_assert_int_eq(cw_stream_recv(b.stream, 1, &got), CW_ERR_CLOSED);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cw_stream_close(a.stream);
    conn_close(b.sink, b.stream);
    cw_listener_close(l);

    /* In memory a send to a closed stream fails at once. */
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    cw_stream_close(stream);
    ck_assert_int_eq(send_bytes(sink, "x", 1), CW_ERR_SEND_FAILED);
    ck_assert_int_eq(send_bytes(sink, "x", 1), CW_ERR_CLOSED);
    cw_sink_close(sink);
    return NULL;
}

CWC_CASE(network_peer_close_during_recv, "network", "NET-013 NET-014 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, peer_close_root, NULL);
}

/* ---- Mock channel -----------------------------------------------------------------------------
 */

static void *mock_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    ck_assert_int_eq(send_bytes(sink, "abc", 3), CW_OK);
    ck_assert_int_eq(send_bytes(sink, "def", 3), CW_OK);
    uint8_t seen[8];
    ck_assert_uint_eq(cw_stream_peek(stream, 4, seen), 4);
    ck_assert(memcmp(seen, "abcd", 4) == 0);
    recv_expect(stream, "abcdef", 6);
    cw_handle *h = cw_spawn(cw_child(ctx, "trickle"), trickle, sink);
    recv_expect(stream, "abcdefghij", 10);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    /* A page of bytes held, all but the first taken, then one byte more:
     * it arrives behind those still held, whatever room the backend keeps
     * for them (here it is one byte past a page of room at an offset). */
    static uint8_t page[4097];
    for (size_t i = 0; i < sizeof page; i++)
        page[i] = (uint8_t)(i % 251);
    ck_assert_int_eq(send_bytes(sink, page, 4096), CW_OK);
    recv_expect(stream, page, 1);
    ck_assert_int_eq(send_bytes(sink, page + 4096, 1), CW_OK);
    recv_expect(stream, page + 1, 4096);
    cw_sink_close(sink);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(stream, 1, &got), CW_ERR_RECV_FAILED);
    cw_stream_close(stream);
    return NULL;
}

CWC_CASE(network_mock_channel, "network", "NET-024 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, mock_root, NULL);
}

/* ---- Addresses --------------------------------------------------------------------------------
 */

CWC_CASE(network_address_text, "network", "NET-002 RUN-008", CWC_REPEATED)
{
    char text[CW_ADDR_TEXT_MAX];
    cw_addr a = cw_addr_ipv4(10, 0, 0, 255, 8080);
    ck_assert_str_eq(cw_addr_format(&a, text), "10.0.0.255:8080");
    a = cw_addr_loopback6(1);
    ck_assert_str_eq(cw_addr_format(&a, text), "[::1]:1");
    uint8_t ip[16] = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1};
    a = cw_addr_ipv6(ip, 443);
    ck_assert_str_eq(cw_addr_format(&a, text), "[2001:db8::1:0:0:1]:443");
    uint8_t zero[16] = {0};
    a = cw_addr_ipv6(zero, 0);
    ck_assert_str_eq(cw_addr_format(&a, text), "[::]:0");
    uint8_t tail[16] = {0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0};
    a = cw_addr_ipv6(tail, 9);
    ck_assert_str_eq(cw_addr_format(&a, text), "[1::]:9");
}

/* ---- Resolver ---------------------------------------------------------------------------------
 */

static void *resolve_det_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr addrs[2] = {cw_addr_ipv4(10, 0, 0, 1, 0), cw_addr_loopback6(7)};
    ck_assert_int_eq(cw_resolver_register(ctx, "node1", addrs, 2), CW_OK);
    cw_addr out[4];
    size_t n = 0;
    cw_resolve_error err;
    ck_assert_int_eq(cw_resolve(ctx, "node1", out, 4, &n, &err), CW_OK);
    ck_assert_uint_eq(n, 2);
    addrs[1].port = 0; /* names resolve to addresses, not ports */
    ck_assert(cw_addr_equal(&out[0], &addrs[0]));
    ck_assert(cw_addr_equal(&out[1], &addrs[1]));
    ck_assert_int_eq(cw_resolve(ctx, "nowhere", out, 4, &n, &err), CW_ERR_RESOLVE_FAILED);
    ck_assert_uint_eq(n, 0);
    ck_assert_str_eq(err.message, "dns resolution failed: nowhere");
    /* At most `cap` of them, nothing written past it [NET-020]. */
    cw_addr few[2] = {cw_addr_loopback4(0), cw_addr_loopback4(4242)};
    ck_assert_int_eq(cw_resolve(ctx, "node1", few, 1, &n, NULL), CW_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert(cw_addr_equal(&few[0], &addrs[0]));
    ck_assert_uint_eq(few[1].port, 4242);
    /* A registration without a name, or without the addresses it counts,
     * is refused and changes nothing [NET-021]. */
    ck_assert_int_eq(cw_resolver_register(ctx, NULL, addrs, 1), CW_ERR_INVALID);
    ck_assert_int_eq(cw_resolver_register(ctx, "node1", NULL, 1), CW_ERR_INVALID);
    ck_assert_int_eq(cw_resolve(ctx, "node1", out, 4, &n, NULL), CW_OK);
    ck_assert_uint_eq(n, 2);
    ck_assert_int_eq(cw_resolver_register(ctx, "node1", NULL, 0), CW_OK);
    ck_assert_int_eq(cw_resolve(ctx, "node1", out, 4, &n, NULL), CW_ERR_RESOLVE_FAILED);
    return NULL;
}

static void *resolve_sys_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr one = cw_addr_loopback4(0);
    ck_assert_int_eq(cw_resolver_register(ctx, "node1", &one, 1), CW_ERR_UNSUPPORTED);
    cw_addr out[8];
    size_t n = 0;
    cw_resolve_error err;
    ck_assert_int_eq(cw_resolve(ctx, "localhost", out, 8, &n, &err), CW_OK);
    ck_assert_uint_ge(n, 1);
    for (size_t i = 0; i < n; i++)
        ck_assert(is_loopback(&out[i]));
    /* At most `cap` of them, nothing written past it (localhost often has
     * two: 127.0.0.1 and ::1). */
    cw_addr few[2] = {cw_addr_loopback4(0), cw_addr_loopback4(4242)};
    ck_assert_int_eq(cw_resolve(ctx, "localhost", few, 1, &n, &err), CW_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert(is_loopback(&few[0]) && few[1].port == 4242);
    /* A numeric address is its own answer, whichever family it is of. */
    cw_addr four = cw_addr_loopback4(0), six = cw_addr_loopback6(0);
    ck_assert_int_eq(cw_resolve(ctx, "127.0.0.1", out, 8, &n, &err), CW_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert(cw_addr_equal(&out[0], &four));
    ck_assert_int_eq(cw_resolve(ctx, "::1", out, 8, &n, &err), CW_OK);
    ck_assert_uint_eq(n, 1);
    ck_assert(cw_addr_equal(&out[0], &six));
    ck_assert_int_eq(cw_resolve(ctx, "nowhere.invalid", out, 8, &n, &err), CW_ERR_RESOLVE_FAILED);
    ck_assert(strncmp(err.message, "dns resolution failed: nowhere.invalid", 38) == 0);
    return NULL;
}

/* A deterministic run without the audit digest (cfg.audit false) resolves
 * as one with it: the audit only records what happens. */
CWC_CASE(network_resolve, "network", "NET-020 NET-021 NET-022 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, is_det() ? resolve_det_root : resolve_sys_root, NULL);
    if (is_det()) {
        cw_config cfg = cwc_config();
        cfg.audit = false;
        cwc_run_ok(&cfg, resolve_det_root, NULL);
    }
}

static void *resolve_caller(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr out[4];
    size_t n;
    (void)cw_resolve(ctx, "localhost", out, 4, &n, NULL);
    return NULL;
}

/* Callers aborted at every stage of a resolution (before it starts, while
 * the lookup is queued, while it runs): each ends, and nothing the lookups
 * held outlives the run (the sanitizer and valgrind runs see to that). */
static void *resolve_abort_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (int i = 0; i < 40; i++) {
        cw_handle *h = cw_spawn(cw_child(ctx, "caller"), resolve_caller, NULL);
        for (int k = 0; k < i % 5; k++)
            cw_yield(ctx);
        if (i % 8 == 7)
            cw_sleep(ctx, CW_MSEC);
        cw_abort(h);
        int rc = cw_join(h, NULL);
        ck_assert(rc == CW_OK || rc == CW_ERR_CLOSED);
        cw_handle_release(h);
    }
    /* The last callers' lookups may still run: the run's end waits for them. */
    return NULL;
}

CWC_CASE(network_resolve_caller_aborted, "network", "NET-020 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, resolve_abort_root, NULL);
}

/* ---- Metrics ----------------------------------------------------------------------------------
 */

static void *metrics_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    cw_addr at;
    /* Registered, at 0, by the first listen, with the help NET-025 spells. */
    cw_listener *first = listen_loopback(ctx, CW_ADDR_IPV4, &at);
    char *before = cw_metrics_encode(ctx);
    ck_assert_ptr_nonnull(before);
    static const char *const zero[] = {
        "# HELP runtime_inbound_connections Number of connections created by dialing us.\n"
        "# TYPE runtime_inbound_connections counter\nruntime_inbound_connections_total 0\n",
        "# HELP runtime_outbound_connections Number of connections created by dialing others.\n"
        "# TYPE runtime_outbound_connections counter\nruntime_outbound_connections_total 0\n",
        "# HELP runtime_inbound_bandwidth Bandwidth used by receiving data from others.\n"
        "# TYPE runtime_inbound_bandwidth counter\nruntime_inbound_bandwidth_total 0\n",
        "# HELP runtime_outbound_bandwidth Bandwidth used by sending data to others.\n"
        "# TYPE runtime_outbound_bandwidth counter\nruntime_outbound_bandwidth_total 0\n",
    };
    for (size_t i = 0; i < sizeof zero / sizeof *zero; i++)
        ck_assert_msg(strstr(before, zero[i]), "no lines\n%s", zero[i]);
    free(before);
    cw_listener_close(first);
    /* A dial to the address just closed makes no connection and counts
     * nothing; another program may have taken the port meanwhile, and
     * then the dial connects and counts. */
    cw_sink *sink = NULL;
    cw_stream *stream = NULL;
    int refused = cw_dial(ctx, &at, &sink, &stream);
    if (refused == CW_OK) {
        cw_sink_close(sink);
        cw_stream_close(stream);
    }
    connect_pair(ctx, &a, &b, &l);
    ck_assert_int_eq(send_bytes(a.sink, "hello", 5), CW_OK);
    recv_expect(b.stream, "hello", 5);
    char *text = cw_metrics_encode(ctx);
    ck_assert_ptr_nonnull(text);
    ck_assert_ptr_nonnull(strstr(text, "\nruntime_inbound_connections_total 1\n"));
    ck_assert_ptr_nonnull(strstr(text, refused == CW_OK
                                           ? "\nruntime_outbound_connections_total 2\n"
                                           : "\nruntime_outbound_connections_total 1\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nruntime_inbound_bandwidth_total 5\n"));
    ck_assert_ptr_nonnull(strstr(text, "\nruntime_outbound_bandwidth_total 5\n"));
    free(text);
    close_pair(&a, &b, l);
    return NULL;
}

CWC_CASE(network_metrics, "network", "NET-025 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, metrics_root, NULL);
}

/* ---- Send to a closed peer ------------------------------------------------------------------- */

static void *send_closed_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct pair a, b;
    cw_listener *l;
    connect_pair(ctx, &a, &b, &l);
    conn_close(b.sink, b.stream);
    /* In memory the first send fails; over TCP one fails once the kernel
     * has heard of the close. */
    int rc = CW_OK;
    for (int i = 0; i < 1000 && rc == CW_OK; i++) {
        rc = send_bytes(a.sink, "data", 4);
        if (rc == CW_OK)
            cw_sleep(ctx, CW_MSEC);
    }
    ck_assert_int_eq(rc, CW_ERR_SEND_FAILED);
    ck_assert_int_eq(send_bytes(a.sink, "data", 4), CW_ERR_CLOSED);
    conn_close(a.sink, a.stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_send_to_closed_peer, "network", "NET-014 NET-013 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, send_closed_root, NULL);
}
