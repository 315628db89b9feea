/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * net.h - private to the network: listeners, the two halves of a
 * connection, the run's network state, and the two transports.
 *
 * A connection's halves are the same objects on every backend. What
 * differs is where bytes come from and go to: in memory (pipe.c: the
 * deterministic network and the mock channel) a sink appends straight to
 * its peer stream's buffer, where the bytes of a dialed connection may
 * stay in flight for the run's network latency before a recv can see
 * them; over TCP (native/tcp.c) a stream fills its buffer from a
 * non-blocking socket and a sink writes to it, and the reactor wakes the
 * waiting tasks when the socket is ready.
 *
 * Everything here is guarded by the runtime's lock (rt->lock), like the
 * core's channels, but for the halves of a TCP connection: those are under
 * the stripe their transport chose (`guard`, core/guard.c), which the
 * worker that polls the reactor takes before it looks at the socket's
 * waiters. Closing a half takes both, the runtime's lock first: it also
 * unlinks the half from the run's lists.
 */
#ifndef CW_NET_H
#define CW_NET_H

#include <sys/socket.h>

#include "core/ext.h"

typedef struct cw_net cw_net;
typedef struct cw_sock cw_sock;

/* Whose call a half carries (turn.c) [NET-035, NET-010]. */
typedef struct cw_turn {
    uint64_t busy;    /* the ticket of the call that waited and has not completed */
    uint64_t live;    /* the ticket of the call waiting or under way now, else 0 */
    uint64_t tickets; /* the last ticket handed out */
} cw_turn;

/* What a call's try found, to put back when it neither completes nor waits. */
typedef struct cw_turn_mark {
    uint64_t busy, live;
} cw_turn_mark;

/* Bytes of one send in flight to a memory stream [NET-027]: they become
 * visible to recv and peek at `at` on the virtual clock. */
typedef struct cw_segment {
    cw_time at;
    size_t len;
    bool eof; /* the sink closed after this send: the end arrives with it */
} cw_segment;

/* The receiving half. buf[off .. off + len) are bytes received and not yet
 * taken by a recv: what peek shows. Over TCP a recv that finds nothing
 * buffered reads into `direct` instead, the pooled buffer it will return
 * (its first direct.len bytes are then what peek shows, and len is 0). */
struct cw_stream {
    cw_object hdr;
    cw_rt *rt;
    cw_sock *sock;          /* TCP: the socket; NULL in memory */
    struct cw_sink *writer; /* memory: the sink that fills this buffer, NULL once closed */
    cw_addr remote;         /* audit: the dial target, or the accepted peer */
    cw_addr local;          /* memory, a dialed connection: the other end (for partitions) */
    struct cw_sink *twin;   /* memory, a dialed connection: the sink of the same side */
    uint8_t *buf;
    size_t off, len, cap;
    cw_iobuf_mut direct; /* TCP: data NULL unless a recv reads into it */
    size_t direct_for;   /* the length of that recv */
    int guard;           /* its lock (core/ext.h): a stripe over TCP, else the runtime's */
    bool eof;            /* nothing more will arrive */
    bool poisoned;       /* every later recv is CW_ERR_CLOSED */
    cw_turn turn;        /* whose recv it carries */
    cw_list waiters;     /* recv waits */
    cw_list link;        /* net->streams */
    /* memory, a dialed connection's stream: its bytes take the run's
     * network latency and jitter (pipe.c). Those in flight follow the
     * ones that arrived, in buf[off + len .. off + len + flying): arriving
     * only moves that boundary, so no byte is copied twice. */
    bool delayed;
    size_t flying;    /* bytes in flight, after the `len` that arrived */
    cw_segment *segs; /* in flight, oldest first: segs[seg_head .. + nsegs) */
    size_t seg_head, nsegs, seg_cap;
    cw_time last_arrival; /* of the latest send: the next one arrives no earlier */
    cw_wait arrival;      /* an alarm with no task, armed for the oldest segment */
    bool held;            /* a partition cuts the connection: nothing arrives [NET-029] */
    bool end_held;        /* the sink closed while held: the end arrives at the repair */
};

/* The sending half. */
struct cw_sink {
    cw_object hdr;
    cw_rt *rt;
    cw_sock *sock;            /* TCP: the socket; NULL in memory */
    struct cw_stream *reader; /* memory: where bytes go, NULL once that stream closed */
    struct cw_stream *twin;   /* memory, a dialed connection: the stream of the same side */
    cw_addr remote;
    int guard; /* as for streams */
    bool poisoned;
    cw_turn turn;    /* whose send it carries */
    size_t sent;     /* TCP: bytes of the current send already written */
    cw_list waiters; /* send waits */
    cw_list link;    /* net->sinks */
};

/* A dialed connection waiting in a memory listener's queue. */
typedef struct cw_pending {
    cw_conn conn;
    cw_list link;
} cw_pending;

struct cw_listener {
    cw_object hdr;
    cw_rt *rt;
    cw_addr addr;    /* with the real port */
    cw_sock *sock;   /* TCP: the listening socket; NULL in memory */
    cw_list pending; /* memory: cw_pending, oldest first */
    cw_list waiters; /* accept waits */
    cw_list link;    /* net->listeners */
};

/* A run's network, made by its first call (run.c): what every backend's
 * has. The rest (a resolver's table, partitions, dialer ports, lookups
 * under way) is the backend's, behind `impl`. */
struct cw_net {
    cw_rt *rt;
    cw_list listeners, sinks, streams;
    cw_metric *inbound, *outbound, *inbound_bytes, *outbound_bytes;
    const struct cw_net_driver *driver; /* the backend's (cw_ext_driver) */
    void *impl;                         /* the driver's state, made by its open */
};

/* What a backend's network does (deterministic/memory_network.c,
 * native/tcp.c), given to the run with cw_ext_set_driver before its first
 * task. The halves and listeners call the transport entries only for an
 * object with a socket (sock not NULL), so a backend whose connections are
 * in-memory pipes leaves them NULL. */
typedef struct cw_net_driver {
    /* The run's network was just made: make net->impl, and adopt what the
     * run inherited. false, with nothing changed, when memory is exhausted. */
    bool (*open)(cw_net *net);
    /* Every object of the run's network was freed: free net->impl. */
    void (*close)(cw_net *net);
    /* Accept one connection if one is ready: CW_OK, CW_ERR_WOULD_BLOCK, or an error. */
    int (*accept)(cw_listener *l, cw_conn *out);
    /* Read into the stream's buffer until `want` bytes are buffered or the
     * socket has none: sets eof at the end of the stream or on an error;
     * false when there was no memory to read into. */
    bool (*fill)(cw_stream *s, size_t want);
    /* Like fill for a stream with nothing in `buf`, reading into s->direct,
     * made for exactly `want` bytes; false when no pooled buffer could be
     * had (then fill is the way). */
    bool (*fill_direct)(cw_stream *s, size_t want);
    /* Write what is left of `bufs` after s->sent: CW_OK when all of it went,
     * CW_ERR_WOULD_BLOCK, or CW_ERR_SEND_FAILED. */
    int (*write)(cw_sink *s, const cw_iobufs *bufs);
    /* With rt->lock held, which it may let go meanwhile: return once no
     * system call on the socket is under way without the lock (fill and
     * write may make theirs so). Closing a half over a socket calls it
     * first. */
    void (*quiesce)(cw_sock *k);
    /* The object owning the socket closes: let the socket go. */
    void (*release_listener)(cw_sock *k);
    void (*release_stream)(cw_sock *k);
    void (*release_sink)(cw_sock *k);
} cw_net_driver;

/* The network entries every reference backend shares, as designated
 * initializers: the halves, the listeners' accept and close, and the mock
 * channel. A backend's table lists these, then what is its own (bind,
 * dial, the resolver, and on a simulated network partitions), so a new
 * call both backends make the same way is one line here. */
#define CW_NETWORK_ENTRIES                                                                         \
    .size = sizeof(cw_network_ops), .local_addr = cw_net_local_addr,                               \
    .wait_accept = cw_net_wait_accept, .listener_close = cw_net_listener_close,                    \
    .wait_sink_send = cw_net_sink_wait_send, .sink_send = cw_net_sink_send,                        \
    .sink_close = cw_net_sink_close, .wait_stream_recv = cw_net_stream_wait_recv,                  \
    .stream_recv = cw_net_stream_recv, .stream_peek = cw_net_stream_peek,                          \
    .stream_close = cw_net_stream_close, .mock_channel = cw_mem_mock_channel

/* run.c */
/* With rt->lock held: the run's network, made on first use with the
 * driver its backend chose; freed by its close hook at the run's end.
 * NULL when memory is exhausted. Every entry point that can be a run's
 * first network call opens it; the rest of the layer reaches it through
 * an object it made, with cw_net_of. */
cw_net *cw_net_open(cw_rt *rt);
/* The run's network, once cw_net_open made it. */
cw_net *cw_net_of(cw_rt *rt);
void cw_net_audit_result(cw_rt *rt, const char *label, const cw_addr *a, int rc);
/* A wait of the network, bound to its object's runtime. */
void cw_net_wait_init(cw_wait *w, cw_rt *rt, const cw_backend *b, const cw_wait_ops *ops,
                      void *object);
/* Wait for `w`, bounded by `timeout` (CW_FOREVER: none); CW_ERR_TIMEOUT
 * when the time ran out first. */
int cw_net_wait_bounded(cw_rt *rt, cw_wait *w, cw_duration timeout);

/* turn.c. A call with `*ticket` (0 at its first try: it is given one)
 * tries on a half: CW_OK, and it is under way, with what to put back in
 * `*was`; CW_ERR_INVALID when another call waits or is under way there
 * [NET-035]; CW_ERR_CLOSED when one was given up there [NET-010]. */
int cw_turn_begin(cw_turn *t, uint64_t *ticket, cw_turn_mark *was);
/* The call neither completed nor waits: the half as before its try,
 * but still `busy` with it if part of it happened (`started`). */
void cw_turn_pause(cw_turn *t, cw_turn_mark was, bool started);
/* The call completed, either way: the half takes the next. */
void cw_turn_end(cw_turn *t);
/* The call waits (its wait armed), or no longer (disarmed: completed or
 * given up, in which case it stays `busy` for the next call to find). */
void cw_turn_arm(cw_turn *t, uint64_t ticket);
void cw_turn_disarm(cw_turn *t, uint64_t ticket);

/* stream.c and sink.c: halves with no transport yet; the caller links
 * them. NULL when memory is exhausted. */
cw_stream *cw_stream_new(cw_rt *rt, const cw_backend *b, const cw_addr *remote);
cw_sink *cw_sink_new(cw_rt *rt, const cw_backend *b, const cw_addr *remote);
/* run.c: a sink and a stream to `remote`, both or neither (false, both
 * NULL, when memory is exhausted); with rt->lock held. */
bool cw_halves_new(cw_rt *rt, const cw_backend *b, const cw_addr *remote, cw_sink **sink,
                   cw_stream **stream);
void cw_stream_free(cw_stream *s);
void cw_sink_free(cw_sink *s);
/* Make room for `more` bytes after the buffered ones. false on NOMEM. */
bool cw_stream_reserve(cw_stream *s, size_t more);
void cw_net_stream_wait_recv(cw_wait *w, cw_stream *s, size_t len, cw_iobufs **out);
int cw_net_stream_recv(cw_stream *s, size_t len, cw_iobufs **out);
size_t cw_net_stream_peek(cw_stream *s, size_t max, uint8_t *dst);
void cw_net_stream_close(cw_stream *s);
void cw_net_sink_wait_send(cw_wait *w, cw_sink *s, const cw_iobufs *bufs);
int cw_net_sink_send(cw_sink *s, const cw_iobufs *bufs);
void cw_net_sink_close(cw_sink *s);

/* pipe.c: in-memory pipes, and the mock channel (one pipe). */
int cw_mem_mock_channel(cw_ctx *ctx, cw_sink **sink, cw_stream **stream);
/* Connect `sink` to `stream` in memory. */
void cw_mem_link(cw_sink *sink, cw_stream *stream);
/* Hand the bytes of a send to a memory stream: visible at once, or in
 * flight until the run's latency passed for a delayed stream. false on
 * NOMEM. */
bool cw_mem_deliver(cw_stream *s, const cw_iobufs *bufs);
/* The sink of a memory stream closed: the stream ends once what is in
 * flight arrived. */
void cw_mem_writer_closed(cw_stream *s);
/* The stream closes: drop what is in flight and its alarm. */
void cw_mem_drop_flight(cw_stream *s);
/* A dialed connection's stream: its bytes will take the run's latency. */
bool cw_pipe_delay(cw_stream *s); /* false: memory exhausted */

/* A send on a memory sink: CW_OK once its bytes were handed to the peer
 * stream, CW_ERR_NOMEM when they found no room there [NET-034], or
 * CW_ERR_SEND_FAILED when that stream is gone or the send reset the
 * connection (NET-014, NET-032). */
int cw_mem_send(cw_sink *s, const cw_iobufs *bufs);
/* A partition cuts the stream's connection: hold its bytes [NET-029]. The
 * simulated network decides which (deterministic/partition.c). */
void cw_mem_hold(cw_stream *s);
/* No partition cuts a held stream any more: what is due arrives, and the
 * rest at its time [NET-030]. */
void cw_mem_release(cw_stream *s);

/* listener.c; cw_listener_new gives NULL when memory is exhausted. */
cw_listener *cw_listener_new(cw_rt *rt, const cw_backend *b, const cw_addr *addr);
int cw_net_local_addr(const cw_listener *l, cw_addr *out);
void cw_net_wait_accept(cw_wait *w, cw_listener *l, cw_conn *out);
void cw_net_listener_close(cw_listener *l);
void cw_listener_free(cw_listener *l);

/* addr.c: cw_addr and struct sockaddr. */
socklen_t cw_addr_to_sockaddr(const cw_addr *a, struct sockaddr_storage *out);
void cw_addr_from_sockaddr(const struct sockaddr *sa, cw_addr *out);
bool cw_addr_is_loopback(const cw_addr *a);

#endif
