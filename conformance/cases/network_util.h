/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_util.h - helpers the network cases share: text sends and
 * receives, and a connection made through a listener.
 */
#ifndef CWC_NETWORK_UTIL_H
#define CWC_NETWORK_UTIL_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <string.h>
#include <sys/socket.h>

#include "cases/util.h"

/* Send `len` bytes as one chunk; the send's result. */
static inline int send_data(cw_sink *s, const void *data, size_t len)
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf b;
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, data, len, &b), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
    int rc = cw_sink_send(s, l);
    cw_iobufs_release(l);
    return rc;
}

static inline int send_text(cw_sink *s, const char *text)
{
    return send_data(s, text, strlen(text));
}

/* A plain socket of the process connected to the IPv4 loopback listener
 * at `where` (on loopback the connect completes at once). */
static inline int plain_peer_of(const cw_addr *where)
{
    int peer = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    ck_assert_int_ge(peer, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET,
                             .sin_port = htons(where->port),
                             .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    ck_assert_int_eq(connect(peer, (struct sockaddr *)&sa, sizeof sa), 0);
    return peer;
}

/* A loopback listener of the run (`*l`), a plain peer connected to it
 * (the descriptor returned) and the run's side of that connection, `*c`. */
static inline int plain_peer_accepted(cw_ctx *ctx, cw_listener **l, cw_conn *c)
{
    cw_addr any = cw_addr_loopback4(0), where;
    ck_assert_int_eq(cw_bind(ctx, &any, l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(*l, &where), CW_OK);
    int peer = plain_peer_of(&where);
    ck_assert_int_eq(cw_listener_accept(*l, c), CW_OK);
    return peer;
}

/* The plain peer resets its connection: SO_LINGER of zero, then close. */
static inline void plain_peer_reset(int peer)
{
    struct linger reset = {1, 0};
    ck_assert_int_eq(setsockopt(peer, SOL_SOCKET, SO_LINGER, &reset, sizeof reset), 0);
    ck_assert_int_eq(close(peer), 0);
}

/* A connection through a listener: a's sink reaches b's stream and back. */
struct half_pair {
    cw_sink *sink;
    cw_stream *stream;
};

/* The next connection the listener `l` accepts, into b. */
static inline void accept_into(cw_listener *l, struct half_pair *b)
{
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    b->sink = c.sink;
    b->stream = c.stream;
}

/* One more connection through the listener `l`: a dials, b is accepted. */
static inline void connect_through(cw_ctx *ctx, cw_listener *l, struct half_pair *a,
                                   struct half_pair *b)
{
    cw_addr where;
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    ck_assert_int_eq(cw_dial(ctx, &where, &a->sink, &a->stream), CW_OK);
    accept_into(l, b);
}

static inline cw_listener *connect_halves(cw_ctx *ctx, struct half_pair *a, struct half_pair *b)
{
    cw_addr any = cw_addr_loopback4(0);
    cw_listener *l;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    connect_through(ctx, l, a, b);
    return l;
}

static inline void close_halves(struct half_pair *p)
{
    if (p->sink)
        cw_sink_close(p->sink);
    if (p->stream)
        cw_stream_close(p->stream);
}

/* Nothing of the stream visible yet: peek shows nothing and a poll of a
 * recv finds nothing (and, never having waited, poisons nothing). */
static inline void expect_nothing_yet(cw_stream *s, size_t len)
{
    uint8_t seen[16];
    ck_assert_uint_eq(cw_stream_peek(s, sizeof seen, seen), 0);
    cw_iobufs *got = NULL;
    cw_wait w = cw_wait_stream_recv(s, len, &got);
    ck_assert_int_eq(cw_poll(&w, 1), CW_ERR_WOULD_BLOCK);
    ck_assert_ptr_null(got);
}

/* Receive exactly `len` bytes and require them equal to `want`. */
static inline void recv_data(cw_stream *s, const void *want, size_t len)
{
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(s, len, &got), CW_OK);
    ck_assert(cw_iobufs_equal_bytes(got, want, len));
    cw_iobufs_release(got);
}

static inline void recv_text(cw_stream *s, const char *want)
{
    recv_data(s, want, strlen(want));
}

#endif
