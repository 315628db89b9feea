/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * tcp.c - the native backend's transport: non-blocking TCP sockets in the
 * reactor's epoll set.
 *
 * A connection's socket and its two halves are under one of the run's
 * stripes (core/guard.c) rather than the runtime's lock, so that tasks
 * serving different connections on different workers share no lock.
 * The reactor watches every socket edge-triggered and, on an event, takes
 * the socket's lock, counts the event and wakes the half's waiters. A half
 * makes its recv or send with the locks let go (cw_rt_unlock_in_try), so
 * that other tasks do not queue behind its system calls, which are most
 * of the time a task holds a lock for. When the kernel says EAGAIN, the
 * half notes how many events it had counted before the call; the select
 * then tries again with the locks held throughout, and the half makes no
 * new call unless an event was counted since, so the wait it arms cannot
 * miss one. No worker thread ever blocks in the kernel for a socket.
 *
 * A call under way without the locks still uses the socket and the half's
 * buffer: closing a half first waits for it (quiesce), and the halves'
 * `busy` marks keep a second task's recv or send off the same half
 * meanwhile (network/).
 *
 * When the run has the network's io_uring (net_ring.c), a connection's
 * stream receives through it instead: a fill that needs bytes queues one
 * receive into the stream's buffer, past what is buffered, and the task
 * waits for its completion rather than for an event, so no recv is ever
 * made to hear EAGAIN. The socket then stays in epoll for its sends only.
 * Nothing moves the buffer while a receive is in flight (a recv takes
 * bytes from the front, which leaves where the kernel writes alone), and
 * closing the stream cancels it and waits for the kernel to let go.
 * A send goes out by calls as over epoll until the socket has taken part
 * of it and is full: the rest then goes to the ring, which completes it
 * as the peer reads (ring_send).
 * A listener accepts and a dial connects through the same ring: an
 * accept call that finds nothing queues one accept, whose connection
 * waits in the listener for the next call (or is closed with the
 * listener), and a dial waits for its connect's completion.
 */
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/uio.h>
#include <unistd.h>

#include "metrics/metrics.h"
#include "native/native.h"
#include "native/net_ring.h"
#include "native/os.h"

/* One direction's readiness, as the half making calls sees it. */
typedef struct readiness {
    uint64_t events;  /* the reactor's events for this direction, counted */
    uint64_t stalled; /* `events` before the call that left it blocked */
    bool blocked;     /* the last call said EAGAIN, or moved fewer bytes than asked */
    bool ended;       /* an event said the peer closed or the socket failed */
} readiness;

/* A listener's accept through the ring: the connection the kernel took
 * waits here for the accept call that comes for it. */
typedef struct ring_accept {
    cw_net_op op;
    cw_sock *listener;
    int fd;    /* accepted and not handed out yet; -1: none */
    int error; /* errno of an accept that failed, for the next call; 0: none */
    struct sockaddr_storage peer;
    socklen_t peer_len;
} ring_accept;

enum { SEND_IOV = 64 }; /* chunks one send hands over; the rest go in the next */

/* A sink's send through the ring: the rest of a send already under way
 * that the socket could not take at once. The kernel sends it as room
 * comes and completes once, where over epoll the task would wake and
 * send again each time the socket drained a little. A send that has sent
 * nothing waits for room as over epoll instead, since giving it up must
 * then change nothing (NET-010), which bytes handed to the kernel would.
 * The send holds references to the chunks it names: one given up may have
 * its bytes released by its caller while the kernel still reads them. */
typedef struct ring_send {
    cw_net_op op;
    cw_sock *sock;
    struct msghdr msg;
    struct iovec iov[SEND_IOV];
    cw_iobuf held[SEND_IOV];
    size_t nheld;
    int res;     /* what the kernel posted, until the write it serves takes it */
    bool landed; /* `res` waits to be taken */
} ring_send;

struct cw_sock {
    cw_reactor_source src; /* first: the reactor hands it back */
    cw_rt *rt;
    cw_list *readers; /* the waiters of the stream or listener, NULL once closed */
    cw_list *writers; /* the waiters of the sink, NULL once closed */
    readiness in, out;
    cw_net_ring *ring; /* a connection's receives go through it; NULL: recv calls */
    cw_net_op rx;      /* the receive in flight, through `ring` */
    cw_stream *rx_to;  /* the stream it fills */
    ring_send *tx;     /* the sink's sends through `ring`, made at the first; NULL: none yet */
    ring_accept *acc;  /* a listener's accepts through `ring`; NULL: accept calls */
    int guard;         /* the lock of its halves (core/guard.c): a stripe, or rt->lock */
    int calls;         /* system calls under way without its lock */
    int refs;          /* halves (or the listener) still open */
    bool dead;         /* closed: an event still on its way is ignored */
};

static cw_reactor *reactor_of(cw_rt *rt)
{
    return &cw_container_of(rt, cw_native, rt)->reactor;
}

static cw_net_ring *net_ring_of(cw_rt *rt)
{
    return cw_container_of(rt, cw_native, rt)->net_ring;
}

static void wake_waiters(cw_sock *k, uint32_t ev)
{
    bool in = ev & (EPOLLIN | EPOLLRDHUP | EPOLLHUP | EPOLLERR);
    bool out = ev & (EPOLLOUT | EPOLLHUP | EPOLLERR);
    k->in.events += in;
    k->out.events += out;
    k->in.ended |= (ev & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) != 0;
    k->out.ended |= (ev & (EPOLLHUP | EPOLLERR)) != 0;
    if (k->readers && in && !k->ring) /* through a ring, its completion wakes them */
        cw_waiters_wake(k->rt, k->readers);
    if (k->writers && out)
        cw_waiters_wake(k->rt, k->writers);
}

/* On the worker polling the reactor, with rt->lock held; a connection's
 * halves are under their stripe, taken too (after rt->lock, in order). */
static void sock_ready(cw_reactor_source *src, uint32_t ev)
{
    cw_sock *k = (cw_sock *)src;
    if (k->dead)
        return;
    bool striped = k->guard >= 0;
    if (striped)
        cw_guard_lock(k->rt, k->guard);
    wake_waiters(k, ev);
    if (striped)
        cw_guard_unlock(k->rt, k->guard);
}

/* ---- System calls without the lock ---------------------------------------------------- */

/* With k's guard held: false when the last call in this direction left
 * it drained and no event came since, so another would say EAGAIN. */
static bool may_progress(const readiness *r)
{
    return !r->blocked || r->events != r->stalled;
}

typedef struct sys_call {
    ssize_t result;
    int error; /* errno when result < 0 */
} sys_call;

static bool would_block(sys_call c)
{
    return c.result < 0 && (c.error == EAGAIN || c.error == EWOULDBLOCK);
}

/* Begin a call in direction `r`, with the select's locks held (among
 * them k's guard): let them go. */
static uint64_t call_begin(cw_sock *k, const readiness *r)
{
    uint64_t seen = r->events;
    k->calls++;
    cw_rt_unlock_in_try(k->rt);
    return seen;
}

/* Whether the socket is known to be drained in direction `r` after a
 * call: it said EAGAIN or, for a receive that asked for `asked` bytes
 * (0: a send, below), it got some but fewer. A non-blocking TCP recv
 * copies all the socket holds up to what is asked, so a short one found
 * the queue empty, as EAGAIN would have: the next would say EAGAIN unless
 * an event came since. Counting it so saves that call, one per message a
 * task waits for; the reactor's edge for bytes that come later is counted
 * as for EAGAIN. Not once the peer closed or the socket failed: the next
 * call then says so, and the edge that told of it may have been counted
 * already. */
static bool drained(const readiness *r, sys_call c, size_t asked)
{
    return would_block(c) || (c.result > 0 && (size_t)c.result < asked && !r->ended);
}

/* End it: the locks taken back, the readiness noted. */
static sys_call call_end(cw_sock *k, readiness *r, uint64_t seen, ssize_t result, size_t asked)
{
    sys_call c = {result, result < 0 ? errno : 0};
    cw_rt_relock_in_try(k->rt);
    k->calls--;
    r->blocked = drained(r, c, asked);
    r->stalled = seen;
    return c;
}

static size_t iov_len(const struct msghdr *m)
{
    size_t len = 0;
    for (size_t i = 0; i < m->msg_iovlen; i++)
        len += m->msg_iov[i].iov_len;
    return len;
}

static sys_call sock_recv(cw_sock *k, void *buf, size_t len)
{
    uint64_t seen = call_begin(k, &k->in);
    return call_end(k, &k->in, seen, cw_os.recv(k->src.fd, buf, len, 0), len);
}

static sys_call sock_recvmsg(cw_sock *k, struct msghdr *m)
{
    uint64_t seen = call_begin(k, &k->in);
    return call_end(k, &k->in, seen, cw_os.recvmsg(k->src.fd, m, 0), iov_len(m));
}

/* A short send is left to the EAGAIN of the next: it comes only when the
 * socket's buffer is full, not once per message, so counting it would
 * save little. */
static sys_call sock_sendmsg(cw_sock *k, const struct msghdr *m)
{
    uint64_t seen = call_begin(k, &k->out);
    return call_end(k, &k->out, seen, cw_os.sendmsg(k->src.fd, m, MSG_NOSIGNAL), 0);
}

/* With rt->lock and k's guard held (a half closing): wait until no call
 * on `k` is under way without them. Such a call takes microseconds (the
 * socket does not block), so the closing task lets the locks go and
 * yields the CPU until it is over. */
static void sock_quiesce(cw_sock *k)
{
    cw_lockset both = cw_lockset_with_rt(k->guard);
    while (k->calls > 0) {
        cw_lockset_unlock(k->rt, &both);
        sched_yield();
        cw_lockset_lock(k->rt, &both);
    }
}

static void sock_release(cw_reactor_source *src)
{
    free(src);
}

/* A socket for `fd`, watched by the reactor, or NULL (and fd closed)
 * when memory, ours or epoll's (ENOMEM, ENOSPC), is exhausted. */
static cw_sock *sock_new(cw_rt *rt, int fd, int refs)
{
    cw_sock *k = calloc(1, sizeof *k);
    if (!k) {
        close(fd);
        return NULL;
    }
    k->src.ready = sock_ready;
    k->src.release = sock_release;
    k->src.fd = fd;
    k->rt = rt;
    k->guard = CW_GUARD_RT;
    k->refs = refs;
    if (cw_reactor_watch(reactor_of(rt), &k->src) != CW_OK) {
        close(fd);
        free(k);
        return NULL;
    }
    return k;
}

static void sock_unref(cw_sock *k)
{
    if (--k->refs > 0)
        return;
    k->dead = true;
    int fd = k->src.fd; /* the reactor may free `k` as soon as it is forgotten */
    cw_reactor_forget(reactor_of(k->rt), &k->src);
    close(fd);
}

static void release_listener(cw_sock *k)
{
    k->readers = NULL;
    ring_accept *a = k->acc;
    if (a) {
        cw_net_ring_settle(k->ring, &a->op); /* before `a` goes */
        /* Taken from the kernel's queue but never handed out: closed, as
         * the ones still queued are [NET-026]. */
        if (a->fd >= 0)
            close(a->fd);
        free(a);
    }
    sock_unref(k);
}

static void release_stream(cw_sock *k)
{
    k->readers = NULL;
    if (k->ring)
        cw_net_ring_settle(k->ring, &k->rx); /* before the stream's buffer goes */
    sock_unref(k);
}

static void ring_send_unhold(ring_send *tx);

static void release_sink(cw_sock *k)
{
    k->writers = NULL;
    ring_send *tx = k->tx;
    if (tx) {
        cw_net_ring_settle(k->ring, &tx->op); /* before the chunks go */
        ring_send_unhold(tx);
        free(tx);
        k->tx = NULL;
    }
    if (k->refs > 1)
        shutdown(k->src.fd, SHUT_WR); /* the peer sees the end while we still read */
    sock_unref(k);
}

/* The options of the run (cw_config): failures only cost the option. */
static void configure(cw_rt *rt, int fd)
{
    int one = 1;
    if (rt->cfg.tcp_nodelay)
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (rt->cfg.zero_linger) {
        struct linger lg = {1, 0};
        (void)setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
    }
}

/* The kernel is done with the receive into k->rx_to's buffer: the bytes
 * follow what was buffered when it was queued, where they landed. With
 * rt->lock held. One cancelled (the stream closing) or interrupted
 * changes nothing: a recv that still waits queues another. */
static void received(cw_net_op *op, int res)
{
    cw_sock *k = cw_container_of(op, cw_sock, rx);
    cw_stream *s = k->rx_to;
    if (res > 0)
        s->len += (size_t)res;
    else if (res == 0 || (res != -EINTR && res != -EAGAIN && res != -ECANCELED))
        s->eof = true; /* the end, a reset or an error, as for a recv call */
    if (k->readers)
        cw_waiters_wake(k->rt, k->readers);
}

/* A connection's stream receives through the run's ring, if it has one;
 * the socket then stays in epoll for its sends alone, so that arriving
 * bytes do not wake the reactor for nothing. */
static void receive_through_ring(cw_rt *rt, cw_sock *k, cw_stream *s)
{
    k->ring = net_ring_of(rt);
    if (!k->ring)
        return;
    k->rx.done = received;
    k->rx_to = s;
    cw_reactor_watch_output(reactor_of(rt), &k->src);
}

/* The two halves over one socket; with rt->lock held. Without memory for
 * them, CW_ERR_NOMEM and the socket closed. */
static int make_halves(cw_rt *rt, const cw_backend *b, cw_sock *k, const cw_addr *remote,
                       cw_sink **sink, cw_stream **stream)
{
    if (!cw_halves_new(rt, b, remote, sink, stream)) {
        k->refs = 1;
        k->readers = k->writers = NULL;
        sock_unref(k);
        return CW_ERR_NOMEM;
    }
    (*sink)->sock = k;
    (*stream)->sock = k;
    k->writers = &(*sink)->waiters;
    k->readers = &(*stream)->waiters;
    k->refs = 2;
    receive_through_ring(rt, k, *stream);
    /* A ring's completions are reaped under rt->lock, so a connection that
     * receives through one stays under it; any other needs only its own. */
    if (!k->ring)
        k->guard = cw_rt_stripe_next(rt);
    (*sink)->guard = (*stream)->guard = k->guard;
    return CW_OK;
}

/* ---- Listening -------------------------------------------------------------------------- */

/* The kernel accepted a connection for the listener, or could not: with
 * rt->lock held. An accept cancelled (the listener closing), interrupted
 * or whose connection was reset meanwhile leaves nothing behind: the next
 * accept call queues another. */
static void accepted(cw_net_op *op, int res)
{
    ring_accept *a = cw_container_of(op, ring_accept, op);
    if (res >= 0)
        a->fd = res;
    else if (res != -ECANCELED && res != -EINTR && res != -ECONNABORTED)
        a->error = -res;
    if (a->listener->readers)
        cw_waiters_wake(a->listener->rt, a->listener->readers);
}

/* A listener accepts through the run's ring, if it has one. Without
 * memory for that it accepts with calls, which behave the same. */
static void accept_through_ring(cw_rt *rt, cw_sock *k)
{
    cw_net_ring *ring = net_ring_of(rt);
    ring_accept *a = ring ? calloc(1, sizeof *a) : NULL;
    if (!a)
        return;
    a->op.done = accepted;
    a->listener = k;
    a->fd = -1;
    k->ring = ring;
    k->acc = a;
    cw_reactor_watch_output(reactor_of(rt), &k->src); /* a listener has no output: unwatched */
}

/* A listener over the bound socket `fd`, which it owns from now on;
 * with rt->lock held. */
static int listen_on(cw_rt *rt, const cw_backend *b, int fd, const cw_addr *bound,
                     cw_listener **out)
{
    cw_listener *l = cw_net_open(rt) ? cw_listener_new(rt, b, bound) : NULL;
    if (!l) {
        close(fd);
        return CW_ERR_NOMEM;
    }
    cw_sock *k = sock_new(rt, fd, 1);
    if (!k) {
        cw_listener_free(l);
        return CW_ERR_NOMEM;
    }
    l->sock = k;
    k->readers = &l->waiters;
    *out = l;
    accept_through_ring(rt, k);
    return CW_OK;
}

static int tcp_bind(cw_ctx *ctx, const cw_addr *addr, cw_listener **out)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task_self(rt, "cw_bind");
    if (addr->family != CW_ADDR_IPV4 && addr->family != CW_ADDR_IPV6)
        return CW_ERR_INVALID;
    struct sockaddr_storage ss, got;
    socklen_t len = cw_addr_to_sockaddr(addr, &ss), gotlen = sizeof got;
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return CW_ERR_BIND_FAILED;
    /* SO_REUSEADDR lets a port in TIME_WAIT be bound again; a port some
     * socket listens on still refuses [NET-003]. */
    int one = 1;
    (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
    if (ss.ss_family == AF_INET6)
        (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
    if (bind(fd, (struct sockaddr *)&ss, len) != 0 || listen(fd, SOMAXCONN) != 0 ||
        getsockname(fd, (struct sockaddr *)&got, &gotlen) != 0) {
        close(fd);
        return CW_ERR_BIND_FAILED;
    }
    cw_addr bound;
    cw_addr_from_sockaddr((struct sockaddr *)&got, &bound);
    cw_rt_lock(rt);
    int rc = listen_on(rt, cw_ctx_backend(ctx), fd, &bound, out);
    cw_rt_unlock(rt);
    return rc;
}

/* An accept that failed: no descriptor for it now leaves the connection
 * queued in the kernel for a later accept [NAT-007]. */
static int accept_failed(int error)
{
    if (error == EMFILE || error == ENFILE || error == ENOBUFS || error == ENOMEM)
        return CW_ERR_NOMEM;
    return CW_ERR_CLOSED;
}

/* The connection on `fd` becomes the accept's two halves. */
static int adopt(cw_listener *l, int fd, const struct sockaddr *peer, cw_conn *out)
{
    configure(l->rt, fd);
    cw_sock *k = sock_new(l->rt, fd, 2);
    if (!k)
        return CW_ERR_NOMEM; /* no memory for it, or no room in epoll's */
    cw_addr_from_sockaddr(peer, &out->peer);
    return make_halves(l->rt, l->hdr.backend, k, &out->peer, &out->sink, &out->stream);
}

/* Through the ring: hand out what the kernel accepted, or queue an accept
 * and wait for it, unless one is in flight. */
static int ring_accept_take(cw_listener *l, cw_conn *out)
{
    ring_accept *a = l->sock->acc;
    if (a->fd >= 0) {
        int fd = a->fd;
        a->fd = -1;
        return adopt(l, fd, (struct sockaddr *)&a->peer, out);
    }
    if (a->error) {
        int error = a->error;
        a->error = 0;
        return accept_failed(error);
    }
    if (!a->op.in_flight) {
        a->peer_len = sizeof a->peer;
        cw_net_ring_accept(l->sock->ring, &a->op, l->sock->src.fd, (struct sockaddr *)&a->peer,
                           &a->peer_len);
    }
    return CW_ERR_WOULD_BLOCK;
}

static int tcp_accept(cw_listener *l, cw_conn *out)
{
    if (l->sock->acc)
        return ring_accept_take(l, out);
    for (;;) {
        struct sockaddr_storage ss;
        socklen_t len = sizeof ss;
        int fd =
            accept4(l->sock->src.fd, (struct sockaddr *)&ss, &len, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd >= 0)
            return adopt(l, fd, (struct sockaddr *)&ss, out);
        if (errno == EAGAIN || errno == EWOULDBLOCK)
            return CW_ERR_WOULD_BLOCK;
        if (errno != EINTR && errno != ECONNABORTED)
            return accept_failed(errno);
    }
}

/* ---- Dialing ------------------------------------------------------------------------------ */

/* A connect in progress: its socket, or through the ring its completion,
 * wakes `waiters` when it is settled. */
typedef struct dialing {
    cw_rt *rt;
    cw_sock *k;
    cw_list waiters;
    cw_net_ring *ring; /* the connect goes through it; NULL: a connect call */
    cw_net_op connect; /* the connect in flight, through `ring` */
    int connected;     /* its result: 0, or -errno */
} dialing;

static bool connect_try(cw_wait *w)
{
    dialing *d = w->object;
    struct pollfd p = {.fd = d->k->src.fd, .events = POLLOUT};
    if (poll(&p, 1, 0) <= 0)
        return false;
    int err = 0;
    socklen_t len = sizeof err;
    if (getsockopt(p.fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0)
        err = errno;
    w->result = err == 0 ? CW_OK : CW_ERR_CONNECTION_FAILED;
    return true;
}

static void connect_arm(cw_wait *w, cw_task *t)
{
    dialing *d = w->object;
    cw_waiters_add(&d->waiters, w, t);
}

static const cw_wait_ops connect_ops = {connect_try, connect_arm, cw_waiters_remove, cw_guard_rt};

static bool ring_connect_try(cw_wait *w)
{
    dialing *d = w->object;
    if (d->connect.in_flight)
        return false;
    w->result = d->connected == 0 ? CW_OK : CW_ERR_CONNECTION_FAILED;
    return true;
}

static const cw_wait_ops ring_connect_ops = {ring_connect_try, connect_arm, cw_waiters_remove,
                                             cw_guard_rt};

/* The kernel is done with the connect: with rt->lock held. */
static void connected(cw_net_op *op, int res)
{
    dialing *d = cw_container_of(op, dialing, connect);
    d->connected = res;
    cw_waiters_wake(d->rt, &d->waiters);
}

/* Give up the socket of a dial that did not connect: also what an abort
 * runs, so the reactor never wakes a list on a stack that is gone, nor the
 * kernel reads an address there. */
static void dialing_drop(void *arg)
{
    dialing *d = arg;
    cw_rt_lock(d->rt);
    if (d->ring)
        cw_net_ring_settle(d->ring, &d->connect);
    d->k->readers = d->k->writers = NULL;
    sock_unref(d->k);
    cw_rt_unlock(d->rt);
}

/* With rt->lock held: the dial's socket in the reactor, its connect
 * queued in the ring if it has one (else already made), or false (and
 * `fd` closed) without memory. */
static bool dialing_start(dialing *d, int fd, const struct sockaddr_storage *to, socklen_t len)
{
    if (!cw_net_open(d->rt)) {
        close(fd);
        return false;
    }
    d->k = sock_new(d->rt, fd, 1);
    if (!d->k)
        return false;
    if (!d->ring) {
        d->k->readers = d->k->writers = &d->waiters;
        return true;
    }
    /* Its completion, not the socket's events, settles the connect. */
    d->connect.done = connected;
    cw_net_ring_connect(d->ring, &d->connect, fd, (const struct sockaddr *)to, len);
    return true;
}

static int tcp_dial(cw_ctx *ctx, const cw_addr *addr, cw_sink **sink, cw_stream **stream)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_task_self(rt, "cw_dial");
    if (addr->family != CW_ADDR_IPV4 && addr->family != CW_ADDR_IPV6)
        return CW_ERR_INVALID;
    struct sockaddr_storage ss; /* read by a connect through the ring until it settles */
    socklen_t len = cw_addr_to_sockaddr(addr, &ss);
    int fd = socket(ss.ss_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return CW_ERR_CONNECTION_FAILED;
    configure(rt, fd);
    dialing d = {rt, NULL, {NULL, NULL}, net_ring_of(rt), {NULL, false}, 0};
    if (!d.ring && connect(fd, (struct sockaddr *)&ss, len) != 0 && errno != EINPROGRESS) {
        close(fd);
        return CW_ERR_CONNECTION_FAILED;
    }
    cw_list_init(&d.waiters);
    cw_rt_lock(rt);
    bool started = dialing_start(&d, fd, &ss, len);
    cw_rt_unlock(rt);
    if (!started)
        return CW_ERR_NOMEM;

    cw_cleanup guard;
    cw_cleanup_push(ctx, &guard, dialing_drop, &d);
    cw_wait w;
    cw_net_wait_init(&w, rt, cw_ctx_backend(ctx), d.ring ? &ring_connect_ops : &connect_ops, &d);
    int rc = cw_net_wait_bounded(rt, &w, rt->cfg.connect_timeout);
    if (rc != CW_OK) {
        cw_cleanup_pop(ctx, &guard, true);
        /* A connect through the ring always waits, so its timer's lack of
         * memory is seen as often as that of any other allocation. */
        return rc == CW_ERR_TIMEOUT || rc == CW_ERR_NOMEM ? rc : CW_ERR_CONNECTION_FAILED;
    }
    cw_cleanup_pop(ctx, &guard, false);
    cw_rt_lock(rt);
    rc = make_halves(rt, cw_ctx_backend(ctx), d.k, addr, sink, stream);
    if (rc == CW_OK)
        cw_metric_counter_add(cw_net_of(rt)->outbound, 1);
    cw_rt_unlock(rt);
    return rc;
}

/* ---- Reading and writing ------------------------------------------------------------------ */

/* How much a fill reads ahead: up to the read buffer, or as much as this
 * recv needs. */
static size_t read_ahead(const cw_stream *s, size_t want)
{
    size_t rbs = s->rt->cfg.read_buffer_size;
    return want > rbs ? want : rbs;
}

/* Through the ring: queue one receive unless one is in flight. A recv at
 * least as long as the read buffer reads nothing ahead, so its receive
 * waits for all of it (MSG_WAITALL): one completion, and one wake of its
 * task, per message rather than one per segment that arrives. */
static bool ring_fill(cw_stream *s, size_t want)
{
    cw_sock *k = s->sock;
    if (k->rx.in_flight || s->len >= want || s->eof)
        return true;
    size_t limit = read_ahead(s, want);
    if (!cw_stream_reserve(s, limit - s->len))
        return false;
    cw_net_ring_recv(k->ring, &k->rx, k->src.fd, s->buf + s->off + s->len, limit - s->len,
                     limit == want);
    return true;
}

static bool tcp_fill(cw_stream *s, size_t want)
{
    if (s->sock->ring)
        return ring_fill(s, want);
    size_t limit = read_ahead(s, want);
    while (s->len < want && !s->eof && may_progress(&s->sock->in)) {
        if (!cw_stream_reserve(s, limit - s->len))
            return false;
        /* The bytes land past s->len, which nothing else reads meanwhile. */
        sys_call c = sock_recv(s->sock, s->buf + s->off + s->len, limit - s->len);
        if (c.result > 0)
            s->len += (size_t)c.result;
        else if (would_block(c))
            return true;
        else if (c.result == 0 || c.error != EINTR)
            s->eof = true; /* the end, a reset or an error: what is buffered is all there is */
    }
    return true;
}

static bool tcp_fill_direct(cw_stream *s, size_t want)
{
    cw_iobuf_mut *d = &s->direct;
    if (s->sock->ring)
        return false; /* the ring receives into the stream's buffer only */
    if (!d->data) {
        cw_bufpool *pool = s->rt->pools[CW_BUFPOOL_NETWORK];
        cw_bufpool_config cfg;
        cw_bufpool_get_config(pool, &cfg);
        if (want > cfg.max_size || cw_bufpool_alloc(pool, want, d) != CW_OK)
            return false;
        s->direct_for = want;
    }
    /* What comes after the recv's bytes lands in the read-ahead buffer, in
     * the same call: peek sees it as it would without the direct buffer. */
    size_t ahead = s->rt->cfg.read_buffer_size;
    if (!cw_stream_reserve(s, ahead))
        ahead = 0;
    while (d->len < want && !s->eof && may_progress(&s->sock->in)) {
        struct iovec iov[2] = {{d->data + d->len, want - d->len}, {s->buf + s->off, ahead}};
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = ahead ? 2 : 1};
        sys_call c = sock_recvmsg(s->sock, &m);
        if (c.result > 0) {
            size_t got = (size_t)c.result, mine = want - d->len;
            d->len += got < mine ? got : mine;
            s->len = got > mine ? got - mine : 0;
        } else if (would_block(c)) {
            break;
        } else if (c.result == 0 || c.error != EINTR) {
            s->eof = true;
        }
    }
    return true;
}

/* The chunks of `bufs` after its first `skip` bytes, SEND_IOV at the
 * most, into `iov`, and where `from` is not NULL the chunk of each. */
static size_t gather(const cw_iobufs *bufs, size_t skip, struct iovec *iov, const cw_iobuf **from)
{
    size_t n = 0;
    const cw_iobuf *c;
    for (size_t i = 0; n < SEND_IOV && (c = cw_iobufs_chunk(bufs, i)); i++) {
        if (c->len <= skip) {
            skip -= c->len;
            continue;
        }
        iov[n].iov_base = (void *)(uintptr_t)(c->data + skip);
        iov[n].iov_len = c->len - skip;
        if (from)
            from[n] = c;
        skip = 0;
        n++;
    }
    return n;
}

/* The kernel is done with a send: with rt->lock held, which guards a
 * connection that has a ring (make_halves). */
static void ring_sent(cw_net_op *op, int res)
{
    ring_send *tx = cw_container_of(op, ring_send, op);
    tx->res = res;
    tx->landed = true;
    if (tx->sock->writers)
        cw_waiters_wake(tx->sock->rt, tx->sock->writers);
}

static void ring_send_unhold(ring_send *tx)
{
    for (size_t i = 0; i < tx->nheld; i++)
        cw_iobuf_release(&tx->held[i]);
    tx->nheld = 0;
}

/* Count what the landed send sent: CW_OK to go on with any rest, or
 * CW_ERR_SEND_FAILED. The socket took bytes, so it is worth a call. */
static int ring_send_take(cw_sink *s, ring_send *tx)
{
    tx->landed = false;
    ring_send_unhold(tx);
    if (tx->res >= 0) {
        s->sent += (size_t)tx->res;
        s->sock->out.blocked = false;
        return CW_OK;
    }
    return tx->res == -EINTR || tx->res == -EAGAIN ? CW_OK : CW_ERR_SEND_FAILED;
}

/* Hand what is left of a send under way to the kernel, when the
 * connection has a ring and memory for it allows; the task waits for the
 * completion then, and for room in the socket otherwise. */
static void ring_send_rest(cw_sink *s, const cw_iobufs *bufs)
{
    cw_sock *k = s->sock;
    if (!k->ring || s->sent == 0 || (!k->tx && !(k->tx = calloc(1, sizeof *k->tx))))
        return;
    ring_send *tx = k->tx;
    const cw_iobuf *from[SEND_IOV];
    size_t n = gather(bufs, s->sent, tx->iov, from);
    for (size_t i = 0; i < n; i++)
        tx->held[i] = cw_iobuf_clone(from[i]);
    tx->nheld = n;
    tx->sock = k;
    tx->op.done = ring_sent;
    tx->msg = (struct msghdr){.msg_iov = tx->iov, .msg_iovlen = n};
    cw_net_ring_send(k->ring, &tx->op, k->src.fd, &tx->msg);
}

static int write_blocked(cw_sink *s, const cw_iobufs *bufs)
{
    ring_send_rest(s, bufs);
    return CW_ERR_WOULD_BLOCK;
}

static int tcp_write(cw_sink *s, const cw_iobufs *bufs)
{
    ring_send *tx = s->sock->tx;
    if (tx && tx->op.in_flight)
        return CW_ERR_WOULD_BLOCK; /* its completion wakes the task */
    if (tx && tx->landed && ring_send_take(s, tx) != CW_OK)
        return CW_ERR_SEND_FAILED;
    size_t total = cw_iobufs_len(bufs);
    while (s->sent < total) {
        if (!may_progress(&s->sock->out))
            return write_blocked(s, bufs);
        struct iovec iov[SEND_IOV];
        struct msghdr m = {.msg_iov = iov, .msg_iovlen = gather(bufs, s->sent, iov, NULL)};
        sys_call call = sock_sendmsg(s->sock, &m);
        if (call.result >= 0)
            s->sent += (size_t)call.result;
        else if (would_block(call))
            return write_blocked(s, bufs);
        else if (call.error != EINTR)
            return CW_ERR_SEND_FAILED;
    }
    return CW_OK;
}

static bool tcp_net_open(cw_net *net)
{
    cw_tcp_net *tn = calloc(1, sizeof *tn);
    if (!tn)
        return false;
    cw_list_init(&tn->lookups);
    net->impl = tn;
    return true;
}

static void tcp_net_close(cw_net *net)
{
    cw_tcp_net *tn = cw_tcp_net_of(net);
    cw_lookups_free(&tn->lookups);
    free(tn);
}

const cw_net_driver cw_tcp_net_driver = {
    .open = tcp_net_open,
    .close = tcp_net_close,
    .accept = tcp_accept,
    .fill = tcp_fill,
    .fill_direct = tcp_fill_direct,
    .write = tcp_write,
    .quiesce = sock_quiesce,
    .release_listener = release_listener,
    .release_stream = release_stream,
    .release_sink = release_sink,
};

/* The native backend's network table: the halves and listeners are shared,
 * the transport and the resolver are this backend's. The mock channel is an
 * in-memory pipe on every backend (network/pipe.c). */
const cw_network_ops cw_network_tcp_entries = {
    CW_NETWORK_ENTRIES,
    .bind = tcp_bind,
    .dial = tcp_dial,
    .resolve = cw_sys_resolve,
    .resolver_register = cw_sys_resolver_register,
};
