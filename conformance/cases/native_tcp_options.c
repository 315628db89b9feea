/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * native_tcp_options.c - a parallel backend applies the run's
 * `tcp_nodelay` and `zero_linger` to every connection, dialed and accepted
 * (NET-018), and its clock reads the system's time (NAT-003).
 *
 * The interface hands out no descriptor, but a program sees its own: the
 * case looks through /proc/self/fd for the sockets whose ends are the
 * connection's (the dialer's address, which the accept reports), and asks
 * the kernel for their options, which takes no time to observe. A backend
 * whose sockets are no descriptors of the process (io_uring's direct
 * descriptors) leaves nothing to look at: then only the connection's
 * working is checked. Skipped on backends without CW_CAP_PARALLEL.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <time.h>

#include "cases/fds.h"
#include "cases/network_util.h"

#define PAR CW_CAP_PARALLEL

/* Whether `sa` is the IPv4 address `a`. */
static bool is_addr(const struct sockaddr_storage *sa, const cw_addr *a)
{
    const struct sockaddr_in *in = (const struct sockaddr_in *)sa;
    return sa->ss_family == AF_INET && a->family == CW_ADDR_IPV4 &&
           memcmp(&in->sin_addr, a->ip, 4) == 0 && ntohs(in->sin_port) == a->port;
}

struct tcp_options {
    bool nodelay, zero_linger;
    int seen; /* sockets of the connection found among the descriptors */
};

/* The options of socket `fd`, required to be those of the run. */
static void expect_options(int fd, const struct tcp_options *want, const char *side)
{
    int nodelay = -1;
    socklen_t len = sizeof nodelay;
    ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &nodelay, &len), 0);
    ck_assert_msg((nodelay != 0) == want->nodelay, "the %s socket has TCP_NODELAY %s, the run %s",
                  side, nodelay ? "on" : "off", want->nodelay ? "on" : "off");
    struct linger lg;
    len = sizeof lg;
    ck_assert_int_eq(getsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, &len), 0);
    bool zero = lg.l_onoff && lg.l_linger == 0;
    ck_assert_msg(zero == want->zero_linger, "the %s socket has SO_LINGER {%d, %d}, zero_linger %s",
                  side, lg.l_onoff, lg.l_linger, want->zero_linger ? "on" : "off");
}

/* Every socket of this process with the dialer's address at one end. */
static void check_sockets(const cw_addr *dialer, struct tcp_options *want)
{
    cwc_fdset open;
    cwc_open_fds(&open);
    for (int fd = 0; fd < 1024; fd++) {
        struct stat st;
        if (!open.open[fd] || fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode))
            continue;
        struct sockaddr_storage self = {0}, peer = {0};
        socklen_t slen = sizeof self, plen = sizeof peer;
        if (getsockname(fd, (struct sockaddr *)&self, &slen) != 0)
            continue;
        bool connected = getpeername(fd, (struct sockaddr *)&peer, &plen) == 0;
        if (is_addr(&self, dialer)) {
            expect_options(fd, want, "dialed");
            want->seen++;
        } else if (connected && is_addr(&peer, dialer)) {
            expect_options(fd, want, "accepted");
            want->seen++;
        }
    }
}

static void *options_root(cw_ctx *ctx, void *arg)
{
    struct tcp_options *want = arg;
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l = NULL;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    struct half_pair a, b;
    ck_assert_int_eq(cw_dial(ctx, &where, &a.sink, &a.stream), CW_OK);
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    b.sink = c.sink;
    b.stream = c.stream;
    ck_assert_int_eq(send_text(a.sink, "ping"), CW_OK);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(b.stream, 4, &got), CW_OK);
    cw_iobufs_release(got);
    check_sockets(&c.peer, want);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(native_tcp_options_applied, "native", "NET-018", PAR | CWC_NEEDS_NETWORK)
{
    const struct tcp_options runs[] = {
        {true, true, 0}, {false, false, 0}, {true, false, 0}, {false, true, 0}};
    for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
        struct tcp_options want = runs[i];
        cw_config cfg = cwc_config();
        cfg.tcp_nodelay = want.nodelay;
        cfg.zero_linger = want.zero_linger;
        cwc_run_ok(&cfg, options_root, &want);
        ck_assert_int_le(want.seen, 2);
    }
}

/* ---- The clock reads the system's time [NAT-003] ----------------------------------------- */

static uint64_t realtime_ns(void)
{
    struct timespec ts;
    ck_assert_int_eq(clock_gettime(CLOCK_REALTIME, &ts), 0);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

struct clock_check {
    uint64_t started; /* the system's time just before cw_start */
};

/* Each reading lies between the system's time read just before and just
 * after it, each widened by NAT-003's allowance: 10 ms, plus 0.05 % of
 * the time since cw_start was called. Load only widens the interval. */
static void *system_time_root(cw_ctx *ctx, void *arg)
{
    const struct clock_check *c = arg;
    for (int i = 0; i < 100; i++) {
        uint64_t before = realtime_ns();
        cw_time now = cw_current(ctx);
        uint64_t after = realtime_ns();
        uint64_t slack = 10 * CW_MSEC + (after - c->started) / 2000;
        ck_assert_msg(now + slack >= before, "cw_current reads %llu ns behind the system's time",
                      (unsigned long long)(before - now));
        ck_assert_msg(now <= after + slack, "cw_current reads %llu ns ahead of the system's time",
                      (unsigned long long)(now - after));
        if (i % 10 == 9)
            cw_sleep(ctx, CW_MSEC);
    }
    return NULL;
}

CWC_CASE(native_clock_reads_the_system_time, "native", "NAT-003", PAR)
{
    struct clock_check c = {realtime_ns()};
    cwc_run_ok(NULL, system_time_root, &c);
}
