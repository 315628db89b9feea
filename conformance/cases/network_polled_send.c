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
 */
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
