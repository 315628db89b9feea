/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_given_up.c - what arrives of a send that ran past the run's
 * write timeout (NET-036): a prefix of its bytes, unchanged, and nothing
 * after it, though its caller released the bytes as soon as the send
 * returned.
 *
 * Nobody reads until a send waits past the timeout, so that send is
 * given up midway. Each piece is chunks of adopted memory whose release
 * function writes them over before freeing them, and counts them: every
 * one is released by the run's end, and a backend that goes on sending the
 * given-up piece (an io_uring send still in the kernel) from the caller's
 * bytes, without a reference of its own, delivers the scribble. The
 * reader then takes every whole piece, lets the kernel go on for a
 * while, and reads what came of the given-up one.
 *
 * The same pieces, sent by a writer whose reader takes each only after a
 * pause, so that send after send waits for room: every chunk is still
 * released by the run's end (BUF-004), whichever way the rest of each
 * send went (NAT-008).
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "cases/network_util.h"

enum { PIECE = 1 << 20, CHUNKS = 4, MAX_PIECES = 1024, TAIL_READ = 4096, SCRIBBLE = 0xEE };

/* Chunks adopted, and released: at the run's end every one was. */
static atomic_int adopted, released;

static uint8_t piece_byte(int piece, size_t i)
{
    return (uint8_t)((size_t)piece * 13 + i * 151 + (i >> 11) + 1);
}

/* Write the bytes over before freeing them: read after this, they are
 * not the piece's. */
static void scribble_free(void *data, void *arg)
{
    (void)arg;
    memset(data, SCRIBBLE, PIECE / CHUNKS);
    free(data);
    atomic_fetch_add(&released, 1);
}

/* Piece `p` as a list of CHUNKS adopted chunks, the list's the only
 * references. */
static cw_iobufs *piece_list(int p)
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    ck_assert_ptr_nonnull(l);
    for (size_t c = 0; c < CHUNKS; c++) {
        uint8_t *bytes = malloc(PIECE / CHUNKS);
        ck_assert_ptr_nonnull(bytes);
        for (size_t i = 0; i < PIECE / CHUNKS; i++)
            bytes[i] = piece_byte(p, c * (PIECE / CHUNKS) + i);
        cw_iobuf chunk;
        ck_assert_int_eq(
            cw_iobuf_adopt(cwc_backend, bytes, PIECE / CHUNKS, scribble_free, NULL, &chunk), CW_OK);
        atomic_fetch_add(&adopted, 1);
        ck_assert_int_eq(cw_iobufs_append(l, &chunk), CW_OK);
    }
    return l;
}

/* Send pieces until one times out: its number. The next send finds the
 * sink poisoned (NET-010). */
static int send_until_given_up(cw_sink *sink)
{
    int rc = CW_OK, p;
    for (p = 0; p < MAX_PIECES; p++) {
        cw_iobufs *l = piece_list(p);
        rc = cw_sink_send(sink, l);
        cw_iobufs_release(l); /* the backend may hold its own references, no more */
        if (rc != CW_OK)
            break;
    }
    ck_assert_int_eq(rc, CW_ERR_TIMEOUT);
    cw_iobufs *l = piece_list(p + 1);
    ck_assert_int_eq(cw_sink_send(sink, l), CW_ERR_CLOSED);
    cw_iobufs_release(l);
    return p;
}

static void expect_whole_piece(cw_stream *s, int p)
{
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(s, PIECE, &got), CW_OK);
    uint8_t *bytes = calloc(1, PIECE); /* zeroed: a byte copy_out missed is seen */
    ck_assert_ptr_nonnull(bytes);
    ck_assert_int_eq(cw_iobufs_copy_out(got, bytes, PIECE), CW_OK);
    for (size_t i = 0; i < PIECE; i++)
        CWC_REQUIRE(bytes[i] == piece_byte(p, i), "piece %d, byte %zu: %#x, sent %#x", p, i,
                    bytes[i], piece_byte(p, i));
    free(bytes);
    cw_iobufs_release(got);
}

/* What came of the given-up piece `p`, read in small recvs until the
 * stream ends (the last, short, one fails): each byte is the piece's own,
 * and none lies beyond it. */
static size_t expect_prefix(cw_stream *s, int p)
{
    size_t at = 0;
    cw_iobufs *got = NULL;
    while (cw_stream_recv(s, TAIL_READ, &got) == CW_OK) {
        uint8_t bytes[TAIL_READ] = {0};
        ck_assert_int_eq(cw_iobufs_copy_out(got, bytes, TAIL_READ), CW_OK);
        cw_iobufs_release(got);
        got = NULL;
        CWC_REQUIRE(at + TAIL_READ <= PIECE, "bytes beyond the given-up piece %d (at %zu)", p, at);
        for (size_t i = 0; i < TAIL_READ; i++, at++)
            CWC_REQUIRE(bytes[i] == piece_byte(p, at),
                        "given-up piece %d, byte %zu: %#x, sent %#x%s", p, at, bytes[i],
                        piece_byte(p, at),
                        bytes[i] == SCRIBBLE ? " (released bytes were sent)" : "");
    }
    return at;
}

static void *given_up_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    int given_up = send_until_given_up(a.sink);
    for (int p = 0; p < given_up; p++)
        expect_whole_piece(b.stream, p);
    /* Room again: what the backend still sends of the given-up piece goes. */
    cw_sleep(ctx, 100 * CW_MSEC);
    cw_sink_close(a.sink);
    a.sink = NULL;
    (void)expect_prefix(b.stream, given_up);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_given_up_send_arrives_as_a_prefix, "network", "NET-036 NET-010 NET-019 BUF-004",
         CWC_NEEDS_NETWORK | CWC_UNLESS_DETERMINISTIC)
{
    cw_config cfg = cwc_config();
    cfg.write_timeout = 300 * CW_MSEC;
    cwc_run_ok(&cfg, given_up_root, NULL);
    /* The backend's own references, held while it sent, are gone too. */
    CWC_REQUIRE(atomic_load(&released) == atomic_load(&adopted), "%d of %d chunks released",
                atomic_load(&released), atomic_load(&adopted));
}

/* ---- Sends that wait, one after another [BUF-004, NAT-008] ------------------------------ */

enum { LATE_PIECES = 16 };

/* The reader: each piece taken only after a pause, so that every send of
 * the writer fills the socket and waits for room (with CW_IO_URING the
 * rest of it may go through the ring), one such send after another. */
static void *late_reader(cw_ctx *ctx, void *arg)
{
    cw_stream *s = arg;
    for (int p = 0; p < LATE_PIECES; p++) {
        ck_assert_int_eq(cw_sleep(ctx, 10 * CW_MSEC), CW_OK);
        expect_whole_piece(s, p);
    }
    return NULL;
}

static void *late_reader_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_handle *h = cw_spawn(cw_child(ctx, "reader"), late_reader, b.stream);
    for (int p = 0; p < LATE_PIECES; p++) {
        cw_iobufs *list = piece_list(p);
        ck_assert_int_eq(cw_sink_send(a.sink, list), CW_OK);
        cw_iobufs_release(list); /* the backend may hold its own references, no more */
    }
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

/* Every chunk of every send that waited is released by the run's end: a
 * reference the backend took for one send is given back, not left behind
 * when the next send of the sink takes its own. */
CWC_CASE(network_waiting_sends_release_adopted_bytes, "network", "BUF-004 NAT-008 NET-019",
         CWC_NEEDS_NETWORK)
{
    atomic_store(&adopted, 0);
    atomic_store(&released, 0);
    cwc_run_ok(NULL, late_reader_root, NULL);
    CWC_REQUIRE(atomic_load(&released) == atomic_load(&adopted), "%d of %d chunks released",
                atomic_load(&released), atomic_load(&adopted));
}
