/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_system.c - a TCP connection whose sends and receives the
 * system fails, as a reset connection makes them fail (NET-014, NET-013).
 *
 * The failures come from the suite's calls (harness/syscalls.h), on the
 * TCP sockets of the case's listener's port only. A backend that reaches
 * its sockets another way (an io_uring, its own system call instructions)
 * is not seen: where the suite met none of its calls, the case asks only
 * for what a connection always does.
 *
 * The suite does not shorten sends and receives of sockets as it does
 * those of files (STOR-040): on Linux a short send means the socket's
 * buffer is full and a short receive that its queue is empty, and a
 * backend waiting for readiness may rely on both.
 */
#include <errno.h>

#include "cases/network_util.h"
#include "harness/syscalls.h"

static int listener_port(cw_listener *l)
{
    cw_addr at;
    ck_assert_int_eq(cw_listener_local_addr(l, &at), CW_OK);
    return at.port;
}

/* ---- Sends and receives the system fails [NET-014, NET-013] ------------------------------ */

/* A send that meets a reset fails with CW_ERR_SEND_FAILED, and every send
 * after it on that sink with CW_ERR_CLOSED. */
static void send_reset(cw_sink *sink, int port)
{
    cwc_syscalls_fail_tcp(port, CWC_SYS_WRITE, ECONNRESET);
    int rc = send_text(sink, "lost");
    cwc_syscalls_off();
    if (cwc_syscalls_met(CWC_SYS_WRITE) == 0 && rc == CW_OK)
        return; /* the backend sends some way the suite does not see */
    ck_assert_msg(rc == CW_ERR_SEND_FAILED,
                  "a send whose system call failed with ECONNRESET gave %d (%s) [NET-014]", rc,
                  cw_strerror(rc));
    ck_assert_int_eq(send_text(sink, "after"), CW_ERR_CLOSED);
}

/* A recv that needs bytes the system fails to give fails with
 * CW_ERR_RECV_FAILED, and every recv after it with CW_ERR_CLOSED; the
 * bytes that came before are still returned. */
static void recv_reset(cw_sink *peer, cw_stream *stream, int port)
{
    ck_assert_int_eq(send_text(peer, "early"), CW_OK);
    recv_text(stream, "early");
    cwc_syscalls_fail_tcp(port, CWC_SYS_READ, ECONNRESET);
    ck_assert_int_eq(send_text(peer, "later"), CW_OK);
    cw_iobufs *got = NULL;
    int rc = cw_stream_recv(stream, 5, &got);
    cwc_syscalls_off();
    if (cwc_syscalls_met(CWC_SYS_READ) == 0 && rc == CW_OK) {
        ck_assert(cw_iobufs_equal_bytes(got, "later", 5));
        cw_iobufs_release(got);
        return; /* the backend receives some way the suite does not see */
    }
    ck_assert_msg(rc == CW_ERR_RECV_FAILED && got == NULL,
                  "a recv whose system call failed with ECONNRESET gave %d (%s) [NET-014]", rc,
                  cw_strerror(rc));
    ck_assert_int_eq(cw_stream_recv(stream, 1, &got), CW_ERR_CLOSED);
}

static void *system_errors_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    int port = listener_port(l);
    send_reset(a.sink, port);
    recv_reset(b.sink, a.stream, port);
    /* The listener and the run go on: another connection carries bytes. */
    struct half_pair c, d;
    connect_through(ctx, l, &c, &d);
    ck_assert_int_eq(send_text(c.sink, "still"), CW_OK);
    recv_text(d.stream, "still");
    close_halves(&a);
    close_halves(&b);
    close_halves(&c);
    close_halves(&d);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_system_errors, "network", "NET-014 NET-013 NAT-008",
         CWC_NEEDS_NETWORK | CWC_UNLESS_DETERMINISTIC)
{
    cw_config cfg = cwc_config();
    cfg.io_backend = CW_IO_THREADS;
    cwc_run_ok(&cfg, system_errors_root, NULL);
}
