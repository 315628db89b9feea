/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network.c - TCP echo on loopback: the native backend's server against a
 * plain epoll server in C, a plain io_uring server in C when built with
 * liburing, and libuv's when built with libuv, all driven by the same
 * client in the same run.
 *
 *   echo       1, 64 and 1,024 connections, messages of 64 B and 64 KiB:
 *              round trips per second for each server, and the ratios. The
 *              native server runs with one worker (one thread serving, as
 *              the epoll and libuv servers have) and with the default of
 *              one worker per CPU, which on a small machine competes with
 *              the client for the CPUs; native_ring is the default with
 *              io_backend CW_IO_URING, whose connections receive through
 *              the network's ring (reference/native/net_ring.c). Each
 *              `--peer NAME=PROGRAM` adds a server in a process of its
 *              own, started once as `PROGRAM echo` (bench/peers/: Go's,
 *              tokio's), which prints "port N" and serves until killed.
 *   bulk       1 MiB sends on one connection to a reader that keeps up as
 *              it can: the native sender over epoll and through the ring,
 *              against a plain thread's blocking sends
 *   simulated  messages per second through the deterministic backend's
 *              in-memory network: the mock channel, and a dialed
 *              connection without latency and with 1 ms latency and 1 ms
 *              jitter (NET-027), many messages in flight
 *
 * The client is one thread with epoll: each connection sends a message,
 * reads the whole echo back, and sends the next, for a fixed time.
 *
 * usage: network [--peer NAME=PROGRAM ...] [echo|bulk|simulated ...]   (default: all)
 *        network [--peer NAME=PROGRAM ...] server SERVER CONNS SIZE
 *              one server alone, for a profiler: native, native1,
 *              native_ring, epoll, libuv, io_uring or a peer's NAME
 *        network sender native|native_ring|plain
 *              one bulk sender alone, likewise
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef CW_BENCH_LIBUV
#include <uv.h>
#endif
#ifdef CW_BENCH_URING
#include <liburing.h>
#endif

#include "cwrt/cwrt.h"
#include "peer_arg.h"

#ifndef RUN_SECONDS
#define RUN_SECONDS 0.3 /* -DRUN_SECONDS=2 for a profiler's longer look */
#endif

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "bench: %s: %s\n", what, strerror(errno));
    exit(1);
}

static void nonblocking_nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) != 0)
        die("fcntl");
}

/* A listening socket on 127.0.0.1, port chosen by the kernel. */
static int listen_loopback(uint16_t *port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof a;
    if (fd < 0 || bind(fd, (struct sockaddr *)&a, sizeof a) != 0 || listen(fd, 4096) != 0 ||
        getsockname(fd, (struct sockaddr *)&a, &len) != 0)
        die("listen");
    *port = ntohs(a.sin_port);
    return fd;
}

/* ---- The client ------------------------------------------------------------------------------ */

typedef struct conn {
    int fd;
    size_t sent, got;
    uint64_t trips;
} conn;

/* Move bytes on the connections epoll reports ready; the round trips done.
 * `*first` counts the connections that made their first one. */
static uint64_t pump(int ep, size_t size, const char *msg, char *sink, int wait_ms, int *first)
{
    uint64_t trips = 0;
    struct epoll_event evs[256];
    int k = epoll_wait(ep, evs, 256, wait_ms);
    for (int e = 0; e < k; e++) {
        conn *x = evs[e].data.ptr;
        for (bool progress = true; progress;) {
            progress = false;
            if (x->sent < size) {
                ssize_t w = write(x->fd, msg + x->sent, size - x->sent);
                if (w > 0) {
                    x->sent += (size_t)w;
                    progress = true;
                }
            }
            if (x->got < size) {
                ssize_t r = read(x->fd, sink, size - x->got);
                if (r > 0) {
                    x->got += (size_t)r;
                    progress = true;
                }
            }
            if (x->got == size && x->sent == size) {
                x->got = x->sent = 0;
                if (x->trips++ == 0)
                    (*first)++;
                trips++;
            }
        }
    }
    return trips;
}

/* Drive `n` connections to `port` for RUN_SECONDS; returns round trips per second. */
static double client(uint16_t port, int n, size_t size)
{
    char *msg = calloc(1, size), *sink = malloc(size);
    conn *c = calloc((size_t)n, sizeof *c);
    int ep = epoll_create1(0);
    struct sockaddr_in to = {
        .sin_family = AF_INET, .sin_port = htons(port), .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    for (int i = 0; i < n; i++) {
        c[i].fd = socket(AF_INET, SOCK_STREAM, 0);
        if (c[i].fd < 0 || connect(c[i].fd, (struct sockaddr *)&to, sizeof to) != 0)
            die("connect");
        nonblocking_nodelay(c[i].fd);
        struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLET, .data.ptr = &c[i]};
        epoll_ctl(ep, EPOLL_CTL_ADD, c[i].fd, &ev);
    }
    /* One round trip on every connection before the clock starts: each
     * server has accepted and set up all of them by then. */
    int first = 0;
    while (first < n)
        pump(ep, size, msg, sink, 1000, &first);
    uint64_t trips = 0;
    double start = now_s(), end = start + RUN_SECONDS;
    while (now_s() < end)
        trips += pump(ep, size, msg, sink, 100, &first);
    double rate = (double)trips / (now_s() - start);
    for (int i = 0; i < n; i++)
        close(c[i].fd);
    close(ep);
    free(c);
    free(msg);
    free(sink);
    return rate;
}

/* ---- A plain epoll echo server --------------------------------------------------------------- */

typedef struct plain_conn {
    int fd;
    char *buf;
    size_t len, off; /* bytes read and not yet written back: buf[off .. len) */
} plain_conn;

typedef struct server_arg {
    int lfd, conns;
    size_t size;
} server_arg;

static void plain_pump(plain_conn *p, size_t size)
{
    for (;;) {
        if (p->off < p->len) {
            ssize_t w = write(p->fd, p->buf + p->off, p->len - p->off);
            if (w <= 0)
                return;
            p->off += (size_t)w;
            continue;
        }
        p->off = p->len = 0;
        ssize_t r = read(p->fd, p->buf, size);
        if (r <= 0)
            return;
        p->len = (size_t)r;
    }
}

static void *plain_server(void *arg)
{
    server_arg *sa = arg;
    int ep = epoll_create1(0);
    plain_conn *pc = calloc((size_t)sa->conns, sizeof *pc);
    int accepted = 0, closed = 0;
    struct epoll_event lev = {.events = EPOLLIN, .data.ptr = NULL};
    epoll_ctl(ep, EPOLL_CTL_ADD, sa->lfd, &lev);
    struct epoll_event evs[256];
    while (closed < sa->conns) {
        int k = epoll_wait(ep, evs, 256, -1);
        for (int e = 0; e < k; e++) {
            plain_conn *p = evs[e].data.ptr;
            if (!p) {
                int fd;
                while (accepted < sa->conns &&
                       (fd = accept4(sa->lfd, NULL, NULL, SOCK_NONBLOCK)) >= 0) {
                    p = &pc[accepted++];
                    p->fd = fd;
                    p->buf = malloc(sa->size);
                    nonblocking_nodelay(fd);
                    struct epoll_event ev = {.events = EPOLLIN | EPOLLOUT | EPOLLRDHUP | EPOLLET,
                                             .data.ptr = p};
                    epoll_ctl(ep, EPOLL_CTL_ADD, fd, &ev);
                }
                continue;
            }
            plain_pump(p, sa->size);
            if ((evs[e].events & (EPOLLRDHUP | EPOLLHUP | EPOLLERR)) && p->fd >= 0) {
                close(p->fd);
                p->fd = -1;
                closed++;
            }
        }
    }
    for (int i = 0; i < accepted; i++)
        free(pc[i].buf);
    free(pc);
    close(ep);
    return NULL;
}

/* ---- A plain io_uring echo server ------------------------------------------------------------ */

#ifdef CW_BENCH_URING
/* One thread and one ring, the same shape as the epoll server (a buffer per
 * connection, no reading while its echo is being written): a connection
 * has one operation in flight, a recv or the send of what it received, and
 * every completion queues the next. Each io_uring_submit_and_wait hands the
 * kernel all the operations the previous batch of completions asked for,
 * which is where a ring saves system calls over epoll. The listener accepts
 * through the ring too. */
enum { URING_ENTRIES = 2048 }; /* at least the connections and the accept */

typedef struct uring_conn {
    int fd;
    bool sending;
    char *buf;
    size_t len, off; /* bytes received and not yet sent back: buf[off .. len) */
} uring_conn;

static struct io_uring_sqe *uring_entry(struct io_uring *ring)
{
    struct io_uring_sqe *sqe;
    while (!(sqe = io_uring_get_sqe(ring)))
        io_uring_submit(ring);
    return sqe;
}

/* The listener's accept: its completion carries no connection. */
static void uring_accept(struct io_uring *ring, int lfd)
{
    struct io_uring_sqe *sqe = uring_entry(ring);
    io_uring_prep_accept(sqe, lfd, NULL, NULL, 0);
    io_uring_sqe_set_data(sqe, NULL);
}

static void uring_next(struct io_uring *ring, uring_conn *c, size_t size)
{
    struct io_uring_sqe *sqe = uring_entry(ring);
    c->sending = c->off < c->len;
    if (c->sending)
        io_uring_prep_send(sqe, c->fd, c->buf + c->off, c->len - c->off, MSG_NOSIGNAL);
    else
        io_uring_prep_recv(sqe, c->fd, c->buf, size, 0);
    io_uring_sqe_set_data(sqe, c);
}

/* A connection's operation completed with `res`; false when it is closed. */
static bool uring_done(struct io_uring *ring, uring_conn *c, int res, size_t size)
{
    if (res <= 0) { /* the client closed, or an error */
        close(c->fd);
        return false;
    }
    if (c->sending) {
        c->off += (size_t)res;
    } else {
        c->len = (size_t)res;
        c->off = 0;
    }
    if (c->off == c->len)
        c->off = c->len = 0;
    uring_next(ring, c, size);
    return true;
}

static void uring_ring(struct io_uring *ring)
{
    /* One thread submits and reaps: the kernel may then run completions'
     * work only when that thread asks for them, in its own context. */
    struct io_uring_params p = {.flags = IORING_SETUP_SINGLE_ISSUER | IORING_SETUP_DEFER_TASKRUN};
    if (io_uring_queue_init_params(URING_ENTRIES, ring, &p) == 0)
        return;
    int e = io_uring_queue_init(URING_ENTRIES, ring, 0); /* an older kernel */
    if (e < 0) {
        errno = -e;
        die("io_uring_queue_init");
    }
}

static void *uring_server(void *arg)
{
    server_arg *sa = arg;
    struct io_uring ring;
    uring_ring(&ring);
    uring_conn *uc = calloc((size_t)sa->conns, sizeof *uc);
    int accepted = 0, closed = 0;
    uring_accept(&ring, sa->lfd);
    while (closed < sa->conns) {
        io_uring_submit_and_wait(&ring, 1);
        struct io_uring_cqe *cqe;
        unsigned head, seen = 0;
        io_uring_for_each_cqe(&ring, head, cqe)
        {
            seen++;
            uring_conn *c = io_uring_cqe_get_data(cqe);
            if (c) {
                closed += !uring_done(&ring, c, cqe->res, sa->size);
                continue;
            }
            if (cqe->res >= 0) {
                c = &uc[accepted++];
                c->fd = cqe->res;
                c->buf = malloc(sa->size);
                int one = 1;
                setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
                uring_next(&ring, c, sa->size);
            }
            if (accepted < sa->conns)
                uring_accept(&ring, sa->lfd);
        }
        io_uring_cq_advance(&ring, seen);
    }
    for (int i = 0; i < accepted; i++)
        free(uc[i].buf);
    free(uc);
    io_uring_queue_exit(&ring);
    return NULL;
}
#endif

/* ---- The native backend's echo server
 * ------------------------------------------------------------ */

typedef struct rt_conn {
    cw_conn c;
    size_t size;
} rt_conn;

static void *rt_echo(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    rt_conn *rc = arg;
    cw_iobufs *msg;
    while (cw_stream_recv(rc->c.stream, rc->size, &msg) == CW_OK) {
        int sent = cw_sink_send(rc->c.sink, msg);
        cw_iobufs_release(msg);
        if (sent != CW_OK)
            break;
    }
    cw_sink_close(rc->c.sink);
    cw_stream_close(rc->c.stream);
    free(rc);
    return NULL;
}

typedef struct rt_server {
    server_arg sa;
    unsigned workers; /* 0: the default, one per CPU */
    cw_io_backend io; /* CW_IO_URING: its connections receive through a ring */
    uint16_t port;
    atomic_int ready; /* 1: listening on `port`; -1: the run did not start */
} rt_server;

static void *rt_root(cw_ctx *ctx, void *arg)
{
    rt_server *rs = arg;
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l;
    if (cw_bind(ctx, &any, &l) != CW_OK)
        return NULL;
    cw_listener_local_addr(l, &where);
    rs->port = where.port;
    atomic_store(&rs->ready, 1);
    cw_handle **h = calloc((size_t)rs->sa.conns, sizeof *h);
    for (int i = 0; i < rs->sa.conns; i++) {
        rt_conn *rc = malloc(sizeof *rc);
        rc->size = rs->sa.size;
        if (cw_listener_accept(l, &rc->c) != CW_OK) {
            fprintf(stderr, "bench: accept failed\n");
            exit(1);
        }
        h[i] = cw_spawn(cw_child(ctx, "echo"), rt_echo, rc);
    }
    for (int i = 0; i < rs->sa.conns; i++) {
        cw_join(h[i], NULL);
        cw_handle_release(h[i]);
    }
    free(h);
    cw_listener_close(l);
    return NULL;
}

static void *rt_thread(void *arg)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.read_timeout = cfg.write_timeout = CW_FOREVER;
    rt_server *rs = arg;
    cfg.worker_threads = rs->workers;
    cfg.io_backend = rs->io;
    cw_run_result res;
    if (cw_start(cw_backend_native(), &cfg, rt_root, rs, &res) != CW_OK) {
        fprintf(stderr, "bench: native run failed: %s\n", res.message);
        atomic_store(&rs->ready, -1);
    }
    return NULL;
}

/* ---- libuv's echo server
 * ------------------------------------------------------------------------- */

#ifdef CW_BENCH_LIBUV
typedef struct uv_server {
    uv_loop_t loop;
    uv_tcp_t listener;
    int conns, accepted, closed;
    uint16_t port;
    atomic_int ready;
} uv_server;

/* One connection: its buffer is read into and written back from, and the
 * connection does not read while a write is under way, as the epoll
 * server does. No allocation per message. */
typedef struct uv_conn {
    uv_tcp_t tcp; /* first: libuv hands back the handle */
    uv_write_t req;
    char buf[64 * 1024];
} uv_conn;

static void uv_alloc(uv_handle_t *h, size_t hint, uv_buf_t *buf)
{
    (void)hint;
    uv_conn *c = (uv_conn *)h;
    buf->base = c->buf;
    buf->len = sizeof c->buf;
}

static void uv_closed(uv_handle_t *h)
{
    uv_server *us = h->loop->data;
    free(h);
    if (++us->closed == us->conns)
        uv_close((uv_handle_t *)&us->listener, NULL);
}

static void uv_got(uv_stream_t *s, ssize_t n, const uv_buf_t *buf);

static void uv_written(uv_write_t *req, int status)
{
    uv_stream_t *s = req->handle;
    if (status == 0)
        uv_read_start(s, uv_alloc, uv_got);
}

static void uv_got(uv_stream_t *s, ssize_t n, const uv_buf_t *buf)
{
    if (n > 0) {
        uv_conn *c = (uv_conn *)s;
        uv_read_stop(s);
        uv_buf_t out = uv_buf_init(buf->base, (unsigned)n);
        uv_write(&c->req, s, &out, 1, uv_written);
    } else if (n < 0) {
        uv_close((uv_handle_t *)s, uv_closed);
    }
}

static void uv_incoming(uv_stream_t *l, int status)
{
    uv_server *us = l->loop->data;
    if (status < 0)
        return;
    uv_conn *c = malloc(sizeof *c);
    uv_tcp_init(&us->loop, &c->tcp);
    if (uv_accept(l, (uv_stream_t *)&c->tcp) == 0) {
        uv_tcp_nodelay(&c->tcp, 1);
        us->accepted++;
        uv_read_start((uv_stream_t *)&c->tcp, uv_alloc, uv_got);
    }
}

static void *uv_thread(void *arg)
{
    uv_server *us = arg;
    uv_loop_init(&us->loop);
    us->loop.data = us;
    uv_tcp_init(&us->loop, &us->listener);
    struct sockaddr_in a;
    uv_ip4_addr("127.0.0.1", 0, &a);
    uv_tcp_bind(&us->listener, (struct sockaddr *)&a, 0);
    uv_listen((uv_stream_t *)&us->listener, 4096, uv_incoming);
    int len = sizeof a;
    uv_tcp_getsockname(&us->listener, (struct sockaddr *)&a, &len);
    us->port = ntohs(a.sin_port);
    atomic_store(&us->ready, 1);
    uv_run(&us->loop, UV_RUN_DEFAULT);
    uv_loop_close(&us->loop);
    return NULL;
}
#endif

/* ---- Peer servers in processes of their own
 * -------------------------------------------------------------- */

extern char **environ;

enum { MAX_PEERS = 4 };

/* A peer's echo server (bench/peers/), up for the whole echo run. */
typedef struct cw_peer {
    const char *name, *program;
    pid_t pid;
    uint16_t port;
} cw_peer;

static cw_peer peers[MAX_PEERS];
static int npeers;

/* `--peer NAME=PROGRAM`: false when the argument is malformed. */
static bool peer_add(const char *spec)
{
    char *name;
    if (npeers == MAX_PEERS || !cw_peer_arg(spec, &name, &peers[npeers].program))
        return false;
    peers[npeers++].name = name;
    return true;
}

/* Start `PROGRAM echo` and read the port it prints; false (and why, on
 * stderr) when it does not come up. */
static bool peer_start(cw_peer *p)
{
    int out[2];
    if (pipe(out) != 0)
        die("pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    char *argv[] = {(char *)p->program, "echo", NULL};
    int rc = posix_spawn(&p->pid, p->program, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    if (rc != 0) {
        fprintf(stderr, "bench: peer %s: %s: %s\n", p->name, p->program, strerror(rc));
        close(out[0]);
        return false;
    }
    FILE *f = fdopen(out[0], "r");
    char line[64];
    unsigned port = 0;
    bool up = f && fgets(line, sizeof line, f) && sscanf(line, "port %u", &port) == 1 && port &&
              port <= 65535;
    if (f)
        fclose(f); /* the peer's later output, none expected, goes nowhere */
    if (!up) {
        fprintf(stderr, "bench: peer %s printed no port\n", p->name);
        kill(p->pid, SIGKILL);
        waitpid(p->pid, NULL, 0);
        return false;
    }
    p->port = (uint16_t)port;
    return true;
}

static void peer_stop(cw_peer *p)
{
    if (kill(p->pid, SIGTERM) != 0 || waitpid(p->pid, NULL, 0) != p->pid)
        die("peer stop");
}

/* The peers that came up, moved to the front; how many. */
static int peers_start(void)
{
    int up = 0;
    for (int i = 0; i < npeers; i++)
        if (peer_start(&peers[i]))
            peers[up++] = peers[i];
    return up;
}

/* ---- The measurements
 * ---------------------------------------------------------------------------- */

static void wait_ready(atomic_int *ready)
{
    while (!atomic_load(ready))
        usleep(100);
}

/* One of the plain servers in C on a listener of its own, driven by the
 * client. A ring waits for the listener itself (`blocking`): on a
 * non-blocking one a kernel may answer its accept with EAGAIN instead. */
static double run_c_server(void *(*server)(void *), bool blocking, int conns, size_t size)
{
    server_arg sa = {0, conns, size};
    uint16_t port;
    sa.lfd = listen_loopback(&port);
    if (blocking && fcntl(sa.lfd, F_SETFL, fcntl(sa.lfd, F_GETFL) & ~O_NONBLOCK) != 0)
        die("fcntl");
    pthread_t t;
    pthread_create(&t, NULL, server, &sa);
    double rate = client(port, conns, size);
    pthread_join(t, NULL);
    close(sa.lfd);
    return rate;
}

static double run_plain(int conns, size_t size)
{
    return run_c_server(plain_server, false, conns, size);
}

#ifdef CW_BENCH_URING
static double run_uring(int conns, size_t size)
{
    return run_c_server(uring_server, true, conns, size);
}
#endif

/* The native server's rate, or 0 when its run could not start (no ring
 * for CW_IO_URING). */
static double run_native(int conns, size_t size, unsigned workers, cw_io_backend io)
{
    rt_server rs = {{0, conns, size}, workers, io, 0, 0};
    pthread_t t;
    pthread_create(&t, NULL, rt_thread, &rs);
    wait_ready(&rs.ready);
    double rate = atomic_load(&rs.ready) > 0 ? client(rs.port, conns, size) : 0;
    pthread_join(t, NULL);
    return rate;
}

#ifdef CW_BENCH_LIBUV
static double run_uv(int conns, size_t size)
{
    uv_server us;
    memset(&us, 0, sizeof us);
    us.conns = conns;
    pthread_t t;
    pthread_create(&t, NULL, uv_thread, &us);
    wait_ready(&us.ready);
    double rate = client(us.port, conns, size);
    pthread_join(t, NULL);
    return rate;
}
#endif

static double median3(double a, double b, double c)
{
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

/* Each server three times, in turn, and the median of each: a burst of
 * load on the machine then spoils one sample rather than one server. */
static void echo(void)
{
    static const int conns[] = {1, 64, 1024};
    static const size_t sizes[] = {64, 64 * 1024};
    enum { NATIVE1, NATIVE, RING, EPOLL, LIBUV, URING, SERVERS };
    int up = peers_start();
    for (size_t s = 0; s < 2; s++)
        for (size_t c = 0; c < 3; c++) {
            double r[SERVERS][3] = {{0}}, pr[MAX_PEERS][3] = {{0}};
            for (int k = 0; k < 3; k++) {
                for (int i = 0; i < up; i++)
                    pr[i][k] = client(peers[i].port, conns[c], sizes[s]);
                r[NATIVE1][k] = run_native(conns[c], sizes[s], 1, CW_IO_AUTO);
                r[NATIVE][k] = run_native(conns[c], sizes[s], 0, CW_IO_AUTO);
                r[RING][k] = run_native(conns[c], sizes[s], 0, CW_IO_URING);
                r[EPOLL][k] = run_plain(conns[c], sizes[s]);
#ifdef CW_BENCH_LIBUV
                r[LIBUV][k] = run_uv(conns[c], sizes[s]);
#endif
#ifdef CW_BENCH_URING
                r[URING][k] = run_uring(conns[c], sizes[s]);
#endif
            }
            double m[SERVERS];
            for (int i = 0; i < SERVERS; i++)
                m[i] = median3(r[i][0], r[i][1], r[i][2]);
            printf("echo conns=%-4d size=%-5zu native_1_worker %7.0f/s native_default %7.0f/s "
                   "native_ring %7.0f/s epoll %7.0f/s",
                   conns[c], sizes[s], m[NATIVE1], m[NATIVE], m[RING], m[EPOLL]);
#ifdef CW_BENCH_LIBUV
            printf(" libuv %7.0f/s", m[LIBUV]);
#endif
#ifdef CW_BENCH_URING
            printf(" io_uring %7.0f/s", m[URING]);
#endif
            printf("  native_1_worker/epoll=%.2f native_default/epoll=%.2f native_ring/epoll=%.2f",
                   m[NATIVE1] / m[EPOLL], m[NATIVE] / m[EPOLL], m[RING] / m[EPOLL]);
#ifdef CW_BENCH_LIBUV
            printf(" native_1_worker/libuv=%.2f native_default/libuv=%.2f", m[NATIVE1] / m[LIBUV],
                   m[NATIVE] / m[LIBUV]);
#endif
#ifdef CW_BENCH_URING
            printf(" native_default/io_uring=%.2f native_ring/io_uring=%.2f io_uring/epoll=%.2f",
                   m[NATIVE] / m[URING], m[RING] / m[URING], m[URING] / m[EPOLL]);
#endif
            for (int i = 0; i < up; i++) {
                double pm = median3(pr[i][0], pr[i][1], pr[i][2]);
                printf(" %s %.0f/s native_default/%s=%.2f", peers[i].name, pm, peers[i].name,
                       m[NATIVE] / pm);
            }
            printf("\n");
            fflush(stdout);
        }
    for (int i = 0; i < up; i++)
        peer_stop(&peers[i]);
}

/* ---- Bulk: one connection, the runtime sending ------------------------------------------------
 *
 * A sender writes BULK_MESSAGES sends of 1 MiB to one connection, and a
 * plain thread reads them with blocking recvs as fast as it can. The
 * socket fills and a send waits for the reader again and again: over
 * epoll the sending task wakes and sends once each time the reader makes
 * room; through the ring (native_ring) the kernel sends the rest of each
 * send and completes it once. The baseline is a plain thread sending
 * the same with blocking sends. */
#define BULK_MESSAGE (1 << 20)
#define BULK_MESSAGES 2048

typedef struct bulk_reader {
    int lfd;
    double seconds; /* from the accept to the end of the stream */
    size_t bytes;
} bulk_reader;

static void *bulk_read(void *arg)
{
    bulk_reader *br = arg;
    int fd = accept(br->lfd, NULL, NULL);
    if (fd < 0)
        die("accept");
    double t0 = now_s();
    static char buf[256 * 1024];
    ssize_t n;
    while ((n = recv(fd, buf, sizeof buf, 0)) > 0)
        br->bytes += (size_t)n;
    br->seconds = now_s() - t0;
    close(fd);
    return NULL;
}

/* A reader on a blocking listener of its own; its port in `*port`. */
static void bulk_reader_start(bulk_reader *br, pthread_t *t, uint16_t *port)
{
    memset(br, 0, sizeof *br);
    br->lfd = listen_loopback(port);
    if (fcntl(br->lfd, F_SETFL, fcntl(br->lfd, F_GETFL) & ~O_NONBLOCK) != 0)
        die("fcntl");
    pthread_create(t, NULL, bulk_read, br);
}

/* Bytes per second the reader saw, once the sender is done. */
static double bulk_reader_rate(bulk_reader *br, pthread_t t)
{
    pthread_join(t, NULL);
    close(br->lfd);
    if (br->bytes != (size_t)BULK_MESSAGE * BULK_MESSAGES) {
        fprintf(stderr, "bench: bulk: %zu bytes arrived\n", br->bytes);
        exit(1);
    }
    return (double)br->bytes / br->seconds;
}

static double bulk_plain(void)
{
    bulk_reader br;
    pthread_t t;
    uint16_t port;
    bulk_reader_start(&br, &t, &port);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {
        .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK), .sin_port = htons(port)};
    if (fd < 0 || connect(fd, (struct sockaddr *)&a, sizeof a) != 0)
        die("connect");
    static char msg[BULK_MESSAGE];
    for (int i = 0; i < BULK_MESSAGES; i++)
        for (size_t off = 0; off < sizeof msg;) {
            ssize_t n = send(fd, msg + off, sizeof msg - off, MSG_NOSIGNAL);
            if (n < 0)
                die("send");
            off += (size_t)n;
        }
    close(fd);
    return bulk_reader_rate(&br, t);
}

static void *bulk_root(cw_ctx *ctx, void *arg)
{
    cw_addr to = cw_addr_loopback4(*(uint16_t *)arg);
    cw_sink *sink;
    cw_stream *stream;
    if (cw_dial(ctx, &to, &sink, &stream) != CW_OK)
        return NULL;
    static uint8_t bytes[BULK_MESSAGE];
    cw_iobufs *msg = cw_iobufs_new(cw_backend_native());
    cw_iobuf chunk;
    if (!msg || cw_iobuf_static(cw_backend_native(), bytes, sizeof bytes, &chunk) != CW_OK ||
        cw_iobufs_append(msg, &chunk) != CW_OK)
        return NULL;
    for (int i = 0; i < BULK_MESSAGES; i++)
        if (cw_sink_send(sink, msg) != CW_OK)
            break;
    cw_iobufs_release(msg);
    cw_sink_close(sink);
    cw_stream_close(stream);
    return NULL;
}

static double bulk_native(cw_io_backend io)
{
    bulk_reader br;
    pthread_t t;
    uint16_t port;
    bulk_reader_start(&br, &t, &port);
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.read_timeout = cfg.write_timeout = CW_FOREVER;
    cfg.zero_linger = false; /* closing must not reset what the reader has yet to take */
    cfg.io_backend = io;
    cw_run_result res;
    if (cw_start(cw_backend_native(), &cfg, bulk_root, &port, &res) != CW_OK) {
        fprintf(stderr, "bench: native run failed: %s\n", res.message);
        exit(1);
    }
    return bulk_reader_rate(&br, t);
}

/* Each sender three times, in turn, and the median of each. */
static void bulk(void)
{
    double r[3][3];
    for (int k = 0; k < 3; k++) {
        r[0][k] = bulk_native(CW_IO_THREADS);
        r[1][k] = bulk_native(CW_IO_URING);
        r[2][k] = bulk_plain();
    }
    double native = median3(r[0][0], r[0][1], r[0][2]), ring = median3(r[1][0], r[1][1], r[1][2]);
    double plain = median3(r[2][0], r[2][1], r[2][2]);
    printf("bulk 1 MiB sends native %.2f GB/s native_ring %.2f GB/s plain %.2f GB/s  "
           "native/plain=%.2f native_ring/plain=%.2f\n",
           native / 1e9, ring / 1e9, plain / 1e9, native / plain, ring / plain);
    fflush(stdout);
}

/* ---- Simulated network
 * ------------------------------------------------------------------------------ */

#define SIM_MESSAGES 200000

static void *sim_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_sink *sink;
    cw_stream *stream;
    cw_iobufs *msg = cw_iobufs_new(cw_backend_deterministic());
    if (cw_mock_channel(ctx, &sink, &stream) != CW_OK || !msg) {
        fprintf(stderr, "bench: no mock channel\n");
        exit(1);
    }
    cw_iobuf b;
    char bytes[64] = {0};
    cw_iobuf_copy(cw_backend_deterministic(), bytes, sizeof bytes, &b);
    cw_iobufs_append(msg, &b);
    for (int i = 0; i < SIM_MESSAGES; i++) {
        cw_iobufs *got;
        cw_sink_send(sink, msg);
        cw_stream_recv(stream, sizeof bytes, &got);
        cw_iobufs_release(got);
    }
    cw_iobufs_release(msg);
    cw_sink_close(sink);
    cw_stream_close(stream);
    return NULL;
}

/* A dialed connection: a sender task sends SIM_MESSAGES messages, yielding
 * after every SIM_BURST so that sending and receiving interleave, while the
 * root receives them. With latency, a few hundred are in flight at once. */
#define SIM_BURST 64

static void sim_fail(const char *what)
{
    fprintf(stderr, "bench: simulated %s failed\n", what);
    exit(1);
}

static void *sim_sender(cw_ctx *ctx, void *arg)
{
    cw_sink *sink = arg;
    cw_iobufs *msg = cw_iobufs_new(cw_backend_deterministic());
    char bytes[64] = {0};
    cw_iobuf b;
    if (!msg || cw_iobuf_copy(cw_backend_deterministic(), bytes, sizeof bytes, &b) != CW_OK ||
        cw_iobufs_append(msg, &b) != CW_OK)
        sim_fail("message");
    for (int i = 0; i < SIM_MESSAGES; i++) {
        if (cw_sink_send(sink, msg) != CW_OK)
            sim_fail("send");
        if (i % SIM_BURST == SIM_BURST - 1)
            cw_yield(ctx);
    }
    cw_iobufs_release(msg);
    return NULL;
}

static void *sim_dialed_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l;
    cw_sink *sink;
    cw_stream *stream;
    cw_conn c;
    if (cw_bind(ctx, &any, &l) != CW_OK || cw_listener_local_addr(l, &where) != CW_OK ||
        cw_dial(ctx, &where, &sink, &stream) != CW_OK || cw_listener_accept(l, &c) != CW_OK)
        sim_fail("connect");
    cw_handle *h = cw_spawn(cw_child(ctx, "sender"), sim_sender, sink);
    for (int i = 0; i < SIM_MESSAGES; i++) {
        cw_iobufs *got;
        if (cw_stream_recv(c.stream, 64, &got) != CW_OK)
            sim_fail("recv");
        cw_iobufs_release(got);
    }
    if (cw_join(h, NULL) != CW_OK)
        sim_fail("sender");
    cw_handle_release(h);
    cw_sink_close(sink);
    cw_stream_close(stream);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    cw_listener_close(l);
    return NULL;
}

/* Messages per second of one deterministic run of `root`. */
static double sim_rate(cw_task_fn root, int audit, cw_duration latency, cw_duration jitter)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.audit = audit;
    cfg.network_latency = latency;
    cfg.network_jitter = jitter;
    cw_run_result res;
    double t0 = now_s();
    if (cw_start(cw_backend_deterministic(), &cfg, root, NULL, &res) != CW_OK)
        fprintf(stderr, "bench: simulated run failed: %s\n", res.message);
    return SIM_MESSAGES / (now_s() - t0);
}

static void simulated(void)
{
    for (int audit = 0; audit < 2; audit++)
        printf("simulated 64 B messages, audit %-3s %10.0f msg/s\n", audit ? "on" : "off",
               sim_rate(sim_root, audit, 0, 0));
    for (int audit = 0; audit < 2; audit++) {
        double instant = sim_rate(sim_dialed_root, audit, 0, 0);
        double delayed = sim_rate(sim_dialed_root, audit, CW_MSEC, CW_MSEC);
        printf("simulated 64 B messages, dialed, audit %-3s latency 0 %10.0f msg/s  "
               "latency 1 ms jitter 1 ms %10.0f msg/s  latency/none %.2fx\n",
               audit ? "on" : "off", instant, delayed, delayed / instant);
    }
}

/* A peer given with --peer, alone: its rate, or -1 when it is not one or
 * does not come up. */
static double one_peer(const char *which, int conns, size_t size)
{
    for (int i = 0; i < npeers; i++)
        if (strcmp(peers[i].name, which) == 0) {
            if (!peer_start(&peers[i]))
                return -1;
            double rate = client(peers[i].port, conns, size);
            peer_stop(&peers[i]);
            return rate;
        }
    return -1;
}

/* One of network.c's own servers alone: its rate, or -1 when `which` names
 * none of them. */
static double one_builtin(const char *which, int conns, size_t size)
{
    double rate;
    if (strcmp(which, "native") == 0)
        rate = run_native(conns, size, 0, CW_IO_AUTO);
    else if (strcmp(which, "native1") == 0)
        rate = run_native(conns, size, 1, CW_IO_AUTO);
    else if (strcmp(which, "native_ring") == 0)
        rate = run_native(conns, size, 0, CW_IO_URING);
    else if (strcmp(which, "epoll") == 0)
        rate = run_plain(conns, size);
#ifdef CW_BENCH_LIBUV
    else if (strcmp(which, "libuv") == 0)
        rate = run_uv(conns, size);
#endif
#ifdef CW_BENCH_URING
    else if (strcmp(which, "io_uring") == 0)
        rate = run_uring(conns, size);
#endif
    else
        rate = -1;
    return rate;
}

/* One server alone, so a profiler sees only it (a peer's runs in a process
 * of its own: `perf record -p`). */
static int one_server(const char *which, int conns, size_t size)
{
    double rate = one_peer(which, conns, size);
    if (rate < 0)
        rate = one_builtin(which, conns, size);
    if (rate < 0)
        return 2;
    printf("echo %s conns=%d size=%zu %.0f/s\n", which, conns, size, rate);
    return 0;
}

/* One bulk sender alone, for a profiler. */
static int one_bulk(const char *which)
{
    double rate;
    if (strcmp(which, "native") == 0)
        rate = bulk_native(CW_IO_THREADS);
    else if (strcmp(which, "native_ring") == 0)
        rate = bulk_native(CW_IO_URING);
    else if (strcmp(which, "plain") == 0)
        rate = bulk_plain();
    else
        return 2;
    printf("bulk %s %.2f GB/s\n", which, rate / 1e9);
    return 0;
}

int main(int argc, char **argv)
{
    int first = 1;
    for (; first + 1 < argc && strcmp(argv[first], "--peer") == 0; first += 2)
        if (!peer_add(argv[first + 1])) {
            fprintf(stderr, "bench: --peer wants NAME=PROGRAM (at most %d), not %s\n", MAX_PEERS,
                    argv[first + 1]);
            return 2;
        }
    if (argc - first == 4 && strcmp(argv[first], "server") == 0)
        return one_server(argv[first + 1], atoi(argv[first + 2]), (size_t)atol(argv[first + 3]));
    if (argc - first == 2 && strcmp(argv[first], "sender") == 0)
        return one_bulk(argv[first + 1]);
    bool all = argc <= first;
    for (int i = first; i < argc || all; i++) {
        const char *what = all ? NULL : argv[i];
        if (all || strcmp(what, "echo") == 0)
            echo();
        if (all || strcmp(what, "bulk") == 0)
            bulk();
        if (all || strcmp(what, "simulated") == 0)
            simulated();
        if (all)
            break;
    }
    return 0;
}
