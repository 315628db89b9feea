/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * event_log.c - the event log of a deterministic backend (DET-016): every
 * event the digest takes in, handed to cfg.event_log as it is hashed. The
 * cases recompute the chain from the logged events alone, so a log that
 * leaves out, reorders or alters an event cannot match the digest.
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases/util.h"

#define DET CW_CAP_DETERMINISTIC

/* What the log was given, copied out of each call. */
typedef struct logged {
    uint64_t index;
    cw_time time;
    char label[32];
    uint8_t *bytes; /* F(f1) ... F(fk): each field with its 8-byte length */
    size_t len;
    uint8_t digest[32];
} logged;

typedef struct log {
    logged *ev;
    size_t n, cap;
} log_t;

static void put_be64(uint8_t *out, uint64_t v)
{
    for (int i = 7; i >= 0; i--, v >>= 8)
        out[i] = (uint8_t)v;
}

static void record(void *arg, const cw_event *e)
{
    log_t *l = arg;
    if (l->n == l->cap) {
        l->cap = l->cap ? 2 * l->cap : 256;
        l->ev = realloc(l->ev, l->cap * sizeof *l->ev);
        ck_assert_ptr_nonnull(l->ev);
    }
    logged *x = &l->ev[l->n++];
    memset(x, 0, sizeof *x);
    x->index = e->index;
    x->time = e->time;
    ck_assert_uint_lt(strlen(e->label), sizeof x->label);
    strncpy(x->label, e->label, sizeof x->label - 1);
    for (size_t i = 0; i < e->nfields; i++)
        x->len += 8 + e->fields[i].len;
    x->bytes = malloc(x->len ? x->len : 1);
    ck_assert_ptr_nonnull(x->bytes);
    size_t at = 0;
    for (size_t i = 0; i < e->nfields; i++) {
        put_be64(x->bytes + at, e->fields[i].len);
        if (e->fields[i].len)
            memcpy(x->bytes + at + 8, e->fields[i].data, e->fields[i].len);
        at += 8 + e->fields[i].len;
    }
    memcpy(x->digest, e->digest, sizeof x->digest);
}

static void log_free(log_t *l)
{
    for (size_t i = 0; i < l->n; i++)
        free(l->ev[i].bytes);
    free(l->ev);
    memset(l, 0, sizeof *l);
}

/* The chain of 11-deterministic.md over the logged events, checked event
 * by event against the digest each was logged with; the last one in hex. */
static void replay_chain(const log_t *l, char hex[65])
{
    uint8_t d[32] = {0}, len[8];
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    ck_assert_ptr_nonnull(md);
    for (size_t i = 0; i < l->n; i++) {
        const logged *x = &l->ev[i];
        ck_assert_int_eq(EVP_DigestInit_ex(md, EVP_sha256(), NULL), 1);
        put_be64(len, sizeof d);
        EVP_DigestUpdate(md, len, 8);
        EVP_DigestUpdate(md, d, sizeof d);
        put_be64(len, strlen(x->label));
        EVP_DigestUpdate(md, len, 8);
        EVP_DigestUpdate(md, x->label, strlen(x->label));
        EVP_DigestUpdate(md, x->bytes, x->len);
        ck_assert_int_eq(EVP_DigestFinal_ex(md, d, NULL), 1);
        ck_assert_msg(memcmp(d, x->digest, sizeof d) == 0,
                      "event %zu (%s): the digest logged is not the chain over the events logged",
                      i, x->label);
    }
    EVP_MD_CTX_free(md);
    for (int i = 0; i < 32; i++)
        snprintf(hex + 2 * i, 3, "%02x", d[i]);
}

static void *racer(cw_ctx *ctx, void *arg)
{
    (void)arg;
    uint8_t b[3];
    cw_random(ctx, b, sizeof b);
    for (int i = 0; i < 3; i++) {
        cw_yield(ctx);
        cw_sleep(ctx, (cw_duration)(b[i] % 4) * CW_MSEC);
    }
    return NULL;
}

static void *log_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h[5];
    for (int i = 0; i < 5; i++)
        h[i] = cw_spawn(cw_child(ctx, "racer"), racer, NULL);
    for (int i = 0; i < 5; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    return NULL;
}

/* One run of log_root under `seed`, logged into `l` when it is not NULL. */
static void logged_run(uint64_t seed, log_t *l, char digest[65])
{
    cw_config cfg = cwc_config();
    cfg.seed = seed;
    cfg.event_log = l ? record : NULL;
    cfg.event_log_arg = l;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, log_root, NULL, &res), CW_OK);
    memcpy(digest, res.digest, 65);
}

CWC_CASE(det_event_log_is_the_digest, "deterministic", "DET-016 RUN-008", DET | CWC_REPEATED)
{
    log_t l = {0};
    char digest[65], replayed[65], unlogged[65];
    logged_run(7, &l, digest);
    ck_assert_uint_gt(l.n, 20); /* resumptions, draws: a real stream of events */
    for (size_t i = 0; i < l.n; i++) {
        ck_assert_uint_eq(l.ev[i].index, i);
        if (i)
            ck_assert_uint_ge(l.ev[i].time, l.ev[i - 1].time);
    }
    replay_chain(&l, replayed);
    ck_assert_str_eq(replayed, digest);
    logged_run(7, NULL, unlogged); /* the log changes nothing */
    ck_assert_str_eq(unlogged, digest);
    log_free(&l);
}

CWC_CASE(det_event_log_same_seed_same_events, "deterministic", "DET-016 DET-001 RUN-008",
         DET | CWC_REPEATED)
{
    log_t a = {0}, b = {0}, c = {0};
    char da[65], db[65], dc[65];
    logged_run(11, &a, da);
    logged_run(11, &b, db);
    logged_run(12, &c, dc);
    ck_assert_str_eq(da, db);
    ck_assert_uint_eq(a.n, b.n);
    for (size_t i = 0; i < a.n; i++) {
        ck_assert_str_eq(a.ev[i].label, b.ev[i].label);
        ck_assert_uint_eq(a.ev[i].time, b.ev[i].time);
        ck_assert_uint_eq(a.ev[i].len, b.ev[i].len);
        ck_assert(memcmp(a.ev[i].bytes, b.ev[i].bytes, a.ev[i].len) == 0);
    }
    size_t first = 0; /* another seed parts somewhere, and the log shows where */
    while (first < a.n && first < c.n && memcmp(a.ev[first].digest, c.ev[first].digest, 32) == 0)
        first++;
    ck_assert_str_ne(da, dc);
    ck_assert_uint_lt(first, a.n < c.n ? a.n : c.n);
    log_free(&a);
    log_free(&b);
    log_free(&c);
}

/* One run of `root` under the suite's seed, required to succeed, with
 * every event it records copied into `l`. */
static void run_logged_with(cw_config cfg, cw_task_fn root, log_t *l)
{
    cfg.event_log = record;
    cfg.event_log_arg = l;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, root, NULL, &res), CW_OK);
}

static void run_logged(cw_task_fn root, log_t *l)
{
    run_logged_with(cwc_config(), root, l);
}

/* The first logged event with `label` at or after `from`, or NULL. */
static const logged *find(const log_t *l, const char *label, size_t *from)
{
    for (; *from < l->n; (*from)++)
        if (strcmp(l->ev[*from].label, label) == 0)
            return &l->ev[(*from)++];
    return NULL;
}

/* Require `x`'s fields to be exactly the `n` given (data, length) pairs. */
static void fields_are(const logged *x, size_t n, const void *const *data, const size_t *len)
{
    size_t at = 0;
    for (size_t i = 0; i < n; i++) {
        ck_assert_uint_le(at + 8, x->len);
        uint8_t be[8];
        put_be64(be, len[i]);
        ck_assert_msg(memcmp(x->bytes + at, be, 8) == 0, "%s: field %zu has the wrong length",
                      x->label, i);
        ck_assert_msg(memcmp(x->bytes + at + 8, data[i], len[i]) == 0, "%s: field %zu differs",
                      x->label, i);
        at += 8 + len[i];
    }
    ck_assert_msg(at == x->len, "%s: more fields than the table gives", x->label);
}

static void *fields_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    uint8_t b[5];
    cw_random(ctx, b, sizeof b);
    cw_signal_release(cw_stopped(ctx)); /* a stop waits for every signal held */
    ck_assert_int_eq(cw_stop(ctx, -2, CW_FOREVER), CW_OK);
    return NULL;
}

CWC_CASE(det_event_fields_follow_the_table, "deterministic", "DET-015 DET-016 RUN-008",
         DET | CWC_REPEATED)
{
    log_t l = {0};
    run_logged(fields_root, &l);
    size_t at = 0;
    const logged *x = find(&l, "process_task", &at); /* the root: id 0, label "" */
    ck_assert_ptr_nonnull(x);
    static const uint8_t id0[16] = {0};
    fields_are(x, 2, (const void *[]){id0, ""}, (size_t[]){16, 0});
    x = find(&l, "rand", &at);
    ck_assert_ptr_nonnull(x);
    static const uint8_t five[8] = {0, 0, 0, 0, 0, 0, 0, 5};
    fields_are(x, 1, (const void *[]){five}, (size_t[]){8});
    x = find(&l, "stopped", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 0, NULL, NULL);
    x = find(&l, "stop", &at);
    ck_assert_ptr_nonnull(x);
    static const uint8_t minus_two[4] = {0xff, 0xff, 0xff, 0xfe}; /* two's complement */
    fields_are(x, 1, (const void *[]){minus_two}, (size_t[]){4});
    log_free(&l);
}

static void *resolver_fields_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr addrs[2] = {cw_addr_loopback4(0), cw_addr_loopback6(0)};
    addrs[0].port = 80; /* the event shows every address with port 0 */
    ck_assert_int_eq(cw_resolver_register(ctx, "db", addrs, 2), CW_OK);
    cw_addr out[4];
    size_t n;
    ck_assert_int_eq(cw_resolve(ctx, "db", out, 4, &n, NULL), CW_OK);
    ck_assert_uint_eq(n, 2);
    return NULL;
}

CWC_CASE(det_event_fields_of_the_resolver, "deterministic", "DET-015 DET-016 NET-021 RUN-008",
         DET | CWC_NEEDS_NETWORK | CWC_REPEATED)
{
    log_t l = {0};
    run_logged(resolver_fields_root, &l);
    size_t at = 0;
    const logged *x = find(&l, "resolver_register", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 3, (const void *[]){"db", "127.0.0.1:80", "[::1]:0"}, (size_t[]){2, 12, 7});
    x = find(&l, "resolve", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 3, (const void *[]){"db", "127.0.0.1:0", "[::1]:0"}, (size_t[]){2, 11, 7});
    log_free(&l);
}

static void *accept_one_conn(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_conn c;
    ck_assert_int_eq(cw_listener_accept(arg, &c), CW_OK);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(c.stream, 2, &got), CW_OK);
    cw_iobufs_release(got);
    cw_sink_close(c.sink);
    cw_stream_close(c.stream);
    return NULL;
}

static void *net_fields_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_addr at = cw_addr_loopback4(7000);
    cw_listener *l;
    ck_assert_int_eq(cw_bind(ctx, &at, &l), CW_OK);
    cw_handle *h = cw_spawn(cw_child(ctx, "server"), accept_one_conn, l);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_dial(ctx, &at, &sink, &stream), CW_OK);
    cw_iobufs *msg = cw_iobufs_new(cwc_backend);
    cw_iobuf b;
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, "hi", 2, &b), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(msg, &b), CW_OK);
    ck_assert_int_eq(cw_sink_send(sink, msg), CW_OK);
    cw_iobufs_release(msg);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cw_sink_close(sink);
    cw_stream_close(stream);
    cw_listener_close(l);
    return NULL;
}

CWC_CASE(det_event_fields_of_the_network, "deterministic", "DET-015 DET-016 NET-007 RUN-008",
         DET | CWC_NEEDS_NETWORK | CWC_REPEATED)
{
    log_t l = {0};
    run_logged(net_fields_root, &l);
    static const uint8_t ok[4] = {0};
    size_t at = 0;
    const logged *x = find(&l, "bind", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 2, (const void *[]){"127.0.0.1:7000", ok}, (size_t[]){14, 4});
    x = find(&l, "dial", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 2, (const void *[]){"127.0.0.1:7000", ok}, (size_t[]){14, 4});
    x = find(&l, "send", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 3, (const void *[]){"127.0.0.1:7000", "hi", ok}, (size_t[]){14, 2, 4});
    size_t from = 0;
    x = find(&l, "accept", &from); /* the dialer's port is the first ephemeral one */
    ck_assert_ptr_nonnull(x);
    char peer[32];
    int n = snprintf(peer, sizeof peer, "127.0.0.1:%u", CW_NET_EPHEMERAL_FIRST);
    fields_are(x, 2, (const void *[]){"127.0.0.1:7000", peer}, (size_t[]){14, (size_t)n});
    from = 0;
    x = find(&l, "recv", &from);
    ck_assert_ptr_nonnull(x);
    static const uint8_t two[8] = {0, 0, 0, 0, 0, 0, 0, 2};
    fields_are(x, 4, (const void *[]){peer, two, ok, "hi"}, (size_t[]){(size_t)n, 8, 4, 2});
    from = 0;
    ck_assert_ptr_null(find(&l, "deliver", &from)); /* no latency, no deliveries */
    log_free(&l);
}

/* With latency the bytes of a send go in flight, and their arrival is an
 * event of its own: the receiver's remote address, the count of bytes. */
CWC_CASE(det_event_fields_of_a_delivery, "deterministic", "DET-015 DET-016 NET-027 RUN-008",
         DET | CWC_NEEDS_NETWORK | CWC_REPEATED)
{
    log_t l = {0};
    cw_config cfg = cwc_config();
    cfg.network_latency = CW_MSEC;
    run_logged_with(cfg, net_fields_root, &l);
    size_t from = 0;
    const logged *x = find(&l, "deliver", &from);
    ck_assert_ptr_nonnull(x);
    char peer[32];
    int n = snprintf(peer, sizeof peer, "127.0.0.1:%u", CW_NET_EPHEMERAL_FIRST);
    static const uint8_t two[8] = {0, 0, 0, 0, 0, 0, 0, 2};
    fields_are(x, 2, (const void *[]){peer, two}, (size_t[]){(size_t)n, 8});
    ck_assert_ptr_null(find(&l, "deliver", &from)); /* one send, one arrival */
    log_free(&l);
}

/* The result field of a failed call: its code, 4 bytes big-endian. */
static void code_be(int rc, uint8_t out[4])
{
    uint32_t v = (uint32_t)rc;
    for (int i = 3; i >= 0; i--, v >>= 8)
        out[i] = (uint8_t)v;
}

typedef struct failures {
    int dial, send;
} failures;

static failures seen; /* the case's own process: run_logged passes no argument */

static void *net_failures_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    failures *f = &seen;
    cw_addr nobody = cw_addr_loopback4(7001);
    cw_sink *sink;
    cw_stream *stream;
    f->dial = cw_dial(ctx, &nobody, &sink, &stream);
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    cw_stream_close(stream); /* nobody reads: the send fails */
    cw_iobufs *msg = cw_iobufs_new(cwc_backend);
    cw_iobuf b;
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, "lost", 4, &b), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(msg, &b), CW_OK);
    f->send = cw_sink_send(sink, msg);
    cw_iobufs_release(msg);
    cw_sink_close(sink);
    return NULL;
}

CWC_CASE(det_event_fields_of_failures, "deterministic", "DET-015 DET-016 RUN-008",
         DET | CWC_NEEDS_NETWORK | CWC_REPEATED)
{
    log_t l = {0};
    run_logged(net_failures_root, &l);
    failures f = seen;
    ck_assert_int_eq(f.dial, CW_ERR_CONNECTION_FAILED);
    ck_assert_int_ne(f.send, CW_OK);
    uint8_t dial[4], send[4];
    code_be(f.dial, dial);
    code_be(f.send, send);
    size_t at = 0;
    const logged *x = find(&l, "dial", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 2, (const void *[]){"127.0.0.1:7001", dial}, (size_t[]){14, 4});
    x = find(&l, "send", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 3, (const void *[]){"0.0.0.0:0", "lost", send}, (size_t[]){9, 4, 4});
    log_free(&l);
}

/* A list of two chunks: each data field is their bytes as one, whatever
 * the chunks (11-deterministic.md: "the bytes written, as one field"). */
static cw_iobufs *two_chunks(const char *first, const char *second)
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf a, b;
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, first, strlen(first), &a), CW_OK);
    ck_assert_int_eq(cw_iobuf_copy(cwc_backend, second, strlen(second), &b), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &a), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
    return l;
}

static void *chunked_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b;
    uint64_t size;
    ck_assert_int_eq(cw_storage_open(ctx, "p", "log", 3, &b, &size, NULL), CW_OK);
    cw_iobufs *l = two_chunks("ab", "cd");
    ck_assert_int_eq(cw_blob_write_bufs(b, 5, l, CW_WRITE_SYNC, NULL), CW_OK);
    cw_iobufs_release(l);
    cw_blob_close(b);
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    l = two_chunks("h", "i");
    ck_assert_int_eq(cw_sink_send(sink, l), CW_OK);
    cw_iobufs_release(l);
    cw_sink_close(sink);
    cw_stream_close(stream);
    return NULL;
}

CWC_CASE(det_event_fields_of_chunked_data, "deterministic", "DET-015 DET-016 RUN-008",
         DET | CWC_NEEDS_STORAGE | CWC_NEEDS_NETWORK | CWC_NEEDS_BUFFERS | CWC_REPEATED)
{
    log_t l = {0};
    run_logged(chunked_root, &l);
    static const uint8_t five[8] = {0, 0, 0, 0, 0, 0, 0, 5}, ok[4] = {0};
    const uint8_t synced = (uint8_t)CW_WRITE_SYNC;
    size_t at = 0;
    const logged *x = find(&l, "write_at", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 5, (const void *[]){"p", "log", five, "abcd", &synced},
               (size_t[]){1, 3, 8, 4, 1});
    x = find(&l, "send", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 3, (const void *[]){"0.0.0.0:0", "hi", ok}, (size_t[]){9, 2, 4});
    log_free(&l);
}

/* ---- Events of every size ------------------------------------------------------------------- */

enum { LARGEST_SWEPT = 320, HUGE_WRITE = 100000 };

/* Writes of every length from 0 to LARGEST_SWEPT bytes, then one of
 * HUGE_WRITE: whatever buffer an implementation assembles an event in,
 * some of these events fill it exactly, some overflow it by a byte, and
 * one is far beyond it. */
static void *sizes_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    uint8_t *bytes = malloc(HUGE_WRITE);
    ck_assert_ptr_nonnull(bytes);
    for (size_t i = 0; i < HUGE_WRITE; i++)
        bytes[i] = (uint8_t)(i * 7 + 3);
    cw_blob *b;
    uint64_t size;
    ck_assert_int_eq(cw_storage_open(ctx, "p", "sizes", 5, &b, &size, NULL), CW_OK);
    for (size_t len = 0; len <= LARGEST_SWEPT; len++)
        ck_assert_int_eq(cw_blob_write_at(b, len, bytes, len, CW_WRITE_DEFAULT, NULL), CW_OK);
    ck_assert_int_eq(cw_blob_write_at(b, 0, bytes, HUGE_WRITE, CW_WRITE_DEFAULT, NULL), CW_OK);
    cw_blob_close(b);
    free(bytes);
    return NULL;
}

/* Each of those events enters the digest as 11-deterministic.md says,
 * recomputed from the log event by event: a digest that takes a long
 * field, or one just past some buffer, any other way differs. */
CWC_CASE(det_event_log_events_of_every_size, "deterministic", "DET-015 DET-016 RUN-008",
         DET | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    log_t l = {0};
    run_logged(sizes_root, &l);
    size_t at = 0, writes = 0;
    while (find(&l, "write_at", &at))
        writes++;
    ck_assert_uint_eq(writes, LARGEST_SWEPT + 2);
    char hex[65];
    replay_chain(&l, hex);
    log_free(&l);
}

/* ---- Which refused or failed calls are recorded -------------------------------------------- */

/* The number of logged events with `label`. */
static size_t count_of(const log_t *l, const char *label)
{
    size_t at = 0, n = 0;
    while (find(l, label, &at))
        n++;
    return n;
}

/* Calls refused for their arguments record nothing; one refused for its
 * partition name or its offset records its event first [STOR-029]. A
 * sync after a failed one draws its rate (an injected failure records a
 * `fault`), a synced write then draws nothing [STOR-037]. */
static void *refused_storage_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b;
    uint64_t size;
    ck_assert_int_eq(cw_storage_open(ctx, "a/b", "x", 1, &b, &size, NULL),
                     CW_ERR_PARTITION_NAME_INVALID);
    ck_assert_int_eq(cw_storage_open(ctx, "p", "x", 1, &b, &size, NULL), CW_OK);
    cw_iobuf_mut m;
    ck_assert_int_eq(cw_blob_read_at(b, INT64_MAX, 1, CW_READ_DEFAULT, &m, NULL),
                     CW_ERR_OFFSET_OVERFLOW);
    ck_assert_int_eq(cw_blob_write_at(b, 0, "x", 1, 0x80, NULL), CW_ERR_INVALID);
    cw_storage_faults f;
    memset(&f, 0, sizeof f);
    f.sync = CW_RATE_ALWAYS;
    f.write = CW_RATE_ALWAYS;
    ck_assert_int_eq(cw_storage_set_faults(ctx, &f), CW_OK);
    ck_assert_int_eq(cw_blob_sync(b, NULL), CW_ERR_BLOB_SYNC_FAILED);
    ck_assert_int_eq(cw_blob_sync(b, NULL), CW_ERR_BLOB_SYNC_FAILED);
    ck_assert_int_eq(cw_blob_write_at(b, 0, "y", 1, CW_WRITE_SYNC, NULL), CW_ERR_BLOB_SYNC_FAILED);
    cw_blob_close(b);
    return NULL;
}

CWC_CASE(det_event_refused_storage_calls, "deterministic", "STOR-029 STOR-030 STOR-037 RUN-008",
         DET | CWC_NEEDS_STORAGE | CWC_REPEATED)
{
    log_t l = {0};
    run_logged(refused_storage_root, &l);
    ck_assert_uint_eq(count_of(&l, "open"), 2);
    ck_assert_uint_eq(count_of(&l, "read_at"), 1);
    ck_assert_uint_eq(count_of(&l, "write_at"), 1); /* the synced one */
    ck_assert_uint_eq(count_of(&l, "sync"), 2);
    ck_assert_uint_eq(count_of(&l, "fault"), 2); /* both syncs, not the synced write */
    log_free(&l);
}

/* A stop wait records `stop` at its first try, once per wait value: a try
 * again, or of a copy made after it, records nothing; a copy made before
 * is a wait of its own; each cw_stop makes a new wait [DET-004]. */
static void *stop_tries_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_signal *held = cw_stopped(ctx);
    cw_wait w = cw_wait_stop(ctx, 5);
    cw_wait before = w;
    ck_assert_int_eq(cw_poll(&w, 1), CW_ERR_WOULD_BLOCK);
    cw_wait after = w;
    ck_assert_int_eq(cw_poll(&w, 1), CW_ERR_WOULD_BLOCK);
    ck_assert_int_eq(cw_poll(&after, 1), CW_ERR_WOULD_BLOCK);
    ck_assert_int_eq(cw_poll(&before, 1), CW_ERR_WOULD_BLOCK);
    cw_signal_release(held);
    ck_assert_int_eq(cw_poll(&w, 1), 0);
    ck_assert_int_eq(cw_stop(ctx, 6, CW_FOREVER), CW_OK); /* after the stop: recorded */
    return NULL;
}

CWC_CASE(det_event_stop_per_wait, "deterministic", "DET-004 SIG-006 RUN-008", DET | CWC_REPEATED)
{
    log_t l = {0};
    run_logged(stop_tries_root, &l);
    static const uint8_t five[4] = {0, 0, 0, 5}, six[4] = {0, 0, 0, 6};
    size_t at = 0;
    const logged *x = find(&l, "stop", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 1, (const void *[]){five}, (size_t[]){4});
    x = find(&l, "stop", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 1, (const void *[]){five}, (size_t[]){4});
    x = find(&l, "stop", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 1, (const void *[]){six}, (size_t[]){4});
    ck_assert_ptr_null(find(&l, "stop", &at));
    log_free(&l);
}

/* Every send and recv that completes is recorded, whatever its result:
 * a send to a closed stream, one on the sink that poisoned, a recv that
 * found the end, one on the stream that poisoned [DET-024]. */
static void *failed_transfers_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    cw_stream_close(stream);
    cw_iobufs *l = two_chunks("lo", "st");
    ck_assert_int_ne(cw_sink_send(sink, l), CW_OK);
    ck_assert_int_eq(cw_sink_send(sink, l), CW_ERR_CLOSED);
    cw_iobufs_release(l);
    cw_sink_close(sink);
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    l = two_chunks("a", "b");
    ck_assert_int_eq(cw_sink_send(sink, l), CW_OK);
    cw_iobufs_release(l);
    cw_sink_close(sink);
    cw_iobufs *got = NULL;
    ck_assert_int_eq(cw_stream_recv(stream, 5, &got), CW_ERR_RECV_FAILED);
    ck_assert_int_eq(cw_stream_recv(stream, 1, &got), CW_ERR_CLOSED);
    cw_stream_close(stream);
    return NULL;
}

CWC_CASE(det_event_failed_transfers, "deterministic", "DET-024 RUN-008",
         DET | CWC_NEEDS_NETWORK | CWC_NEEDS_BUFFERS | CWC_REPEATED)
{
    log_t l = {0};
    run_logged(failed_transfers_root, &l);
    static const uint8_t five[8] = {0, 0, 0, 0, 0, 0, 0, 5}, one[8] = {0, 0, 0, 0, 0, 0, 0, 1};
    uint8_t closed[4], recv_failed[4];
    code_be(CW_ERR_CLOSED, closed);
    code_be(CW_ERR_RECV_FAILED, recv_failed);
    size_t at = 0;
    const logged *x = find(&l, "send", &at);
    ck_assert_ptr_nonnull(x);
    x = find(&l, "send", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 3, (const void *[]){"0.0.0.0:0", "lost", closed}, (size_t[]){9, 4, 4});
    ck_assert_ptr_nonnull(find(&l, "send", &at));
    at = 0;
    x = find(&l, "recv", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 4, (const void *[]){"0.0.0.0:0", five, recv_failed, ""}, (size_t[]){9, 8, 4, 0});
    x = find(&l, "recv", &at);
    ck_assert_ptr_nonnull(x);
    fields_are(x, 4, (const void *[]){"0.0.0.0:0", one, closed, ""}, (size_t[]){9, 8, 4, 0});
    ck_assert_ptr_null(find(&l, "recv", &at));
    log_free(&l);
}
