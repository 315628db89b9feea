/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_edges.c - over TCP, a recv that runs past the run's read timeout
 * fails with CW_ERR_TIMEOUT and poisons its half (NET-019, NET-010); a
 * deterministic backend ignores the TCP settings.
 */
#include "cases/util.h"

typedef struct pair {
    cw_sink *sink;
    cw_stream *stream;
} pair;

static void *accept_into(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    void **io = arg;
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(io[0], &c), CW_OK);
    pair *p = io[1];
    p->sink = c.sink;
    p->stream = c.stream;
    return NULL;
}

/* A connection over loopback: `a` the dialer's halves, `b` the acceptor's. */
static cw_listener *connect_pair(cw_ctx *ctx, pair *a, pair *b)
{
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l = NULL;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    void *io[2] = {l, b};
    cw_handle *h = cw_spawn(cw_child(ctx, "acceptor"), accept_into, io);
    ck_assert_int_eq(cw_dial(ctx, &where, &a->sink, &a->stream), CW_OK);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    return l;
}

static int send_text(cw_sink *s, const char *text, size_t len)
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf b;
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, text, len, &b), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
    int rc = cw_sink_send(s, l);
    cw_iobufs_release(l);
    return rc;
}

/* A poisoned half leaves the other direction working: b's sink still
 * reaches a's stream. Then both connections and the listener close. */
static void other_direction_works_then_close(pair *a, pair *b, cw_listener *l)
{
    ck_assert_int_eq(send_text(b->sink, "back", 4), CW_OK);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(a->stream, 4, &got), CW_OK);
    ck_assert(cw_iobufs_equal_bytes(got, "back", 4));
    cw_iobufs_release(got);
    cw_sink_close(a->sink);
    cw_stream_close(a->stream);
    cw_sink_close(b->sink);
    cw_stream_close(b->stream);
    cw_listener_close(l);
}

static void *read_timeout_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    pair a = {0}, b = {0};
    cw_listener *l = connect_pair(ctx, &a, &b);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(b.stream, 4, &got), CW_ERR_TIMEOUT); /* nothing sent */
    ck_assert_ptr_null(got);
    ck_assert_int_eq(send_text(a.sink, "late", 4), CW_OK);
    ck_assert_int_eq(cw_stream_recv(b.stream, 4, &got), CW_ERR_CLOSED); /* poisoned */
    ck_assert_ptr_null(got);
    other_direction_works_then_close(&a, &b, l);
    return NULL;
}

CWC_CASE(network_tcp_read_timeout_poisons, "network", "NET-019 NET-010 RUN-008",
         CWC_NEEDS_NETWORK | CWC_UNLESS_DETERMINISTIC | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.read_timeout = 20 * CW_MSEC;
    cwc_run_ok(&cfg, read_timeout_root, NULL);
}

/* A dial to an address nothing can reach (the limited broadcast address,
 * which no TCP connection can have) fails, in each I/O mode: at once where
 * the host refuses it, or at the run's connect timeout where it lets it
 * wait. It never completes with CW_OK, and never waits past the timeout.
 * A backend without a ring refuses a run asking for one (NAT-008); a
 * deterministic one ignores the mode and finds nothing listening there. */
static void *unreachable_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr nowhere = cw_addr_ipv4(255, 255, 255, 255, 80);
    cw_sink *sink = NULL;
    cw_stream *stream = NULL;
    int rc = cw_dial(ctx, &nowhere, &sink, &stream);
    ck_assert_msg(rc == CW_ERR_CONNECTION_FAILED || rc == CW_ERR_TIMEOUT,
                  "a dial to 255.255.255.255:80 returned %d", rc);
    ck_assert_ptr_null(sink);
    ck_assert_ptr_null(stream);
    return NULL;
}

CWC_CASE(network_dial_unreachable_fails, "network", "NET-006 NAT-008 RUN-008",
         CWC_OWN_IO | CWC_REPEATED)
{
    const cw_io_backend modes[] = {CW_IO_THREADS, CW_IO_URING, CW_IO_AUTO};
    for (size_t i = 0; i < sizeof modes / sizeof modes[0]; i++) {
        cw_config cfg = cwc_config();
        cfg.io_backend = modes[i];
        cfg.connect_timeout = 2 * CW_SEC;
        cw_run_result res;
        int rc = cwc_run(&cfg, unreachable_root, NULL, &res);
        if (modes[i] == CW_IO_URING && cwc_no_ring(rc))
            continue;
        ck_assert_msg(rc == CW_OK, "io mode %d: %s", (int)modes[i], res.message);
    }
}

/* A send that waited and lost a select to a timer poisons its sink: the
 * next send, of the same task, completes with CW_ERR_CLOSED, not with the
 * CW_ERR_INVALID of a half still carrying another's send (NET-010, NET-013,
 * NET-035). The peer never reads, so the kernel's buffers fill and one of
 * the sends has to wait for room. */
#define LOST_CHUNK (1024 * 1024)
#define LOST_TRIES 128

static void *send_lost_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    pair a = {0}, b = {0};
    cw_listener *l = connect_pair(ctx, &a, &b);
    uint8_t *bytes = calloc(1, LOST_CHUNK);
    ck_assert_ptr_nonnull(bytes);
    cw_iobufs *list = cw_iobufs_new(cwc_backend);
    ck_assert_ptr_nonnull(list);
    cw_iobuf chunk;
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, bytes, LOST_CHUNK, &chunk), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(list, &chunk), CW_OK);
    free(bytes);
    int won = 0;
    for (int i = 0; i < LOST_TRIES && won == 0; i++) {
        cw_wait race[2] = {cw_wait_sink_send(a.sink, list), cw_wait_sleep(ctx, 50 * CW_MSEC)};
        won = cw_select(race, 2);
        if (won == 0)
            ck_assert_int_eq(race[0].result, CW_OK);
    }
    ck_assert_int_eq(won, 1); /* a send waited, and the timer won */
    ck_assert_int_eq(cw_sink_send(a.sink, list), CW_ERR_CLOSED);
    ck_assert_int_eq(cw_sink_send(a.sink, list), CW_ERR_CLOSED);
    cw_iobufs_release(list);
    other_direction_works_then_close(&a, &b, l);
    return NULL;
}

CWC_CASE(network_tcp_send_lost_select_poisons, "network", "NET-010 NET-013 NET-035",
         CWC_NEEDS_NETWORK | CWC_UNLESS_DETERMINISTIC)
{
    cwc_run_ok(NULL, send_lost_root, NULL);
}
