/*
 * network_backends.c - what each kind of backend adds to the network
 * (spec/18-network.md): the deterministic network's ports and replay, and
 * real TCP with its timeouts, checked against a peer written without the
 * runtime. The TCP cases use 127.0.0.1 only.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cases/util.h"

#define DET CW_CAP_DETERMINISTIC
#define PAR CW_CAP_PARALLEL

static int send_text(cw_sink *s, const char *text)
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf b;
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, text, strlen(text), &b), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
    int rc = cw_sink_send(s, l);
    cw_iobufs_release(l);
    return rc;
}

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

CWC_CASE(network_deterministic_ports_and_replay, "network", "NET-007 NET-017", DET)
{
    cw_config cfg = cwc_config();
    cw_run_result a, b;
    ck_assert_int_eq(cwc_run(&cfg, ports_root, NULL, &a), CW_OK);
    ck_assert_int_eq(cwc_run(&cfg, ports_root, NULL, &b), CW_OK);
    ck_assert_str_eq(a.digest, b.digest);
}

static void *exhaust(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr nothing = cw_addr_loopback4(1);
    cw_sink *sink;
    cw_stream *stream;
    for (unsigned p = CW_NET_EPHEMERAL_FIRST; p < CW_NET_EPHEMERAL_END; p++)
        ck_assert_int_eq(cw_dial(ctx, &nothing, &sink, &stream), CW_ERR_CONNECTION_FAILED);
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

CWC_CASE(network_ephemeral_ports_exhausted, "network", "NET-007", DET)
{
    cw_config cfg = cwc_config();
    cfg.catch_panics = true;
    cfg.audit = false;
    cwc_run_ok(&cfg, exhaust_root, NULL);
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

CWC_CASE(network_tcp_plain_socket_client, "network", "NET-018 NET-014", PAR)
{
    cwc_run_ok(NULL, plain_root, NULL);
}

/* ---- TCP: timeouts ------------------------------------------------------------------------------
 */

static void *timeout_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_OK);
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(c.stream, 4, &got), CW_ERR_TIMEOUT);
    ck_assert_int_eq(send_text(sink, "late"), CW_OK);
    ck_assert_int_eq(cw_stream_recv(c.stream, 4, &got), CW_ERR_CLOSED);
    /* The other direction is untouched. */
    ck_assert_int_eq(send_text(c.sink, "back"), CW_OK);
    ck_assert_int_eq(cw_stream_recv(stream, 4, &got), CW_OK);
    ck_assert(cw_iobufs_equal_bytes(got, "back", 4));
    cw_iobufs_release(got);
    cw_sink_close(sink);
    cw_stream_close(stream);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_tcp_read_timeout, "network", "NET-019 NET-010", PAR)
{
    cw_config cfg = cwc_config();
    cfg.read_timeout = 20 * CW_MSEC;
    cwc_run_ok(&cfg, timeout_root, NULL);
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

CWC_CASE(network_tcp_connect_timeout, "network", "NET-006", PAR)
{
    cw_config cfg = cwc_config();
    cfg.connect_timeout = 100 * CW_MSEC;
    cwc_run_ok(&cfg, connect_timeout_root, NULL);
}
