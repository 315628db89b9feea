/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_stream.c - one connection of the deterministic network under
 * fuzzed sequences of sends, receives, peeks, closes and sleeps, with the
 * run's latency and jitter, checked against a model of two byte queues
 * (spec/18-network.md, NET-008 to NET-014, NET-027).
 *
 * INPUT. Byte 0 sets the network: latency 0-7 ms (bits 0-2) and jitter 0
 * or 0-15 ms (bits 3-6). Bytes 1-2 are the seed. Then operations, an
 * opcode byte and two operand bytes each (a byte past the end reads 0):
 *
 *   op  name          operands      what happens
 *    0  SEND          side len      that side sends len+1 bytes of its sequence
 *    1  RECV          side len      that side receives len%32+1 bytes, waiting at
 *                                   most long enough for everything sent to arrive
 *    2  PEEK          side max      that side peeks at most max bytes
 *    3  SETTLE        -  -          sleep until everything sent has arrived
 *    4  CLOSE_SINK    side -        that side closes its sink
 *    5  CLOSE_STREAM  side -        that side closes its stream
 *    6  SLEEP         ms -          sleep ms%8 ms
 *
 * Side 0 is the dialer, 1 the accepted end. Each side's sink sends bytes
 * numbered from 0 (byte n is n*131+7 mod 256), so any byte out of place is
 * seen. THE MODEL: for each direction the bytes sent, those received, and
 * whether the sink or the stream was closed or the stream poisoned. A recv
 * must return exactly the next bytes when enough were sent (it waits for
 * their arrival), fail with CW_ERR_RECV_FAILED when the sink closed before
 * enough, and otherwise time out, poisoning the stream (NET-010); a send
 * to a closed stream fails; a peek shows a prefix of what is due, all of
 * it once it arrived. Any difference aborts. NETWORK_STREAM_TRACE=1 prints
 * each operation as it runs.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cwrt/cwrt.h"
#define FUZZ_TARGET_NEEDS (FUZZ_NEEDS_BUFFERS | FUZZ_NEEDS_NETWORK)
#include "driver/candidate.h"
#include "driver/target.h"

#define MAX_OPS 200

typedef struct dir {
    cw_sink *sink;     /* the sending side's, NULL once closed */
    cw_stream *stream; /* the receiving side's, NULL once closed */
    uint64_t sent, received;
    bool sink_closed, stream_closed, poisoned, send_failed;
} dir;

typedef struct input {
    const uint8_t *p;
    size_t n, at;
} input;

static dir D[2];             /* D[0]: dialer -> accepted, D[1]: accepted -> dialer */
static cw_duration wait_all; /* long enough for any byte in flight to arrive */

static _Noreturn void fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "network_stream: ");
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    abort();
}

static uint8_t take(input *in)
{
    return in->at < in->n ? in->p[in->at++] : 0;
}

static uint8_t byte_of(uint64_t n)
{
    return (uint8_t)(n * 131 + 7);
}

static void op_send(dir *d, size_t len)
{
    if (!d->sink)
        return;
    uint8_t buf[256];
    for (size_t i = 0; i < len; i++)
        buf[i] = byte_of(d->sent + i);
    cw_iobufs *l = cw_iobufs_new(fuzz_candidate(NULL));
    cw_iobuf b;
    if (!l || cw_iobuf_copy(fuzz_candidate(NULL), buf, len, &b) != CW_OK)
        fail("no memory for a send");
    if (cw_iobufs_append(l, &b) != CW_OK)
        fail("no memory for a send");
    int rc = cw_sink_send(d->sink, l);
    cw_iobufs_release(l);
    int want = d->send_failed ? CW_ERR_CLOSED : d->stream_closed ? CW_ERR_SEND_FAILED : CW_OK;
    if (rc != want)
        fail("send of %zu: %s, expected %s [NET-008, NET-013, NET-014]", len, cw_strerror(rc),
             cw_strerror(want));
    if (rc == CW_OK)
        d->sent += len;
    else
        d->send_failed = true; /* the sink is poisoned from now on */
}

static void check_bytes(const dir *d, const cw_iobufs *got, size_t len)
{
    if (cw_iobufs_len(got) != len)
        fail("recv of %zu gave %zu bytes [NET-011]", len, cw_iobufs_len(got));
    size_t at = 0;
    const cw_iobuf *c;
    for (size_t i = 0; (c = cw_iobufs_chunk(got, i)); i++)
        for (size_t k = 0; k < c->len; k++, at++)
            if (c->data[k] != byte_of(d->received + at))
                fail("byte %llu received as %u, sent as %u [NET-009]",
                     (unsigned long long)(d->received + at), c->data[k], byte_of(d->received + at));
}

/* Returns whether the recv waited its whole bound, after which everything
 * sent before it has arrived (an end arrives after its own direction's
 * bytes only, so a recv that met it says nothing of the other). */
static bool op_recv(cw_ctx *ctx, dir *d, size_t len)
{
    if (!d->stream)
        return false;
    cw_iobufs *got = NULL;
    cw_wait w = cw_wait_stream_recv(d->stream, len, &got);
    int rc = cw_timeout(ctx, wait_all, &w);
    uint64_t due = d->sent - d->received;
    int want = d->poisoned      ? CW_ERR_CLOSED
               : due >= len     ? CW_OK
               : d->sink_closed ? CW_ERR_RECV_FAILED
                                : CW_ERR_TIMEOUT;
    if (rc != want)
        fail("recv of %zu with %llu due: %s, expected %s [NET-010, NET-011, NET-014]", len,
             (unsigned long long)due, cw_strerror(rc), cw_strerror(want));
    if (rc == CW_OK) {
        check_bytes(d, got, len);
        d->received += len;
        cw_iobufs_release(got);
        return false;
    }
    if (got)
        fail("a failed recv handed out bytes [NET-011]");
    d->poisoned = true; /* bytes of a failed or abandoned recv are lost */
    return rc == CW_ERR_TIMEOUT;
}

static void op_peek(dir *d, size_t max, bool settled)
{
    if (!d->stream || d->poisoned)
        return;
    uint8_t seen[256];
    size_t n = cw_stream_peek(d->stream, max, seen);
    uint64_t due = d->sent - d->received;
    size_t most = due < max ? (size_t)due : max;
    if (n > most || (settled && n != most))
        fail("peek of %zu showed %zu bytes with %llu due%s [NET-012, NET-027]", max, n,
             (unsigned long long)due, settled ? ", all arrived" : "");
    for (size_t i = 0; i < n; i++)
        if (seen[i] != byte_of(d->received + i))
            fail("peek showed byte %llu wrong [NET-012]", (unsigned long long)(d->received + i));
}

static void *root(cw_ctx *ctx, void *arg)
{
    input *in = arg;
    cw_addr any = cw_addr_loopback4(0), where;
    cw_listener *l;
    if (cw_bind(ctx, &any, &l) != CW_OK || cw_listener_local_addr(l, &where) != CW_OK)
        fail("bind failed");
    if (cw_dial(ctx, &where, &D[0].sink, &D[1].stream) != CW_OK)
        fail("dial failed");
    cw_conn c;
    if (cw_listener_accept(l, &c) != CW_OK)
        fail("accept failed");
    D[1].sink = c.sink;
    D[0].stream = c.stream;
    bool settled = true; /* everything sent so far has arrived */
    for (int ops = 0; ops < MAX_OPS && in->at < in->n; ops++) {
        uint8_t op = take(in) % 7, a = take(in), b = take(in);
        dir *d = &D[a & 1];
        if (getenv("NETWORK_STREAM_TRACE"))
            fprintf(stderr, "op %u side %u arg %u at %llu ms\n", op, a & 1, b,
                    (unsigned long long)(cw_current(ctx) / CW_MSEC));
        switch (op) {
        case 0:
            op_send(d, (size_t)b + 1);
            settled = false;
            break;
        case 1:
            if (op_recv(ctx, d, (size_t)(b % 32) + 1))
                settled = true; /* it waited long enough for everything */
            break;
        case 2:
            op_peek(d, b, settled);
            break;
        case 3:
            cw_sleep(ctx, wait_all);
            settled = true;
            break;
        case 4:
            if (d->sink)
                cw_sink_close(d->sink);
            d->sink = NULL;
            d->sink_closed = true;
            break;
        case 5:
            if (d->stream)
                cw_stream_close(d->stream);
            d->stream = NULL;
            d->stream_closed = true;
            break;
        default:
            cw_sleep(ctx, (cw_duration)(a % 8) * CW_MSEC);
            break;
        }
    }
    cw_listener_close(l);
    return NULL; /* what is left open closes with the run */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    input in = {data, size, 0};
    uint8_t net = take(&in);
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.audit = false;
    cfg.seed = take(&in);
    cfg.seed |= (uint64_t)take(&in) << 8;
    cfg.network_latency = (cw_duration)(net & 7) * CW_MSEC;
    cfg.network_jitter = (cw_duration)((net >> 3) & 15) * CW_MSEC;
    wait_all = cfg.network_latency + cfg.network_jitter + 2 * CW_MSEC;
    memset(D, 0, sizeof D);
    cw_run_result res;
    int rc = cw_start(fuzz_candidate(NULL), &cfg, root, &in, &res);
    if (rc != CW_OK)
        fail("the run ended with %s: %s", cw_strerror(rc), res.message);
    return 0;
}
