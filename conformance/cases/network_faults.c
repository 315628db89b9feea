/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_faults.c - the faults of a deterministic network
 * (18-network.md, NET-028 to NET-033): partitions that refuse dials and
 * hold bytes until repaired, a dial failure rate and a reset rate decided
 * by the run's seeded stream, and what a backend without them answers.
 *
 * Where a rate decides, the expected outcome is computed from the values
 * the same run would have drawn: a second run of the same program calls
 * cw_random_u64 where the first dials or sends, so the cases follow the
 * spec's decision rule without depending on the implementation's PRNG
 * position at the start of the root.
 */
#include <string.h>

#include "cases/network_util.h"

#define DET CW_CAP_DETERMINISTIC

static cw_addr loopback_any(void)
{
    return cw_addr_loopback4(0);
}

static cw_addr everyone4(void)
{
    return cw_addr_ipv4(0, 0, 0, 0, 0);
}

static cw_listener *listen_any(cw_ctx *ctx, cw_addr *where)
{
    cw_addr any = loopback_any();
    cw_listener *l;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, where), CW_OK);
    return l;
}

/* Dial `where`: CW_OK (closing both halves and taking the connection off
 * the listener) or the dial's error, with both halves NULL. */
static int dial_once(cw_ctx *ctx, cw_listener *l, const cw_addr *where)
{
    cw_sink *sink = (cw_sink *)1;
    cw_stream *stream = (cw_stream *)1;
    int rc = cw_dial(ctx, where, &sink, &stream);
    if (rc != CW_OK) {
        ck_assert_ptr_null(sink);
        ck_assert_ptr_null(stream);
        return rc;
    }
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    cw_sink_close(sink);
    cw_stream_close(stream);
    return rc;
}

/* Nothing waits on the listener: a poll of an accept finds nothing. */
static void expect_no_connection(cw_listener *l)
{
    cw_conn c;
    cw_wait w = cw_wait_accept(l, &c);
    ck_assert_int_eq(cw_poll(&w, 1), CW_ERR_WOULD_BLOCK);
}

/* ---- Partitions and dials [NET-028] -------------------------------------------------- */

static void *dials_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr where, dialers = loopback_any();
    cw_listener *l = listen_any(ctx, &where);
    ck_assert_int_eq(cw_network_partition(ctx, &where, &dialers), CW_OK);
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_ERR_CONNECTION_FAILED);
    expect_no_connection(l);
    /* Given in the other order, the repair removes it. */
    ck_assert_int_eq(cw_network_repair(ctx, &dialers, &where), CW_OK);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &where, &sink, &stream), CW_OK);
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(l, &c), CW_OK);
    /* The refused dial used its port [NET-007]. */
    ck_assert_uint_eq(c.peer.port, CW_NET_EPHEMERAL_FIRST + 1);
    cw_sink_close(sink);
    cw_stream_close(stream);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);

    /* A pair partitioned twice is partitioned once. */
    ck_assert_int_eq(cw_network_partition(ctx, &where, &dialers), CW_OK);
    ck_assert_int_eq(cw_network_partition(ctx, &where, &dialers), CW_OK);
    ck_assert_int_eq(cw_network_repair(ctx, &where, &dialers), CW_OK);
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_OK);

    /* Another partition cutting the same dials keeps them cut. */
    cw_addr all = everyone4();
    ck_assert_int_eq(cw_network_partition(ctx, &where, &dialers), CW_OK);
    ck_assert_int_eq(cw_network_partition(ctx, &all, &where), CW_OK);
    ck_assert_int_eq(cw_network_repair(ctx, &where, &dialers), CW_OK);
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_ERR_CONNECTION_FAILED);
    ck_assert_int_eq(cw_network_repair(ctx, &where, &all), CW_OK);
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_OK);

    /* A partition made after an unrelated one cuts all the same. */
    cw_addr elsewhere = cw_addr_ipv4(10, 0, 0, 1, 0);
    ck_assert_int_eq(cw_network_partition(ctx, &elsewhere, &all), CW_OK);
    ck_assert_int_eq(cw_network_partition(ctx, &where, &dialers), CW_OK);
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_ERR_CONNECTION_FAILED);
    /* Repairing the later of the two removes it, not only the first one
     * made: the dials go through while the unrelated one stays. */
    ck_assert_int_eq(cw_network_repair(ctx, &where, &dialers), CW_OK);
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_OK);
    ck_assert_int_eq(cw_network_repair(ctx, &elsewhere, &all), CW_OK);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_partition_refuses_dials, "network", "NET-028 NET-007 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, dials_root, NULL);
}

/* An address is its family, IP and port [NET-037]: a pattern whose
 * padding bytes hold anything still matches. */
static void *padded_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr any6 = cw_addr_loopback6(0), where;
    cw_listener *l;
    ck_assert_int_eq(cw_bind(ctx, &any6, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    cw_addr padded;
    memset(&padded, 0xa5, sizeof padded);
    padded.family = CW_ADDR_IPV6;
    memcpy(padded.ip, where.ip, sizeof padded.ip);
    padded.port = where.port;
    ck_assert_int_eq(cw_network_partition(ctx, &padded, &any6), CW_OK);
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_ERR_CONNECTION_FAILED);
    ck_assert_int_eq(cw_network_repair(ctx, &any6, &padded), CW_OK);
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_OK);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_partition_pattern_padding, "network", "NET-028 NET-037 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, padded_root, NULL);
}

/* Whether a dial from the next dialer port to `where` gets through while
 * `a` and `b` are partitioned; the partition is repaired after. */
static bool dial_through(cw_ctx *ctx, cw_listener *l, const cw_addr *where, cw_addr a, cw_addr b)
{
    ck_assert_int_eq(cw_network_partition(ctx, &a, &b), CW_OK);
    int rc = dial_once(ctx, l, where);
    ck_assert_int_eq(cw_network_repair(ctx, &a, &b), CW_OK);
    ck_assert(rc == CW_OK || rc == CW_ERR_CONNECTION_FAILED);
    return rc == CW_OK;
}

static void *patterns_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr where;
    cw_listener *l = listen_any(ctx, &where);
    cw_addr other_port = where, elsewhere = cw_addr_ipv4(10, 0, 0, 7, where.port);
    other_port.port = (uint16_t)(where.port + 1);
    cw_addr any_ip_here = cw_addr_ipv4(0, 0, 0, 0, where.port);
    cw_addr any6 = cw_addr_loopback6(0);
    memset(any6.ip, 0, sizeof any6.ip);
    uint16_t next = CW_NET_EPHEMERAL_FIRST; /* the port of the next dial [NET-007] */

    /* An exact pair: this dial's own port and the target. */
    ck_assert(!dial_through(ctx, l, &where, cw_addr_loopback4(next++), where));
    /* Another dialer's port, another target port, another host, another
     * family: nothing of this dial matches. */
    ck_assert(dial_through(ctx, l, &where, cw_addr_loopback4((uint16_t)(next + 5)), where));
    next++;
    ck_assert(dial_through(ctx, l, &where, loopback_any(), other_port));
    next++;
    ck_assert(dial_through(ctx, l, &where, loopback_any(), elsewhere));
    next++;
    ck_assert(dial_through(ctx, l, &where, any6, everyone4()));
    next++;
    /* Both patterns on the same side cut nothing: one must match each end. */
    ck_assert(dial_through(ctx, l, &where, where, any_ip_here));
    next++;
    /* The unspecified address with a port matches any host on that port. */
    ck_assert(!dial_through(ctx, l, &where, any_ip_here, loopback_any()));
    next++;
    ck_assert(!dial_through(ctx, l, &where, everyone4(), everyone4()));
    next++;
    ck_assert(!dial_through(ctx, l, &where, where, cw_addr_loopback4(next)));
    cw_listener_close(l);

    /* IPv6: only the all-zero address is unspecified, whatever its first
     * bytes; ::7 is an address like any other. */
    static const uint8_t doc5[16] = {0x20, 0x01, 0x0d, 0xb8, [15] = 5}, seven[16] = {[15] = 7};
    cw_addr v6 = cw_addr_ipv6(doc5, 9000); /* any6, above, is [::]:0 */
    ck_assert_int_eq(cw_bind(ctx, &v6, &l), CW_OK);
    ck_assert(dial_through(ctx, l, &v6, cw_addr_ipv6(seven, 0), any6));
    ck_assert(!dial_through(ctx, l, &v6, any6, any6));
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_partition_patterns, "network", "NET-028 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, patterns_root, NULL);
}

static void *arguments_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr where, bad;
    cw_listener *l = listen_any(ctx, &where);
    memset(&bad, 0, sizeof bad);
    bad.family = 9;
    ck_assert_int_eq(cw_network_partition(ctx, NULL, &where), CW_ERR_INVALID);
    ck_assert_int_eq(cw_network_partition(ctx, &where, NULL), CW_ERR_INVALID);
    ck_assert_int_eq(cw_network_partition(ctx, &where, &bad), CW_ERR_INVALID);
    ck_assert_int_eq(cw_network_partition(ctx, &bad, &where), CW_ERR_INVALID);
    ck_assert_int_eq(cw_network_repair(ctx, NULL, &where), CW_ERR_INVALID);
    ck_assert_int_eq(cw_network_repair(ctx, &where, &bad), CW_ERR_INVALID);
    /* Nothing was partitioned by the refused calls. */
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_OK);
    /* A repair of a pair never partitioned changes nothing. */
    cw_addr dialers = loopback_any();
    ck_assert_int_eq(cw_network_repair(ctx, &where, &where), CW_OK);
    ck_assert_int_eq(cw_network_partition(ctx, &where, &dialers), CW_OK);
    ck_assert_int_eq(cw_network_repair(ctx, &where, &where), CW_OK);
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_ERR_CONNECTION_FAILED);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_partition_arguments, "network", "NET-028 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, arguments_root, NULL);
}

/* ---- Held bytes [NET-029, NET-030] ---------------------------------------------------- */

static void expect_visible(cw_stream *s, const char *want)
{
    uint8_t seen[64];
    size_t n = strlen(want);
    ck_assert_uint_eq(cw_stream_peek(s, sizeof seen, seen), n);
    ck_assert(memcmp(seen, want, n) == 0);
}

struct repairer {
    cw_addr a, b;
    cw_duration after;
};

static void *repair_later(cw_ctx *ctx, void *arg)
{
    struct repairer *r = arg;
    cw_sleep(ctx, r->after);
    ck_assert_int_eq(cw_network_repair(ctx, &r->a, &r->b), CW_OK);
    return NULL;
}

static void *hold_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_addr where, dialers = loopback_any();
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    ck_assert_int_eq(send_text(a.sink, "ab"), CW_OK);
    expect_visible(b.stream, "ab");

    ck_assert_int_eq(cw_network_partition(ctx, &where, &dialers), CW_OK);
    cw_time t0 = cw_current(ctx);
    ck_assert_int_eq(send_text(a.sink, "cd"), CW_OK); /* at once [NET-008] */
    ck_assert_int_eq(send_text(b.sink, "xy"), CW_OK);
    ck_assert_uint_eq(cw_current(ctx), t0);
    cw_sleep(ctx, CW_SEC);
    expect_visible(b.stream, "ab"); /* what arrived before the cut stays */
    expect_nothing_yet(a.stream, 2);
    ck_assert_int_eq(cw_network_repair(ctx, &where, &dialers), CW_OK);
    expect_visible(b.stream, "abcd");
    expect_visible(a.stream, "xy");
    recv_text(b.stream, "abcd");
    recv_text(a.stream, "xy");

    /* A recv waiting for held bytes completes once they are released. */
    ck_assert_int_eq(cw_network_partition(ctx, &dialers, &where), CW_OK);
    ck_assert_int_eq(send_text(a.sink, "e"), CW_OK);
    ck_assert_int_eq(send_text(a.sink, "fg"), CW_OK);
    struct repairer r = {where, dialers, 10 * CW_MSEC};
    t0 = cw_current(ctx);
    cw_handle *h = cw_spawn(cw_child(ctx, "repair"), repair_later, &r);
    recv_text(b.stream, "efg");
    ck_assert_uint_ge(cw_current(ctx), t0 + r.after);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_partition_holds_bytes, "network", "NET-029 NET-030 NET-008 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, hold_root, NULL);
}

#define LATENCY (50 * CW_MSEC)

static void *in_flight_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_addr where, everyone = everyone4();
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);

    /* In flight when the cut began: held past its arrival time, then
     * visible right after the repair. */
    cw_time t0 = cw_current(ctx);
    ck_assert_int_eq(send_text(a.sink, "abc"), CW_OK);
    cw_sleep_until(ctx, t0 + 10 * CW_MSEC);
    ck_assert_int_eq(cw_network_partition(ctx, &everyone, &where), CW_OK);
    cw_sleep_until(ctx, t0 + 2 * LATENCY);
    expect_nothing_yet(b.stream, 3);
    ck_assert_int_eq(cw_network_repair(ctx, &where, &everyone), CW_OK);
    expect_visible(b.stream, "abc");
    recv_text(b.stream, "abc");

    /* Released before its arrival time: it arrives at that time. */
    cw_time t1 = cw_current(ctx);
    ck_assert_int_eq(send_text(b.sink, "def"), CW_OK);
    ck_assert_int_eq(cw_network_partition(ctx, &where, &everyone), CW_OK);
    ck_assert_int_eq(send_text(b.sink, "gh"), CW_OK);
    cw_sleep_until(ctx, t1 + 20 * CW_MSEC);
    ck_assert_int_eq(cw_network_repair(ctx, &everyone, &where), CW_OK);
    expect_nothing_yet(a.stream, 3);
    recv_text(a.stream, "def");
    ck_assert_uint_eq(cw_current(ctx), t1 + LATENCY);
    recv_text(a.stream, "gh");
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_partition_holds_in_flight, "network", "NET-029 NET-030 NET-027 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.cycle = 1;
    cfg.network_latency = LATENCY;
    cwc_run_ok(&cfg, in_flight_root, NULL);
}

static void expect_end(cw_stream *s)
{
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(s, 1, &got), CW_ERR_RECV_FAILED);
    ck_assert_ptr_null(got);
}

static void *end_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_addr where, dialers = loopback_any();
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    ck_assert_int_eq(cw_network_partition(ctx, &where, &dialers), CW_OK);
    /* A sink closed with nothing held: its end is held alone. */
    cw_sink_close(a.sink);
    a.sink = NULL;
    expect_nothing_yet(b.stream, 1);
    /* And with bytes held: the end comes after them. */
    ck_assert_int_eq(send_text(b.sink, "zz"), CW_OK);
    cw_sink_close(b.sink);
    b.sink = NULL;
    expect_nothing_yet(a.stream, 1);
    ck_assert_int_eq(cw_network_repair(ctx, &where, &dialers), CW_OK);
    expect_end(b.stream);
    recv_text(a.stream, "zz");
    expect_end(a.stream);
    close_halves(&a);
    close_halves(&b);

    /* A send to a closed stream fails at once, cut or not [NET-014]. */
    cw_listener *m = connect_halves(ctx, &a, &b);
    ck_assert_int_eq(cw_network_partition(ctx, &where, &dialers), CW_OK);
    cw_stream_close(b.stream);
    b.stream = NULL;
    ck_assert_int_eq(send_text(a.sink, "lost"), CW_ERR_SEND_FAILED);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(m);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_partition_holds_the_end, "network", "NET-029 NET-030 NET-014 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, end_root, NULL);
}

/* The root waits for bytes a partition holds: nothing else can happen.
 * With `arg` set they were sent before the cut, so they were in flight. */
static void *held_forever_root(cw_ctx *ctx, void *arg)
{
    bool in_flight = arg != NULL;
    struct half_pair a, b;
    connect_halves(ctx, &a, &b);
    cw_addr all = everyone4();
    if (in_flight)
        ck_assert_int_eq(send_text(a.sink, "four"), CW_OK);
    ck_assert_int_eq(cw_network_partition(ctx, &all, &all), CW_OK);
    if (!in_flight)
        ck_assert_int_eq(send_text(a.sink, "four"), CW_OK);
    cw_iobufs *got = NULL;
    cw_stream_recv(b.stream, 4, &got);
    return NULL;
}

CWC_CASE(network_partition_stalls, "network", "NET-029 DET-006 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, held_forever_root, NULL, &res), CW_ERR_STALLED);
    /* Held bytes arm no alarm: the clock does not jump to their arrival. */
    cfg.network_latency = 3600 * CW_SEC;
    for (int sent_first = 0; sent_first < 2; sent_first++) {
        void *arg = sent_first ? &cfg : NULL;
        ck_assert_int_eq(cwc_run(&cfg, held_forever_root, arg, &res), CW_ERR_STALLED);
        ck_assert_uint_lt(res.end_time, cfg.start_time + 3600 * CW_SEC);
    }
}

/* ---- The audit of partitions [NET-028, DET-015] -------------------------------------- */

#define MAX_EVENTS 256

struct trail {
    size_t n;
    char label[MAX_EVENTS][16];
    char first[MAX_EVENTS][CW_ADDR_TEXT_MAX]; /* the first field, as text */
    char second[MAX_EVENTS][CW_ADDR_TEXT_MAX];
};

static void copy_field(char *dst, const cw_event *e, size_t i)
{
    size_t n = i < e->nfields ? e->fields[i].len : 0;
    n = n < CW_ADDR_TEXT_MAX - 1 ? n : CW_ADDR_TEXT_MAX - 1;
    if (n)
        memcpy(dst, e->fields[i].data, n);
    dst[n] = '\0';
}

static void keep(void *arg, const cw_event *e)
{
    struct trail *t = arg;
    if (t->n == MAX_EVENTS)
        return;
    strncpy(t->label[t->n], e->label, sizeof t->label[0] - 1);
    copy_field(t->first[t->n], e, 0);
    copy_field(t->second[t->n], e, 1);
    t->n++;
}

static size_t find_event(const struct trail *t, size_t from, const char *label)
{
    for (size_t i = from; i < t->n; i++)
        if (strcmp(t->label[i], label) == 0)
            return i;
    ck_abort_msg("no %s event after index %zu", label, from);
    return 0;
}

/* Two connections cut, bytes held both ways on each, one repair. */
static void *audit_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b, c, d;
    cw_listener *l1 = connect_halves(ctx, &a, &b);
    cw_listener *l2 = connect_halves(ctx, &c, &d);
    cw_addr all = everyone4(), nowhere = cw_addr_ipv4(10, 1, 2, 3, 77);
    ck_assert_int_eq(cw_network_partition(ctx, &all, &all), CW_OK);
    ck_assert_int_eq(send_text(d.sink, "4"), CW_OK);
    ck_assert_int_eq(send_text(c.sink, "3"), CW_OK);
    ck_assert_int_eq(send_text(b.sink, "2"), CW_OK);
    ck_assert_int_eq(send_text(a.sink, "1"), CW_OK);
    ck_assert_int_eq(cw_network_partition(ctx, &nowhere, &all), CW_OK);
    ck_assert_int_eq(cw_network_repair(ctx, &all, &nowhere), CW_OK);
    ck_assert_int_eq(cw_network_repair(ctx, &all, &all), CW_OK);
    close_halves(&a);
    close_halves(&b);
    close_halves(&c);
    close_halves(&d);
    cw_listener_close(l1);
    cw_listener_close(l2);
    return NULL;
}

CWC_CASE(network_partition_audit, "network", "NET-028 NET-030 DET-015 RUN-008", DET | CWC_REPEATED)
{
    static struct trail t;
    memset(&t, 0, sizeof t);
    cw_config cfg = cwc_config();
    cfg.event_log = keep;
    cfg.event_log_arg = &t;
    cw_run_result one, two;
    ck_assert_int_eq(cwc_run(&cfg, audit_root, NULL, &one), CW_OK);
    size_t p = find_event(&t, 0, "partition");
    ck_assert_str_eq(t.first[p], "0.0.0.0:0");
    ck_assert_str_eq(t.second[p], "0.0.0.0:0");
    p = find_event(&t, p + 1, "partition");
    ck_assert_str_eq(t.first[p], "10.1.2.3:77");
    ck_assert_str_eq(t.second[p], "0.0.0.0:0");
    size_t r = find_event(&t, p + 1, "repair");
    ck_assert_str_eq(t.first[r], "0.0.0.0:0"); /* as given, not as stored */
    ck_assert_str_eq(t.second[r], "10.1.2.3:77");
    /* Nothing held arrived before the last repair; then every stream in
     * the order the streams were made: dialer's, then accepted, per dial. */
    ck_assert_uint_eq(find_event(&t, 0, "deliver") > r, true);
    r = find_event(&t, r + 1, "repair");
    char dialer1[CW_ADDR_TEXT_MAX], dialer2[CW_ADDR_TEXT_MAX];
    cw_addr d1 = cw_addr_loopback4(CW_NET_EPHEMERAL_FIRST), d2 = d1;
    d2.port++;
    cw_addr_format(&d1, dialer1);
    cw_addr_format(&d2, dialer2);
    size_t e1 = find_event(&t, r + 1, "deliver"), e2 = find_event(&t, e1 + 1, "deliver");
    size_t e3 = find_event(&t, e2 + 1, "deliver"), e4 = find_event(&t, e3 + 1, "deliver");
    ck_assert_uint_eq(e4, r + 4);
    ck_assert_str_ne(t.first[e1], dialer1); /* the dialer's stream names the target */
    ck_assert_str_eq(t.first[e2], dialer1);
    ck_assert_str_ne(t.first[e3], dialer2);
    ck_assert_str_eq(t.first[e4], dialer2);
    /* The same seed replays the same events. */
    cfg.event_log = NULL;
    ck_assert_int_eq(cwc_run(&cfg, audit_root, NULL, &two), CW_OK);
    ck_assert_str_eq(one.digest, two.digest);
}

/* The run timeout is checked before any alarm due at the same instant
 * fires (DET-007), a stream's arrival alarm too: bytes due to arrive at
 * the deadline are never delivered. The first run finds when they arrive;
 * the second, the same run with its timeout there, records no `deliver`
 * at that instant. */
struct arrivals {
    size_t n;
    cw_time last; /* the time of the last deliver */
    cw_time at;   /* the instant watched */
    size_t at_n;  /* delivers recorded at it */
};

static void count_delivers(void *arg, const cw_event *e)
{
    struct arrivals *a = arg;
    if (strcmp(e->label, "deliver") != 0)
        return;
    a->n++;
    a->last = e->time;
    if (e->time == a->at)
        a->at_n++;
}

static void *late_bytes_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    ck_assert_int_eq(send_text(a.sink, "abc"), CW_OK);
    cw_sleep(ctx, 10 * LATENCY); /* no task wakes at the arrival */
    recv_text(b.stream, "abc");
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(run_timeout_before_bytes_due_then, "network", "DET-007 RUN-005 NET-027 RUN-008",
         DET | CWC_REPEATED)
{
    struct arrivals seen = {0, 0, CW_FOREVER, 0};
    cw_config cfg = cwc_config();
    cfg.network_latency = LATENCY;
    cfg.event_log = count_delivers;
    cfg.event_log_arg = &seen;
    cwc_run_ok(&cfg, late_bytes_root, NULL);
    ck_assert_uint_gt(seen.n, 0);
    ck_assert_uint_gt(seen.last, cfg.start_time);

    struct arrivals cut = {0, 0, seen.last, 0};
    cfg.event_log_arg = &cut;
    cfg.timeout = seen.last - cfg.start_time;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, late_bytes_root, NULL, &res), CW_ERR_RUN_TIMEOUT);
    ck_assert_uint_eq(res.end_time, seen.last);
    ck_assert_msg(cut.at_n == 0, "DET-007: %zu deliver events at the run's deadline", cut.at_n);
}

/* Repairs settle only the connections they leave no longer cut: the bytes
 * in flight on a connection no partition ever cut arrive at their own
 * time, once, whatever is repaired meanwhile (NET-028: a repair of a pair
 * not partitioned changes nothing; NET-030 and NET-027). */
static void *repairs_elsewhere_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_addr where, everyone = everyone4(), elsewhere = cw_addr_ipv4(10, 9, 9, 9, 0);
    ck_assert_int_eq(cw_listener_local_addr(l, &where), CW_OK);
    cw_time t0 = cw_current(ctx);
    ck_assert_int_eq(send_text(a.sink, "abc"), CW_OK);
    ck_assert_int_eq(send_text(b.sink, "xy"), CW_OK);
    ck_assert_int_eq(cw_network_repair(ctx, &where, &everyone), CW_OK); /* never partitioned */
    ck_assert_int_eq(cw_network_partition(ctx, &elsewhere, &everyone), CW_OK); /* cuts neither */
    cw_sleep_until(ctx, t0 + LATENCY / 2);
    ck_assert_int_eq(cw_network_repair(ctx, &everyone, &elsewhere), CW_OK);
    expect_nothing_yet(b.stream, 3);
    recv_text(b.stream, "abc");
    ck_assert_uint_eq(cw_current(ctx), t0 + LATENCY);
    recv_text(a.stream, "xy");
    ck_assert_uint_eq(cw_current(ctx), t0 + LATENCY);
    cw_sleep(ctx, 10 * LATENCY); /* nothing more arrives, and the run goes on */
    expect_nothing_yet(b.stream, 1);
    expect_nothing_yet(a.stream, 1);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_repair_spares_connections_not_cut, "network", "NET-028 NET-030 NET-027 RUN-008",
         DET | CWC_REPEATED)
{
    struct arrivals seen = {0, 0, CW_FOREVER, 0};
    cw_config cfg = cwc_config();
    cfg.cycle = 1;
    cfg.network_latency = LATENCY;
    cfg.event_log = count_delivers;
    cfg.event_log_arg = &seen;
    cwc_run_ok(&cfg, repairs_elsewhere_root, NULL);
    ck_assert_uint_eq(seen.n, 2); /* one arrival a send */
}

/* ---- Rates [NET-031, NET-032, RUN-002] ------------------------------------------------- */

#define DIALS 24

struct dials {
    bool draw_instead; /* the model run: cw_random_u64 where the other dials */
    int rc[DIALS];
    uint64_t drawn[DIALS];
    uint64_t after; /* the next random value once the dials are done */
};

static void *rate_dials_root(cw_ctx *ctx, void *arg)
{
    struct dials *d = arg;
    cw_addr where;
    cw_listener *l = listen_any(ctx, &where);
    for (int i = 0; i < DIALS; i++) {
        if (d->draw_instead)
            d->drawn[i] = cw_random_u64(ctx);
        else
            d->rc[i] = dial_once(ctx, l, &where);
    }
    d->after = cw_random_u64(ctx);
    cw_listener_close(l);
    return NULL;
}

static void run_dials(cw_rate rate, struct dials *d)
{
    cw_config cfg = cwc_config();
    cfg.audit = false;
    cfg.network_dial_failure = rate;
    cwc_run_ok(&cfg, rate_dials_root, d);
}

CWC_CASE(network_dial_failure_rate, "network", "NET-031 NET-028 RUN-008", DET | CWC_REPEATED)
{
    static struct dials model, never, always, third;
    model.draw_instead = true;
    run_dials(CW_RATE_NEVER, &model);
    run_dials(CW_RATE_NEVER, &never);
    run_dials((cw_rate){5, 5}, &always);
    run_dials((cw_rate){2, 3}, &third);
    int failed = 0;
    for (int i = 0; i < DIALS; i++) {
        ck_assert_int_eq(never.rc[i], CW_OK);
        ck_assert_int_eq(always.rc[i], CW_ERR_CONNECTION_FAILED);
        /* One draw per dial, the model's value at the same place. */
        int want = model.drawn[i] % 3 < 2 ? CW_ERR_CONNECTION_FAILED : CW_OK;
        ck_assert_int_eq(third.rc[i], want);
        failed += third.rc[i] != CW_OK;
    }
    ck_assert(failed > 0 && failed < DIALS);
    /* Never and always draw nothing: the stream after the dials is where it
     * was before them; a rate between draws once per dial. */
    ck_assert_uint_eq(never.after, model.drawn[0]);
    ck_assert_uint_eq(always.after, model.drawn[0]);
    ck_assert_uint_eq(third.after, model.after);
}

/* Dials a partition cuts, or with no listener, draw nothing. */
static void *undrawn_dials_root(cw_ctx *ctx, void *arg)
{
    uint64_t *next = arg;
    cw_addr where, all = everyone4();
    cw_listener *l = listen_any(ctx, &where);
    cw_addr nobody = where;
    nobody.port = (uint16_t)(where.port + 1);
    ck_assert_int_eq(dial_once(ctx, l, &nobody), CW_ERR_CONNECTION_FAILED);
    ck_assert_int_eq(cw_network_partition(ctx, &all, &where), CW_OK);
    ck_assert_int_eq(dial_once(ctx, l, &where), CW_ERR_CONNECTION_FAILED);
    *next = cw_random_u64(ctx);
    cw_listener_close(l);
    return NULL;
}

static void *plain_draw_root(cw_ctx *ctx, void *arg)
{
    cw_addr where;
    cw_listener *l = listen_any(ctx, &where);
    *(uint64_t *)arg = cw_random_u64(ctx);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_dial_failure_draws_only_to_connect, "network", "NET-031 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.audit = false;
    cfg.network_dial_failure = (cw_rate){1, 2};
    uint64_t plain, undrawn;
    cwc_run_ok(&cfg, plain_draw_root, &plain);
    cwc_run_ok(&cfg, undrawn_dials_root, &undrawn);
    ck_assert_uint_eq(undrawn, plain);
}

#define SENDS 16
#define CONNECTIONS 8

/* Connections are tried one after another until one carried at least two
 * sends before its reset, so that bytes sent before a reset are seen to
 * arrive whatever the seed. */
struct resets {
    bool draw_instead;
    uint64_t drawn[CONNECTIONS * (2 * SENDS + 1)];
    int sent[CONNECTIONS]; /* sends that completed with CW_OK before one failed */
    int connections;
};

static void put_u32(uint8_t *p, uint32_t v)
{
    for (int i = 3; i >= 0; i--, v >>= 8)
        p[i] = (uint8_t)v;
}

static int send_number(cw_sink *s, uint32_t i)
{
    uint8_t bytes[4];
    put_u32(bytes, i);
    return send_data(s, bytes, 4);
}

static void expect_number(cw_stream *s, uint32_t i)
{
    uint8_t want[4];
    put_u32(want, i);
    recv_data(s, want, 4);
}

/* Sends until one fails, which must be a reset: then both directions are
 * broken, and the peer saw every byte sent before. */
static int send_until_reset(cw_ctx *ctx)
{
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    int sent = 0, rc = CW_OK;
    while (sent < SENDS && (rc = send_number(a.sink, (uint32_t)sent)) == CW_OK)
        sent++;
    if (sent < SENDS) {
        ck_assert_int_eq(rc, CW_ERR_SEND_FAILED);
        ck_assert_int_eq(send_number(a.sink, 0), CW_ERR_CLOSED);      /* poisoned [NET-013] */
        ck_assert_int_eq(send_number(b.sink, 0), CW_ERR_SEND_FAILED); /* the other way too */
        expect_end(a.stream);
    }
    for (int i = 0; i < sent; i++)
        expect_number(b.stream, (uint32_t)i);
    if (sent < SENDS)
        expect_end(b.stream);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return sent;
}

static void *resets_root(cw_ctx *ctx, void *arg)
{
    struct resets *r = arg;
    if (r->draw_instead) {
        for (size_t i = 0; i < sizeof r->drawn / sizeof r->drawn[0]; i++)
            r->drawn[i] = cw_random_u64(ctx);
        return NULL;
    }
    for (r->connections = 0; r->connections < CONNECTIONS;) {
        int sent = r->sent[r->connections++] = send_until_reset(ctx);
        if (sent >= 2)
            break;
    }
    return NULL;
}

/* What the model's values give: each send draws its reset (1 in `den`)
 * and, when it does not reset, `jitter_draws` more. */
static void model_resets(const struct resets *m, uint64_t den, int jitter_draws, struct resets *out)
{
    size_t at = 0;
    for (out->connections = 0; out->connections < CONNECTIONS;) {
        int sent = 0;
        while (sent < SENDS && m->drawn[at++] % den >= 1) {
            sent++;
            at += (size_t)jitter_draws;
        }
        out->sent[out->connections++] = sent;
        if (sent >= 2)
            break;
    }
}

static void expect_resets(const cw_config *cfg, uint64_t den, int jitter_draws)
{
    static struct resets model, got, want;
    memset(&model, 0, sizeof model);
    memset(&got, 0, sizeof got);
    memset(&want, 0, sizeof want);
    model.draw_instead = true;
    cw_config plain = *cfg;
    plain.network_reset = CW_RATE_NEVER;
    plain.network_jitter = 0;
    cwc_run_ok(&plain, resets_root, &model);
    cwc_run_ok(cfg, resets_root, &got);
    model_resets(&model, den, jitter_draws, &want);
    ck_assert_int_eq(got.connections, want.connections);
    for (int i = 0; i < want.connections; i++)
        ck_assert_int_eq(got.sent[i], want.sent[i]);
}

CWC_CASE(network_reset_rate, "network", "NET-032 NET-013 NET-014 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.audit = false;
    cfg.network_reset = (cw_rate){1, 6};
    expect_resets(&cfg, 6, 0);
    /* The reset is decided before the jitter, which a reset send draws not. */
    cfg.network_jitter = CW_MSEC;
    expect_resets(&cfg, 6, 1);
    cfg.network_reset = CW_RATE_ALWAYS;
    expect_resets(&cfg, 1, 0);
}

/* The accepted side closes its sink; then the dialer's send resets the
 * connection (every send does, at this rate): it fails with
 * CW_ERR_SEND_FAILED, the half is poisoned, and each stream sees its end.
 * The reset breaks a direction whose sink was already closed: with bytes
 * of the latency in flight and without. */
static void *reset_after_close_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    cw_sink_close(b.sink);
    b.sink = NULL;
    ck_assert_int_eq(send_text(a.sink, "after the close"), CW_ERR_SEND_FAILED);
    ck_assert_int_eq(send_text(a.sink, "again"), CW_ERR_CLOSED); /* poisoned [NET-013] */
    expect_end(a.stream);
    expect_end(b.stream);
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_reset_after_the_peer_closed_its_sink, "network", "NET-032 NET-014 NET-027 RUN-008",
         DET | CWC_REPEATED)
{
    const cw_duration latencies[] = {0, 5 * CW_MSEC};
    for (size_t i = 0; i < sizeof latencies / sizeof latencies[0]; i++) {
        cw_config cfg = cwc_config();
        cfg.network_latency = latencies[i];
        cfg.network_reset = CW_RATE_ALWAYS;
        cwc_run_ok(&cfg, reset_after_close_root, NULL);
    }
}

/* The mock channel is never reset, whatever the rate. */
static void *mock_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(send_text(sink, "m"), CW_OK);
    recv_text(stream, "mmmmmmmm");
    cw_addr all = everyone4();
    ck_assert_int_eq(cw_network_partition(ctx, &all, &all), CW_OK);
    ck_assert_int_eq(send_text(sink, "n"), CW_OK);
    recv_text(stream, "n"); /* nor cut */
    cw_sink_close(sink);
    cw_stream_close(stream);
    return NULL;
}

CWC_CASE(network_faults_spare_the_mock_channel, "network", "NET-032 NET-024 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.network_reset = CW_RATE_ALWAYS;
    cwc_run_ok(&cfg, mock_root, NULL);
}

static void *nothing_root(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

CWC_CASE(runner_rates_are_fractions, "runner", "RUN-002 RUN-008", CWC_REPEATED)
{
    const cw_rate bad[] = {{1, 0}, {3, 2}, {UINT64_MAX, UINT64_MAX - 1}};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cw_config cfg = cwc_config();
        cw_run_result res;
        cfg.network_dial_failure = bad[i];
        ck_assert_int_eq(cwc_run(&cfg, nothing_root, NULL, &res), CW_ERR_INVALID);
        ck_assert_str_ne(res.message, "");
        cfg = cwc_config();
        cfg.network_reset = bad[i];
        ck_assert_int_eq(cwc_run(&cfg, nothing_root, NULL, &res), CW_ERR_INVALID);
    }
    const cw_rate good[] = {{0, 0}, {0, 7}, {7, 7}, {1, UINT64_MAX}};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        cw_config cfg = cwc_config();
        cfg.network_dial_failure = good[i];
        cfg.network_reset = good[i];
        cwc_run_ok(&cfg, nothing_root, NULL);
    }
}

/* ---- Other backends [NET-033] --------------------------------------------------------- */

static void *unsupported_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr all = everyone4();
    ck_assert_int_eq(cw_network_partition(ctx, &all, &all), CW_ERR_UNSUPPORTED);
    ck_assert_int_eq(cw_network_repair(ctx, &all, &all), CW_ERR_UNSUPPORTED);
    /* The rates ask for every dial refused and every send reset: ignored. */
    struct half_pair a, b;
    cw_listener *l = connect_halves(ctx, &a, &b);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(send_text(a.sink, "ping"), CW_OK);
        recv_text(b.stream, "ping");
        ck_assert_int_eq(send_text(b.sink, "pong"), CW_OK);
        recv_text(a.stream, "pong");
    }
    close_halves(&a);
    close_halves(&b);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(network_faults_unsupported, "network", "NET-033 RUN-008",
         CWC_UNLESS_DETERMINISTIC | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.network_dial_failure = CW_RATE_ALWAYS;
    cfg.network_reset = CW_RATE_ALWAYS;
    cwc_run_ok(&cfg, unsupported_root, NULL);
}
