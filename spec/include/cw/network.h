/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/network.h - byte streams between tasks and peers: listeners, dialed
 * connections, each connection split into a sink (what we send) and a
 * stream (what we receive); name resolution; an in-memory channel for
 * testing protocols.
 *
 * A backend without CW_CAP_DETERMINISTIC speaks TCP; a deterministic one
 * keeps an in-memory network inside the run, so that its runs replay.
 * Every call that may wait is a suspension point, and the waiting ones
 * have a cw_wait form usable in cw_select. Rules: spec/18-network.md.
 */
#ifndef CW_NETWORK_H
#define CW_NETWORK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "cw/backend.h"
#include "cw/error.h"
#include "cw/iobuf.h"
#include "cw/select.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Addresses ------------------------------------------------------------------- */

enum cw_addr_family {
    CW_ADDR_IPV4 = 4,
    CW_ADDR_IPV6 = 6,
};

/* An IP address and a port, by value. An IPv4 address uses ip[0..4). */
typedef struct cw_addr {
    uint8_t family; /* enum cw_addr_family */
    uint8_t ip[16];
    uint16_t port;
} cw_addr;

static inline cw_addr cw_addr_ipv4(uint8_t a, uint8_t b, uint8_t c, uint8_t d, uint16_t port)
{
    cw_addr r;
    memset(&r, 0, sizeof r);
    r.family = CW_ADDR_IPV4;
    r.ip[0] = a;
    r.ip[1] = b;
    r.ip[2] = c;
    r.ip[3] = d;
    r.port = port;
    return r;
}

/* `ip` holds 16 bytes in network order. */
static inline cw_addr cw_addr_ipv6(const uint8_t ip[16], uint16_t port)
{
    cw_addr r;
    memset(&r, 0, sizeof r);
    r.family = CW_ADDR_IPV6;
    memcpy(r.ip, ip, 16);
    r.port = port;
    return r;
}

/* 127.0.0.1:port and [::1]:port. */
static inline cw_addr cw_addr_loopback4(uint16_t port)
{
    return cw_addr_ipv4(127, 0, 0, 1, port);
}

static inline cw_addr cw_addr_loopback6(uint16_t port)
{
    static const uint8_t one[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
    return cw_addr_ipv6(one, port);
}

/* Same family, address and port. */
static inline bool cw_addr_equal(const cw_addr *a, const cw_addr *b)
{
    size_t n = a->family == CW_ADDR_IPV4 ? 4 : 16;
    return a->family == b->family && a->port == b->port && memcmp(a->ip, b->ip, n) == 0;
}

/* The length of the longest text cw_addr_format writes, with its NUL. */
#define CW_ADDR_TEXT_MAX 48

/* The standard text form: "127.0.0.1:80", "[::1]:80" (RFC 5952 for IPv6)
 * [NET-002]. Returns `out`. */
static inline char *cw_addr_format(const cw_addr *a, char out[CW_ADDR_TEXT_MAX])
{
    if (a->family == CW_ADDR_IPV4) {
        snprintf(out, CW_ADDR_TEXT_MAX, "%u.%u.%u.%u:%u", a->ip[0], a->ip[1], a->ip[2], a->ip[3],
                 a->port);
        return out;
    }
    /* The longest run of two or more zero groups becomes "::", the first on a tie. */
    unsigned g[8];
    int best = -1, bestlen = 1;
    for (int i = 0; i < 8; i++)
        g[i] = (unsigned)a->ip[2 * i] << 8 | a->ip[2 * i + 1];
    for (int i = 0; i < 8;) {
        int j = i;
        while (j < 8 && g[j] == 0)
            j++;
        if (j - i > bestlen) {
            best = i;
            bestlen = j - i;
        }
        i = j > i ? j : i + 1;
    }
    size_t n = 0;
    out[n++] = '[';
    for (int i = 0; i < 8; i++) {
        if (i == best) {
            n += (size_t)snprintf(out + n, CW_ADDR_TEXT_MAX - n, "::");
            i += bestlen - 1;
            continue;
        }
        bool after_gap = best >= 0 && i == best + bestlen;
        n += (size_t)snprintf(out + n, CW_ADDR_TEXT_MAX - n, "%s%x", i == 0 || after_gap ? "" : ":",
                              g[i]);
    }
    snprintf(out + n, CW_ADDR_TEXT_MAX - n, "]:%u", a->port);
    return out;
}

/* A deterministic network gives dialers loopback ports first .. end - 1, and
 * refuses to bind loopback addresses with those ports [NET-003, NET-007]. */
#define CW_NET_EPHEMERAL_FIRST 32768u
#define CW_NET_EPHEMERAL_END 61000u

/* ---- Objects ----------------------------------------------------------------------- */

typedef struct cw_listener cw_listener; /* accepts connections on one address */
typedef struct cw_sink cw_sink;         /* the sending half of a connection */
typedef struct cw_stream cw_stream;     /* the receiving half of a connection */

/* An accepted connection: the peer's address and the two halves, which the
 * caller then owns (cw_sink_close, cw_stream_close). */
typedef struct cw_conn {
    cw_addr peer;
    cw_sink *sink;
    cw_stream *stream;
} cw_conn;

/* Why a resolution failed: "dns resolution failed: <host>" [NET-022]. */
typedef struct cw_resolve_error {
    char message[320];
} cw_resolve_error;

/* The network entries of a backend, reached through cw_backend.network. It
 * only ever grows at the end; `size` says how far this backend's copy goes. */
struct cw_network_ops {
    uint32_t size; /* sizeof(cw_network_ops) the backend was built with */

    int (*bind)(cw_ctx *ctx, const cw_addr *addr, cw_listener **out);
    int (*local_addr)(const cw_listener *l, cw_addr *out);
    void (*wait_accept)(cw_wait *w, cw_listener *l, cw_conn *out);
    void (*listener_close)(cw_listener *l);
    int (*dial)(cw_ctx *ctx, const cw_addr *addr, cw_sink **sink, cw_stream **stream);

    void (*wait_sink_send)(cw_wait *w, cw_sink *s, const cw_iobufs *bufs);
    int (*sink_send)(cw_sink *s, const cw_iobufs *bufs);
    void (*sink_close)(cw_sink *s);

    void (*wait_stream_recv)(cw_wait *w, cw_stream *s, size_t len, cw_iobufs **out);
    int (*stream_recv)(cw_stream *s, size_t len, cw_iobufs **out);
    size_t (*stream_peek)(cw_stream *s, size_t max, uint8_t *dst);
    void (*stream_close)(cw_stream *s);

    int (*resolve)(cw_ctx *ctx, const char *host, cw_addr *out, size_t cap, size_t *n,
                   cw_resolve_error *err);
    int (*resolver_register)(cw_ctx *ctx, const char *host, const cw_addr *addrs, size_t n);
    int (*mock_channel)(cw_ctx *ctx, cw_sink **sink, cw_stream **stream);

    /* ABI 1.4: network faults (deterministic backends; NET-028). */
    int (*partition)(cw_ctx *ctx, const cw_addr *a, const cw_addr *b);
    int (*repair)(cw_ctx *ctx, const cw_addr *a, const cw_addr *b);
};

#define CW_NETWORK_OPS_HAS(ops, field)                                                             \
    ((ops)->size >= offsetof(cw_network_ops, field) + sizeof((ops)->field) && (ops)->field != NULL)

/* The network entries of `b`, or NULL without them. */
static inline const cw_network_ops *cw__network_ops(const cw_backend *b)
{
    if (!b || !CW_BACKEND_HAS(b, network))
        return NULL;
    return b->network;
}

/* ---- Listeners ---------------------------------------------------------------------- */

/* Listen on `addr`. Port 0 asks the backend for a free port (local_addr
 * tells which). The caller owns `*out` (cw_listener_close).
 * CW_ERR_BIND_FAILED when the address is taken or refused [NET-003]. */
static inline int cw_bind(cw_ctx *ctx, const cw_addr *addr, cw_listener **out)
{
    const cw_network_ops *ops = cw__network_ops(cw__backend_of(ctx));
    *out = NULL;
    return ops ? ops->bind(ctx, addr, out) : CW_ERR_UNSUPPORTED;
}

/* The address the listener listens on, with its real port [NET-004]. */
static inline int cw_listener_local_addr(const cw_listener *l, cw_addr *out)
{
    return cw__backend_of(l)->network->local_addr(l, out);
}

/* Completes with the next connection in `*out` (CW_OK), which the caller
 * then owns [NET-005]. */
static inline cw_wait cw_wait_accept(cw_listener *l, cw_conn *out)
{
    cw_wait w;
    cw__backend_of(l)->network->wait_accept(&w, l, out);
    return w;
}

static inline int cw_listener_accept(cw_listener *l, cw_conn *out)
{
    cw_wait w = cw_wait_accept(l, out);
    return cw_wait_one(&w);
}

/* Stop listening and free the listener; connections not yet accepted are
 * closed. Accepted ones are not affected. */
static inline void cw_listener_close(cw_listener *l)
{
    if (l)
        cw__backend_of(l)->network->listener_close(l);
}

/* ---- Dialing ------------------------------------------------------------------------- */

/* Connect to `addr`; the caller owns both halves. CW_ERR_CONNECTION_FAILED
 * when nothing listens there, CW_ERR_TIMEOUT after the connect timeout
 * [NET-006]. */
static inline int cw_dial(cw_ctx *ctx, const cw_addr *addr, cw_sink **sink, cw_stream **stream)
{
    const cw_network_ops *ops = cw__network_ops(cw__backend_of(ctx));
    *sink = NULL;
    *stream = NULL;
    return ops ? ops->dial(ctx, addr, sink, stream) : CW_ERR_UNSUPPORTED;
}

/* ---- Sinks ------------------------------------------------------------------------------ */

/* Completes once every byte of `bufs` was handed to the connection (CW_OK),
 * or with an error, after which the sink is poisoned [NET-008]. `bufs`
 * stays the caller's and must be left alone until the wait completes or is
 * dropped; dropping it after it waited poisons the sink [NET-010]. */
static inline cw_wait cw_wait_sink_send(cw_sink *s, const cw_iobufs *bufs)
{
    cw_wait w;
    cw__backend_of(s)->network->wait_sink_send(&w, s, bufs);
    return w;
}

/* Send all of `bufs`, within the write timeout (CW_ERR_TIMEOUT). */
static inline int cw_sink_send(cw_sink *s, const cw_iobufs *bufs)
{
    return cw__backend_of(s)->network->sink_send(s, bufs);
}

/* Close the sending half (the peer's stream then sees the end) and free it. */
static inline void cw_sink_close(cw_sink *s)
{
    if (s)
        cw__backend_of(s)->network->sink_close(s);
}

/* ---- Streams ------------------------------------------------------------------------------ */

/* Completes with exactly `len` bytes in a new list `*out` that the caller
 * owns (cw_iobufs_release), made of buffers from the run's network pool
 * [NET-011]; or with an error and `*out` NULL, after which the stream is
 * poisoned [NET-013]. */
static inline cw_wait cw_wait_stream_recv(cw_stream *s, size_t len, cw_iobufs **out)
{
    cw_wait w;
    cw__backend_of(s)->network->wait_stream_recv(&w, s, len, out);
    return w;
}

/* Receive exactly `len` bytes, within the read timeout (CW_ERR_TIMEOUT). */
static inline int cw_stream_recv(cw_stream *s, size_t len, cw_iobufs **out)
{
    return cw__backend_of(s)->network->stream_recv(s, len, out);
}

/* Copy up to `max` bytes that are already buffered, without consuming them,
 * waiting or doing I/O, into dst; returns how many [NET-012]. */
static inline size_t cw_stream_peek(cw_stream *s, size_t max, uint8_t *dst)
{
    return cw__backend_of(s)->network->stream_peek(s, max, dst);
}

/* Close the receiving half and free it. */
static inline void cw_stream_close(cw_stream *s)
{
    if (s)
        cw__backend_of(s)->network->stream_close(s);
}

/* ---- Names --------------------------------------------------------------------------------- */

/* The addresses of `host` (port 0), at most `cap` of them in out[], their
 * count in `*n`. CW_ERR_RESOLVE_FAILED for an unknown name, with the
 * message in `*err` when not NULL [NET-020]. */
static inline int cw_resolve(cw_ctx *ctx, const char *host, cw_addr *out, size_t cap, size_t *n,
                             cw_resolve_error *err)
{
    const cw_network_ops *ops = cw__network_ops(cw__backend_of(ctx));
    *n = 0;
    if (err)
        err->message[0] = '\0';
    return ops ? ops->resolve(ctx, host, out, cap, n, err) : CW_ERR_UNSUPPORTED;
}

/* Deterministic backends: make `host` resolve to addrs[0..n) for the rest of
 * the run; n == 0 removes it. CW_ERR_UNSUPPORTED elsewhere [NET-021]. */
static inline int cw_resolver_register(cw_ctx *ctx, const char *host, const cw_addr *addrs,
                                       size_t n)
{
    const cw_network_ops *ops = cw__network_ops(cw__backend_of(ctx));
    return ops ? ops->resolver_register(ctx, host, addrs, n) : CW_ERR_UNSUPPORTED;
}

/* ---- Mock channel ------------------------------------------------------------------------- */

/* A connected in-memory pair: bytes sent on `*sink` arrive on `*stream`,
 * with the contract of a connection, on every backend [NET-024]. The caller
 * owns both. */
static inline int cw_mock_channel(cw_ctx *ctx, cw_sink **sink, cw_stream **stream)
{
    const cw_network_ops *ops = cw__network_ops(cw__backend_of(ctx));
    *sink = NULL;
    *stream = NULL;
    return ops ? ops->mock_channel(ctx, sink, stream) : CW_ERR_UNSUPPORTED;
}

/* ---- Faults (deterministic backends) ---------------------------------------------------- */

/* Cut the connections and dials between addresses matching `a` and those
 * matching `b` (an unspecified IP or a port 0 matches any) until
 * cw_network_repair: their bytes are held and such dials refused
 * [NET-028, NET-029]. CW_ERR_INVALID for a NULL or unknown-family pattern;
 * CW_ERR_UNSUPPORTED on a backend without CW_CAP_DETERMINISTIC [NET-033]. */
static inline int cw_network_partition(cw_ctx *ctx, const cw_addr *a, const cw_addr *b)
{
    const cw_network_ops *ops = cw__network_ops(cw__backend_of(ctx));
    return ops && CW_NETWORK_OPS_HAS(ops, partition) ? ops->partition(ctx, a, b)
                                                      : CW_ERR_UNSUPPORTED;
}

/* Remove the partition between `a` and `b` (either order); the bytes it
 * held arrive [NET-030]. Returns as cw_network_partition. */
static inline int cw_network_repair(cw_ctx *ctx, const cw_addr *a, const cw_addr *b)
{
    const cw_network_ops *ops = cw__network_ops(cw__backend_of(ctx));
    return ops && CW_NETWORK_OPS_HAS(ops, repair) ? ops->repair(ctx, a, b) : CW_ERR_UNSUPPORTED;
}

#ifdef __cplusplus
}
#endif
#endif
