/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * channels.c - mpsc channels and oneshots (spec/09-channels.md).
 */
#include "cases/util.h"

struct producer {
    cw_chan *c;
    int first, count;
};

static void *produce(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    struct producer *p = arg;
    for (int i = 0; i < p->count; i++) {
        int v = p->first + i;
        ck_assert_int_eq(cw_chan_send(p->c, &v), CW_OK);
    }
    cw_chan_sender_drop(p->c);
    return NULL;
}

static void *fifo_root(cw_ctx *ctx, void *arg)
{
    size_t capacity = (size_t)(uintptr_t)arg;
    cw_chan *c = cw_chan_new(ctx, sizeof(int), capacity);
    ck_assert_ptr_nonnull(c);
    struct producer p[2] = {{c, 0, 100}, {c, 1000, 100}};
    cw_chan_sender_add(c); /* two producers; the creator's sender goes to the first */
    cw_handle *h[2];
    for (int i = 0; i < 2; i++)
        h[i] = cw_spawn(cw_child(ctx, "producer"), produce, &p[i]);
    int next[2] = {0, 1000}, got = 0, v;
    while (cw_chan_recv(c, &v) == CW_OK) {
        int who = v >= 1000;
        ck_assert_int_eq(v, next[who]); /* each producer's values arrive in order */
        next[who]++;
        got++;
    }
    ck_assert_int_eq(got, 200);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    cw_chan_receiver_drop(c);
    return NULL;
}

CWC_CASE(channel_fifo_and_close, "channels", "CHN-001 CHN-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, fifo_root, (void *)(uintptr_t)0);
    cwc_run_ok(NULL, fifo_root, (void *)(uintptr_t)3);
}

static void *recv_once(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    int v;
    return (void *)(intptr_t)cw_chan_recv(arg, &v);
}

/* A receiver already waiting on an empty channel is woken by the drop of
 * the last sender, and told CW_ERR_CLOSED; the drop of another sender
 * before it does not end its wait. */
static void *waiting_receiver_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_chan *c = cw_chan_new(ctx, sizeof(int), 1);
    ck_assert_ptr_nonnull(c);
    cw_chan_sender_add(c);
    cw_handle *h = cw_spawn(cw_child(ctx, "receiver"), recv_once, c);
    ck_assert_int_eq(cw_sleep(ctx, 10 * CW_MSEC), CW_OK); /* it waits by now */
    cw_chan_sender_drop(c);
    void *early = NULL;
    cw_wait join = cw_wait_join(h, &early);
    ck_assert_int_eq(cw_timeout(ctx, 10 * CW_MSEC, &join), CW_ERR_TIMEOUT);
    cw_chan_sender_drop(c);
    void *rc = NULL;
    ck_assert_int_eq(cw_join(h, &rc), CW_OK);
    ck_assert_int_eq((int)(intptr_t)rc, CW_ERR_CLOSED);
    cw_handle_release(h);
    cw_chan_receiver_drop(c);
    return NULL;
}

CWC_CASE(channel_last_sender_wakes_a_waiting_receiver, "channels", "CHN-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, waiting_receiver_root, NULL);
}

/* A send to the full channel `arg`: its result. */
static void *send_to_full(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    int v = 2;
    return (void *)(intptr_t)cw_chan_send(arg, &v);
}

static void *bounded_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_chan *c = cw_chan_new(ctx, sizeof(int), 2);
    int v = 1;
    ck_assert_int_eq(cw_chan_send(c, &v), CW_OK);
    ck_assert_int_eq(cw_chan_send(c, &v), CW_OK);
    cw_wait send = cw_wait_send(c, &v);
    ck_assert_int_eq(cw_timeout(ctx, 10 * CW_MSEC, &send), CW_ERR_TIMEOUT);
    ck_assert_int_eq(cw_chan_recv(c, &v), CW_OK);
    ck_assert_int_eq(cw_chan_try_send(c, &v), CW_OK);
    /* A sender suspended on the full channel when the receiver goes gets
     * CW_ERR_CLOSED too: the drop wakes it. The sleep only makes it likely
     * that it is suspended by then; sooner or later, its answer is the same. */
    cw_handle *sender = cw_spawn(cw_child(ctx, "sender"), send_to_full, c);
    cw_sleep(ctx, 10 * CW_MSEC);
    cw_chan_receiver_drop(c);
    void *sent = NULL;
    cw_wait join = cw_wait_join(sender, &sent);
    ck_assert_int_eq(cw_timeout(ctx, cwc_scaled(10 * CW_SEC), &join), CW_OK);
    ck_assert_int_eq((int)(intptr_t)sent, CW_ERR_CLOSED);
    cw_handle_release(sender);
    ck_assert_int_eq(cw_chan_send(c, &v), CW_ERR_CLOSED);
    cw_chan_sender_drop(c);
    ck_assert_ptr_null(cw_chan_new(ctx, 0, 1));
    ck_assert_ptr_null(cw_oneshot_new(ctx, 0));
    return NULL;
}

CWC_CASE(channel_bounded_blocks_and_receiver_drop, "channels", "CHN-002 CHN-004 CHN-006 RUN-008",
         CWC_REPEATED)
{
    cwc_run_ok(NULL, bounded_root, NULL);
}

static void *oneshot_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_oneshot *o = cw_oneshot_new(ctx, sizeof(long));
    long v = 99, out = 0;
    ck_assert_int_eq(cw_oneshot_send(o, &v), CW_OK);
    ck_assert_int_eq(cw_oneshot_recv(o, &out), CW_OK); /* both sides ended: freed */
    ck_assert_int_eq(out, 99);

    cw_oneshot *dropped = cw_oneshot_new(ctx, sizeof(long));
    cw_oneshot_sender_drop(dropped);
    ck_assert_int_eq(cw_oneshot_recv(dropped, &out), CW_ERR_CLOSED);

    cw_oneshot *twice = cw_oneshot_new(ctx, sizeof(long));
    ck_assert_int_eq(cw_oneshot_send(twice, &v), CW_OK);
    ck_assert_int_eq(cw_oneshot_send(twice, &v), CW_ERR_INVALID);
    cw_oneshot_receiver_drop(twice);

    cw_oneshot *deaf = cw_oneshot_new(ctx, sizeof(long));
    cw_oneshot_receiver_drop(deaf);
    ck_assert_int_eq(cw_oneshot_send(deaf, &v), CW_ERR_CLOSED);
    return NULL;
}

CWC_CASE(oneshot_send_recv_and_drops, "channels", "CHN-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, oneshot_root, NULL);
}

/* An unbounded channel takes any number of values without a receive:
 * every try_send succeeds, then the values come out in order. */
#define MANY_VALUES 10000

static void *unbounded_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_chan *c = cw_chan_new(ctx, sizeof(int), 0);
    ck_assert_ptr_nonnull(c);
    for (int i = 0; i < MANY_VALUES; i++) {
        int rc = cw_chan_try_send(c, &i);
        CWC_REQUIRE(rc == CW_OK, "try_send of value %d: %d", i, rc);
    }
    cw_chan_sender_drop(c);
    int v, got = 0;
    while (cw_chan_recv(c, &v) == CW_OK) {
        CWC_REQUIRE(v == got, "received %d where %d was due", v, got);
        got++;
    }
    ck_assert_int_eq(got, MANY_VALUES);
    cw_chan_receiver_drop(c);
    return NULL;
}

CWC_CASE(channel_unbounded_never_waits, "channels", "CHN-002 CHN-001 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, unbounded_root, NULL);
}

/* Values are copied whole, however large their element size. */
#define LARGE_ELEM 4096

static void fill_elem(uint8_t *e, unsigned seed)
{
    for (size_t i = 0; i < LARGE_ELEM; i++)
        e[i] = (uint8_t)(seed * 131u + i * 7u + (i >> 8));
}

static void check_elem(const uint8_t *e, unsigned seed)
{
    uint8_t want[LARGE_ELEM];
    fill_elem(want, seed);
    ck_assert_msg(memcmp(e, want, LARGE_ELEM) == 0, "element %u changed in the channel", seed);
}

static void large_through_channel(cw_ctx *ctx, size_t capacity)
{
    static uint8_t in[LARGE_ELEM], out[LARGE_ELEM];
    cw_chan *c = cw_chan_new(ctx, LARGE_ELEM, capacity);
    ck_assert_ptr_nonnull(c);
    for (unsigned i = 0; i < 2; i++) {
        fill_elem(in, i);
        ck_assert_int_eq(cw_chan_send(c, in), CW_OK);
    }
    for (unsigned i = 0; i < 2; i++) {
        memset(out, 0, sizeof out);
        ck_assert_int_eq(cw_chan_recv(c, out), CW_OK);
        check_elem(out, i);
    }
    cw_chan_sender_drop(c);
    cw_chan_receiver_drop(c);
}

static void *large_elements_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    large_through_channel(ctx, 0);
    large_through_channel(ctx, 2);
    static uint8_t in[LARGE_ELEM], out[LARGE_ELEM];
    cw_oneshot *o = cw_oneshot_new(ctx, LARGE_ELEM);
    fill_elem(in, 7);
    ck_assert_int_eq(cw_oneshot_send(o, in), CW_OK);
    ck_assert_int_eq(cw_oneshot_recv(o, out), CW_OK);
    check_elem(out, 7);
    return NULL;
}

CWC_CASE(channel_large_elements, "channels", "CHN-001 CHN-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, large_elements_root, NULL);
}

/* A channel of large values and a capacity no memory holds: NULL, or a
 * channel that carries a value there and back. */
static void *huge_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_ptr_null(cw_chan_new(ctx, 0, 4));
    enum { ELEM = 1 << 16 };
    static uint8_t in[ELEM], out[ELEM];
    memset(in, 0x5a, sizeof in);
    size_t capacities[] = {(size_t)1 << 34, SIZE_MAX / ELEM};
    for (size_t i = 0; i < sizeof capacities / sizeof capacities[0]; i++) {
        cw_chan *c = cw_chan_new(ctx, ELEM, capacities[i]);
        if (!c)
            continue;
        ck_assert_int_eq(cw_chan_send(c, in), CW_OK);
        ck_assert_int_eq(cw_chan_recv(c, out), CW_OK);
        ck_assert(memcmp(in, out, ELEM) == 0);
        cw_chan_sender_drop(c);
        cw_chan_receiver_drop(c);
    }
    return NULL;
}

CWC_CASE(channel_any_capacity, "channels", "CHN-006 CHN-001 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, huge_root, NULL);
}
