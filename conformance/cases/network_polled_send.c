/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_polled_send.c - a send polled on a sink whose socket is full
 * (NET-010): one that found nothing to do changes nothing. Its bytes never
 * arrive, and the sink takes the next send unpoisoned. A poll that sent
 * part of its bytes before the socket filled may poison the sink instead,
 * and then that part, and nothing after it, arrives.
 *
 * Nobody reads while small pieces are polled until one would block, so
 * the poll meets a socket with no room. A backend that hands such a send
 * to the kernel anyway (an io_uring send) delivers bytes of a call that
 * said it did nothing; one that counts the poll as under way poisons a
 * sink it did not touch.
 *
 * A single poll of a send larger than any socket buffers, on a fresh
 * connection nobody reads: the poll meets a socket with room, but not for
 * the whole send (NET-010, NET-036). A backend may send nothing of it and
 * leave the sink as it was, then the next send's bytes alone arrive; or
 * send part, then the sink is poisoned and that part, and nothing after
 * it, arrives. One that sent part and gave the sink back unpoisoned lets
 * the next send go on after the part.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "cases/network_util.h"

enum { PIECE = 4096, MAX_PIECES = 64 * 1024, READ = 1 << 20, MARK = 0xA5 };

/* The byte at `at` of the stream of pieces, piece after piece. */
static uint8_t stream_byte(size_t at)
{
    return (uint8_t)((at * 7 + (at >> 12) * 3) & 0xFE); /* even: never MARK */
}

static cw_iobufs *piece_list(size_t at, uint8_t *scratch)
{
    for (size_t i = 0; i < PIECE; i++)
        scratch[i] = stream_byte(at + i);
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf b;
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, scratch, PIECE, &b), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
    return l;
}

/* Poll sends of one piece each until one does not complete: the pieces
 * that did. */
static size_t poll_until_full(cw_sink *sink)
{
    uint8_t scratch[PIECE];
    for (size_t p = 0; p < MAX_PIECES; p++) {
        cw_iobufs *l = piece_list(p * PIECE, scratch);
        cw_wait w = cw_wait_sink_send(sink, l);
        int rc = cw_poll(&w, 1);
        cw_iobufs_release(l);
        if (rc == CW_ERR_WOULD_BLOCK)
            return p;
        ck_assert_int_eq(rc, 0);
        ck_assert_int_eq(w.result, CW_OK);
    }
    ck_abort_msg("%d pieces sent and the socket never filled", MAX_PIECES);
    return 0;
}

static void expect_stream_bytes(cw_stream *s, size_t from, size_t len)
{
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(s, len, &got), CW_OK);
    uint8_t *bytes = calloc(1, len);
    ck_assert_ptr_nonnull(bytes);
    ck_assert_int_eq(cw_iobufs_copy_out(got, bytes, len), CW_OK);
    for (size_t i = 0; i < len; i++)
        CWC_REQUIRE(bytes[i] == stream_byte(from + i), "byte %zu: %#x, sent %#x", from + i,
                    bytes[i], stream_byte(from + i));
    free(bytes);
    cw_iobufs_release(got);
}

/* One byte, or -1 at the end of the stream. */
static int next_byte(cw_stream *s)
{
    cw_iobufs *got = NULL;
    if (cw_stream_recv(s, 1, &got) != CW_OK)
        return -1;
    uint8_t b = 0;
    ck_assert_int_eq(cw_iobufs_copy_out(got, &b, 1), CW_OK);
    cw_iobufs_release(got);
    return b;
}

static void *polled_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    size_t pieces = poll_until_full(a.sink);
    uint8_t mark[PIECE];
    memset(mark, MARK, sizeof mark);
    for (size_t at = 0; at < pieces * PIECE; at += READ)
        expect_stream_bytes(b.stream, at, at + READ < pieces * PIECE ? READ : pieces * PIECE - at);
    /* Room again: the mark goes, unless the poll that did not complete
     * sent part of its piece and so poisoned the sink. */
    int rc = send_data(a.sink, mark, sizeof mark);
    cw_sink_close(a.sink);
    a.sink = NULL;
    size_t polled = 0; /* bytes of the polled piece that arrived */
    int c;
    while ((c = next_byte(b.stream)) >= 0 && c != MARK) {
        CWC_REQUIRE(c == stream_byte(pieces * PIECE + polled), "byte %zu after the pieces: %#x",
                    polled, c);
        polled++;
    }
    if (rc == CW_OK) {
        CWC_REQUIRE(polled == 0,
                    "%zu bytes of a polled send that did not complete arrived, and the sink was "
                    "not poisoned",
                    polled);
        size_t marks = c == MARK;
        while (next_byte(b.stream) == MARK)
            marks++;
        CWC_REQUIRE(marks == sizeof mark, "%zu bytes of the next send arrived, of %zu", marks,
                    sizeof mark);
    } else {
        ck_assert_int_eq(rc, CW_ERR_CLOSED);
        CWC_REQUIRE(polled > 0 && c < 0,
                    "the polled send poisoned the sink but sent nothing "
                    "(%zu bytes arrived)",
                    polled);
    }
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_polled_send_on_a_full_sink_changes_nothing, "network", "NET-010 NET-008",
         CWC_NEEDS_NETWORK | CWC_UNLESS_DETERMINISTIC)
{
    cwc_run_ok(NULL, polled_root, NULL);
}

/* ---- One poll of a send larger than the socket [NET-010, NET-036] ------------------------ */

enum { BIG_SEND_LEAST = 64 << 20 };

/* The last number in the file at `path` (a sysctl), or 0. */
static size_t sysctl_last(const char *path)
{
    FILE *f = fopen(path, "r");
    unsigned long long v = 0, x;
    if (!f)
        return 0;
    while (fscanf(f, "%llu", &x) == 1)
        v = x;
    fclose(f);
    return (size_t)v;
}

static size_t larger(size_t a, size_t b)
{
    return a > b ? a : b;
}

/* More than the two socket buffers of a connection nobody reads can hold
 * on this machine, so that no poll completes it: each buffer grows at most
 * to its sysctl's bound (autotuned, or twice rmem_max/wmem_max when set),
 * and holds fewer bytes than that. At least 64 MiB (Linux's defaults let
 * about 10 MiB sit there), half as much again as the bounds allow. */
static size_t big_send_size(void)
{
    size_t rcv = larger(sysctl_last("/proc/sys/net/ipv4/tcp_rmem"),
                        2 * sysctl_last("/proc/sys/net/core/rmem_max"));
    size_t snd = larger(sysctl_last("/proc/sys/net/ipv4/tcp_wmem"),
                        2 * sysctl_last("/proc/sys/net/core/wmem_max"));
    return larger(BIG_SEND_LEAST, (rcv + snd) + (rcv + snd) / 2);
}

/* The byte at `at` of the big send: the index mixed down to a byte, so
 * that no shift of the send by some period matches it. */
static uint8_t big_byte(size_t at)
{
    uint32_t x = (uint32_t)at * 0x9E3779B1u;
    x ^= x >> 15;
    x *= 0x85EBCA77u;
    x ^= x >> 13;
    return (uint8_t)x;
}

static void free_bytes(void *data, void *arg)
{
    (void)arg;
    free(data);
}

/* The big send as one chunk of adopted memory, the list's the only
 * reference: its bytes are not kept twice. */
static cw_iobufs *big_list(size_t size)
{
    uint8_t *bytes = malloc(size);
    ck_assert_ptr_nonnull(bytes);
    for (size_t i = 0; i < size; i++)
        bytes[i] = big_byte(i);
    cw_iobuf b;
    ck_assert_int_eq(cw_iobuf_adopt(cwc_backend, bytes, size, free_bytes, NULL, &b), CW_OK);
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
    return l;
}

/* What the peer got, told apart as it came: how many bytes, how many of
 * them from the start were the big send's own, and how many the mark. */
struct arrived {
    cw_stream *stream;
    size_t big_size; /* of the big send */
    size_t total, big, marks;
};

static void tally(struct arrived *a, const uint8_t *bytes, size_t n)
{
    for (size_t i = 0; i < n; i++, a->total++) {
        if (a->big == a->total && a->total < a->big_size && bytes[i] == big_byte(a->total))
            a->big++;
        if (a->marks == a->total && bytes[i] == MARK)
            a->marks++;
    }
}

/* The reader: everything until the stream ends, a chunk at a time. A recv
 * of one byte waits for what comes next, or fails at the end (NET-014);
 * then what the stream already holds beyond it (NET-012) is taken whole,
 * so that the end loses nothing and megabytes take no million recvs. */
static void *read_to_end(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct arrived *a = arg;
    uint8_t *chunk = malloc(READ);
    ck_assert_ptr_nonnull(chunk);
    cw_iobufs *got = NULL;
    int rc;
    while ((rc = cw_stream_recv(a->stream, 1, &got)) == CW_OK) {
        ck_assert_int_eq(cw_iobufs_copy_out(got, chunk, 1), CW_OK);
        cw_iobufs_release(got);
        size_t held = cw_stream_peek(a->stream, READ - 1, chunk + 1);
        if (held) {
            ck_assert_int_eq(cw_stream_recv(a->stream, held, &got), CW_OK);
            ck_assert_int_eq(cw_iobufs_copy_out(got, chunk + 1, held), CW_OK);
            cw_iobufs_release(got);
        }
        got = NULL;
        tally(a, chunk, 1 + held);
    }
    ck_assert_int_eq(rc, CW_ERR_RECV_FAILED);
    free(chunk);
    return NULL;
}

static void *polled_big_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    size_t big_size = big_send_size();
    cw_iobufs *big = big_list(big_size);
    cw_wait w = cw_wait_sink_send(a.sink, big);
    ck_assert_int_eq(cw_poll(&w, 1), CW_ERR_WOULD_BLOCK);
    cw_iobufs_release(big); /* the backend may hold its own references, no more */
    /* Only now the peer reads, for the mark's send may wait for room. */
    struct arrived got = {b.stream, big_size, 0, 0, 0};
    cw_handle *h = cw_spawn(cw_child(ctx, "reader"), read_to_end, &got);
    uint8_t mark[PIECE];
    memset(mark, MARK, sizeof mark);
    int rc = send_data(a.sink, mark, sizeof mark);
    cw_sink_close(a.sink);
    a.sink = NULL;
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    if (rc == CW_OK) {
        CWC_REQUIRE(got.big == 0,
                    "%zu bytes of the polled send arrived, yet the sink took the next send",
                    got.big);
        CWC_REQUIRE(got.total == sizeof mark && got.marks == sizeof mark,
                    "%zu bytes arrived, the first %zu of them the next send's, of %zu sent",
                    got.total, got.marks, sizeof mark);
    } else {
        ck_assert_int_eq(rc, CW_ERR_CLOSED);
        CWC_REQUIRE(got.total > 0, "the polled send poisoned the sink but sent nothing");
        CWC_REQUIRE(got.big == got.total,
                    "%zu bytes arrived, only the first %zu of them the polled send's", got.total,
                    got.big);
    }
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

/* The case above mostly meets a socket that filled on a piece boundary, so
 * its poll finds no room at all. This one's poll always finds room for
 * part of its send, never for all of it, however fast the machine: a
 * backend that sent that part and left the sink unpoisoned lets the next
 * send through, and the peer gets the part followed by that send's bytes,
 * or by none of them though that send returned CW_OK. */
CWC_CASE(network_polled_send_sent_in_part_poisons_the_sink, "network", "NET-010 NET-036",
         CWC_NEEDS_NETWORK | CWC_UNLESS_DETERMINISTIC)
{
    cwc_run_ok(NULL, polled_big_root, NULL);
}
