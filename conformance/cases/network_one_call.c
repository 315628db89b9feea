/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_one_call.c - a half carries one send or recv at a time
 * (NET-035): while one task's call waits on a half, another task's send
 * or recv there, a poll included, is refused with CW_ERR_INVALID and
 * changes nothing. The waiting call then completes with exactly its own
 * bytes, and the half takes the next call, unpoisoned.
 *
 * The refused calls are made with the half in the state where a wrong
 * answer shows: the stream holds part of what the waiting recv asked for
 * (a refused recv that took some of it would cut that recv's bytes), and
 * the sink's waiting send is midway through (a refused send that went out
 * would land inside it, or after it where the next piece should be).
 */
#include <stdatomic.h>

#include "cases/network_util.h"

/* ---- A recv waits ---------------------------------------------------------------------- */

struct waiting_recv {
    cw_stream *stream;
    cw_iobufs *got;
    atomic_int started; /* set just before the reader's select */
};

/* The recv waits in a select, behind a channel that never delivers: a
 * recv waiting there holds the stream as much as cw_stream_recv does. */
static void *recv_ten(cw_ctx *ctx, void *arg)
{
    struct waiting_recv *r = arg;
    cw_chan *never = cw_chan_new(ctx, sizeof(int), 1);
    ck_assert_ptr_nonnull(never);
    int unused;
    cw_wait w[2] = {cw_wait_recv(never, &unused), cw_wait_stream_recv(r->stream, 10, &r->got)};
    atomic_store(&r->started, 1);
    ck_assert_int_eq(cw_select(w, 2), 1);
    ck_assert_int_eq(w[1].result, CW_OK);
    cw_chan_sender_drop(never);
    cw_chan_receiver_drop(never);
    return NULL;
}

/* A recv of `len` on `s`, by this task and as a poll: each refused. */
static void expect_recv_refused(cw_stream *s, size_t len)
{
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(s, len, &got), CW_ERR_INVALID);
    ck_assert_ptr_null(got);
    cw_wait w = cw_wait_stream_recv(s, len, &got);
    ck_assert_int_eq(cw_poll(&w, 1), 0);
    ck_assert_int_eq(w.result, CW_ERR_INVALID);
    ck_assert_ptr_null(got);
}

static void expect_bytes(cw_stream *s, const char *want, size_t len)
{
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(s, len, &got), CW_OK);
    ck_assert(cw_iobufs_equal_bytes(got, want, len));
    cw_iobufs_release(got);
}

/* Neither half a refusal met was poisoned: a's sink still reaches b's
 * stream. Then the connection and its listener are closed. */
static void still_carries_then_close(struct half_pair *a, struct half_pair *b, cw_listener *l)
{
    ck_assert_int_eq(send_text(a->sink, "end"), CW_OK);
    expect_bytes(b->stream, "end", 3);
    close_halves(a);
    close_halves(b);
    cw_listener_close(l);
}

static void *one_recv_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    ck_assert_int_eq(send_text(a.sink, "01234"), CW_OK);
    struct waiting_recv r = {b.stream, NULL, 0};
    cw_handle *h = cw_spawn(cw_child(ctx, "reader"), recv_ten, &r);
    /* The reader waits for five more once the five it has are in the
     * stream's buffer, which only its recv fills: wait for that, not for a
     * time a slow machine could overrun. */
    uint8_t seen[16];
    while (!atomic_load(&r.started) || cw_stream_peek(b.stream, sizeof seen, seen) < 5)
        cw_sleep(ctx, CW_MSEC);

    expect_recv_refused(b.stream, 3);  /* fewer than are held */
    expect_recv_refused(b.stream, 10); /* as many as the reader asked */
    ck_assert_uint_eq(cw_stream_peek(b.stream, sizeof seen, seen), 5);
    ck_assert(memcmp(seen, "01234", 5) == 0);

    ck_assert_int_eq(send_text(a.sink, "56789"), CW_OK);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    ck_assert(cw_iobufs_equal_bytes(r.got, "0123456789", 10));
    cw_iobufs_release(r.got);

    still_carries_then_close(&a, &b, l); /* the stream was not poisoned */
    return NULL;
}

CWC_CASE(network_one_recv_at_a_time, "network", "NET-035 NET-011 NET-012 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, one_recv_root, NULL);
}

/* ---- A send waits (TCP: a memory send never does) ----------------------------------------- */

/* A sender sends pieces until told to stop; nobody reads yet, so once the
 * kernel's buffers on both sides are full (how large they grow is the
 * host's setting) its send waits. */
enum { PIECE = 1 << 20, MAX_PIECES = 1024 };

struct sender {
    cw_sink *sink;
    atomic_int started, done; /* sends begun, sends completed */
    atomic_bool stop;
};

static uint8_t piece_byte(int piece, size_t i)
{
    return (uint8_t)((size_t)piece * 7 + i * 131 + (i >> 12));
}

static void fill_piece(uint8_t *bytes, int piece)
{
    for (size_t i = 0; i < PIECE; i++)
        bytes[i] = piece_byte(piece, i);
}

/* Piece `i` as a list of one chunk, made before the send begins: a copy
 * of a megabyte takes long on a slow backend or machine, and the send is
 * not under way while it is made. */
static cw_iobufs *piece_list(uint8_t *bytes, int i)
{
    fill_piece(bytes, i);
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf b;
    ck_assert_ptr_nonnull(l);
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, bytes, PIECE, &b), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
    return l;
}

static void *send_pieces(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct sender *sd = arg;
    uint8_t *bytes = malloc(PIECE);
    ck_assert_ptr_nonnull(bytes);
    for (int i = 0; !atomic_load(&sd->stop); i++) {
        cw_iobufs *l = piece_list(bytes, i);
        atomic_store(&sd->started, i + 1);
        ck_assert_int_eq(cw_sink_send(sd->sink, l), CW_OK);
        atomic_store(&sd->done, i + 1);
        cw_iobufs_release(l);
    }
    free(bytes);
    return NULL;
}

/* Until the sender is inside a send that has made no progress for three
 * looks in a row: it waits for the peer to read. */
static void until_send_waits(cw_ctx *ctx, struct sender *sd)
{
    int last = -1, still = 0;
    while (still < 3) {
        cw_sleep(ctx, 20 * CW_MSEC);
        int done = atomic_load(&sd->done);
        bool inside = atomic_load(&sd->started) > done;
        still = inside && done == last ? still + 1 : 0;
        last = done;
        ck_assert_int_lt(done, MAX_PIECES);
    }
}

/* The sends of "x" that went through, each whole ahead of the piece the
 * sender had marked as begun but not yet handed to the sink. */
enum { MAX_EARLY = 8 };
struct early_sends {
    int before[MAX_EARLY];
    int n;
};

/* A send of "x" while the sender's send waits: refused [NET-035]. Looks
 * cannot tell a send that waits from a sender stopped by the machine just
 * before its send began: then "x" goes first, whole, which the stream
 * must show ahead of that piece, and the wait is looked for again. */
static void until_send_refused(cw_ctx *ctx, struct sender *sd, struct early_sends *early)
{
    for (;;) {
        until_send_waits(ctx, sd);
        int piece = atomic_load(&sd->started) - 1;
        int rc = send_text(sd->sink, "x");
        if (rc == CW_ERR_INVALID)
            return;
        ck_assert_msg(rc == CW_OK && early->n < MAX_EARLY,
                      "a send made while another waited gave %d (%s), not CW_ERR_INVALID "
                      "[NET-035]",
                      rc, cw_strerror(rc));
        early->before[early->n++] = piece;
    }
}

static void expect_poll_refused(cw_sink *s)
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf one;
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, "y", 1, &one), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &one), CW_OK);
    cw_wait w = cw_wait_sink_send(s, l);
    ck_assert_int_eq(cw_poll(&w, 1), 0);
    ck_assert_int_eq(w.result, CW_ERR_INVALID);
    cw_iobufs_release(l);
}

/* Every piece sent, in order, and nothing inside them: an "x" that went
 * through only whole, ahead of the piece whose send had not begun. */
static void expect_pieces(cw_stream *s, int pieces, const struct early_sends *early)
{
    uint8_t *want = malloc(PIECE);
    ck_assert_ptr_nonnull(want);
    for (int p = 0, e = 0; p < pieces; p++) {
        for (; e < early->n && early->before[e] == p; e++)
            expect_bytes(s, "x", 1);
        cw_iobufs *l = NULL;
        ck_assert_int_eq(cw_stream_recv(s, PIECE, &l), CW_OK);
        fill_piece(want, p);
        ck_assert_msg(cw_iobufs_equal_bytes(l, want, PIECE), "piece %d of %d wrong", p, pieces);
        cw_iobufs_release(l);
    }
    free(want);
}

static void *one_send_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    struct sender sd = {.sink = a.sink};
    atomic_init(&sd.started, 0);
    atomic_init(&sd.done, 0);
    atomic_init(&sd.stop, false);
    cw_handle *h = cw_spawn(cw_child(ctx, "sender"), send_pieces, &sd);
    struct early_sends early = {.n = 0};
    until_send_refused(ctx, &sd, &early);
    expect_poll_refused(a.sink);
    /* The waiting send completes once read, and is the last. */
    atomic_store(&sd.stop, true);
    expect_pieces(b.stream, atomic_load(&sd.started), &early);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    ck_assert_int_eq(atomic_load(&sd.done), atomic_load(&sd.started));
    still_carries_then_close(&a, &b, l); /* the sink was not poisoned */
    return NULL;
}

CWC_CASE(network_one_send_at_a_time, "network", "NET-035 NET-008",
         CWC_NEEDS_NETWORK | CWC_UNLESS_DETERMINISTIC)
{
    cwc_run_ok(NULL, one_send_root, NULL);
}

/* The refused recvs above, as a deterministic backend records them: each
 * a `recv` event with CW_ERR_INVALID and no bytes (DET-022), the two made
 * by calls and the two made by polls; the reader's own recv is another. */
typedef struct refused_recvs {
    int refused, other;
} refused_recvs;

static void count_recvs(void *arg, const cw_event *e)
{
    refused_recvs *n = arg;
    if (strcmp(e->label, "recv") != 0 || e->nfields != 4 || e->fields[2].len != 4)
        return;
    const uint8_t *b = e->fields[2].data;
    int32_t result =
        (int32_t)((uint32_t)b[0] << 24 | (uint32_t)b[1] << 16 | (uint32_t)b[2] << 8 | b[3]);
    if (result == CW_ERR_INVALID && e->fields[3].len == 0)
        n->refused++;
    else
        n->other++;
}

CWC_CASE(det_refused_recv_is_recorded, "network", "DET-022 NET-035 RUN-008",
         CW_CAP_DETERMINISTIC | CW_CAP_AUDIT | CWC_REPEATED)
{
    refused_recvs n = {0, 0};
    cw_config cfg = cwc_config();
    cfg.event_log = count_recvs;
    cfg.event_log_arg = &n;
    cwc_run_ok(&cfg, one_recv_root, NULL);
    ck_assert_msg(n.refused == 4, "%d refused recvs recorded, not 4 (DET-022)", n.refused);
    ck_assert_int_gt(n.other, 0);
}
