/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * sweep_workloads.c - the allocation sweep's programs, most on the
 * deterministic backend (one thread, so every run of a workload makes the
 * same allocations in the same order and "the N-th" names one call).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "cwrt/cwrt.h"
#include "tests/sweep_workloads.h"

/* A run's status is acceptable when it is success or exhausted memory. */
static int run_ok(int rc)
{
    return rc == CW_OK || rc == CW_ERR_NOMEM ? 0 : 1;
}

/* The backend of the run going on, whose buffers a workload uses. */
static const cw_backend *running;

static int start_with(const cw_backend *b, cw_io_backend io, cw_sweep_root root)
{
    running = b;
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.io_backend = io;
    cw_run_result res;
    int rc = cw_start(b, &cfg, root, NULL, &res);
    if (rc != res.status)
        return 1;
    return run_ok(rc);
}

static int start_on(const cw_backend *b, cw_sweep_root root)
{
    return start_with(b, CW_IO_AUTO, root);
}

static int start_deterministic(cw_sweep_root root)
{
    return start_on(cw_backend_deterministic(), root);
}

/* Several threads allocate on the native backend, so "the N-th" is one
 * allocation near there, not the same one every run: each run is still
 * one in which some allocation failed, and must end as the spec says. */
static int start_native(cw_sweep_root root)
{
    return start_on(cw_backend_native(), root);
}

/* With the network's and storage's io_uring: a kernel without one makes
 * every run end with CW_ERR_NOMEM, the counting one included, and the
 * sweep then has nothing to fail. */
static int start_native_ring(cw_sweep_root root)
{
    return start_with(cw_backend_native(), CW_IO_URING, root);
}

/* ---- An empty run ----------------------------------------------------------- */

static void *returns_arg(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

/* ---- Spawn trees with aborts ------------------------------------------------ */

static void *sleeper(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (;;)
        if (cw_sleep(ctx, CW_MSEC) != CW_OK)
            return NULL;
}

/* Two sleeping children under a task that then waits forever. */
static void *parent(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (int i = 0; i < 2; i++) {
        cw_ctx *c = cw_child(ctx, "leaf");
        cw_handle *h = c ? cw_spawn(c, sleeper, NULL) : NULL;
        if (h)
            cw_handle_release(h);
    }
    cw_sleep(ctx, CW_FOREVER);
    return NULL;
}

static int *bad_flag(cw_ctx *ctx)
{
    (void)ctx;
    static int bad;
    return &bad;
}

/* The join of a spawned task: its value, an abort, or exhausted memory. */
static void check_join(cw_ctx *ctx, cw_handle *h, void *want, int want_rc)
{
    void *v = NULL;
    int rc = cw_join(h, &v);
    if (!(rc == want_rc && (rc != CW_OK || v == want)) && rc != CW_ERR_NOMEM)
        *bad_flag(ctx) = 1;
    cw_handle_release(h);
}

static void check_aborted_join(cw_ctx *ctx, cw_handle *h)
{
    void *v = NULL;
    int rc = cw_join(h, &v);
    if (!(rc == CW_ERR_CLOSED || rc == CW_ERR_NOMEM || (rc == CW_OK && v == NULL)))
        *bad_flag(ctx) = 1;
    cw_handle_release(h);
}

static void *tree_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *kept[3] = {0};
    for (int i = 0; i < 3; i++) {
        cw_ctx *c = cw_child(ctx, "branch");
        kept[i] = c ? cw_spawn(c, parent, NULL) : NULL;
    }
    cw_sleep(ctx, 3 * CW_MSEC);
    /* A parent whose sleep found no memory for its alarm has returned
     * before the abort: then its join gives its NULL value. */
    for (int i = 0; i < 3; i++)
        if (kept[i]) {
            cw_abort(kept[i]);
            check_aborted_join(ctx, kept[i]);
        }
    cw_ctx *c = cw_child(ctx, "last");
    cw_handle *h = c ? cw_spawn(c, returns_arg, &kept) : NULL;
    if (h)
        check_join(ctx, h, &kept, CW_OK);
    return *bad_flag(ctx) ? NULL : ctx;
}

/* ---- Channels, oneshots and select ------------------------------------------ */

/* Sends 1..n on an unbounded channel, then drops its side. */
static void *counter_sender(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_chan *c = arg;
    for (int i = 1; i <= 40; i++)
        if (cw_chan_send(c, &i) != CW_OK)
            break; /* a growth that found no memory: the value was not sent */
    cw_chan_sender_drop(c);
    return NULL;
}

/* Every value received is the next one sent; a oneshot carries the sum. */
static void *chan_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_chan *c = cw_chan_new(ctx, sizeof(int), 0);
    cw_oneshot *o = cw_oneshot_new(ctx, sizeof(int));
    if (!c || !o) {
        if (c) {
            cw_chan_sender_drop(c);
            cw_chan_receiver_drop(c);
        }
        if (o) {
            cw_oneshot_sender_drop(o);
            cw_oneshot_receiver_drop(o);
        }
        return ctx;
    }
    cw_handle *h = cw_spawn(cw_child(ctx, "sender"), counter_sender, c);
    int want = 1, v, sum = 0;
    for (;;) {
        cw_wait w[2] = {cw_wait_recv(c, &v), cw_wait_sleep(ctx, CW_SEC)};
        int i = cw_select(w, 2);
        if (i != 0 || w[0].result != CW_OK)
            break; /* the sender is gone (or never ran), or the sleep found no memory */
        if (v != want++)
            *bad_flag(ctx) = 1;
        sum += v;
    }
    cw_chan_receiver_drop(c);
    cw_join(h, NULL);
    cw_handle_release(h);
    int got = 0;
    int sent = cw_oneshot_send(o, &sum);
    cw_oneshot_sender_drop(o);
    /* A completed receive ends the receiving side: nothing to drop after. */
    if (sent != CW_OK || cw_oneshot_recv(o, &got) != CW_OK || got != sum)
        *bad_flag(ctx) = 1;
    return *bad_flag(ctx) ? NULL : ctx;
}

/* ---- Metrics ------------------------------------------------------------------ */

/* Counts that read back what was added, or 0 on a metric that could not
 * be made; the encode is a text ending "# EOF\n", or NULL. */
static void *metrics_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const char *const labels[1] = {"peer"};
    cw_ctx *c = cw_with_attribute(cw_child(ctx, "svc"), "zone", "a");
    cw_metric *m = cw_counter(c, "requests", "requests served");
    cw_metric *f = cw_family(c, "bytes", "bytes by peer", CW_METRIC_COUNTER, labels, 1);
    cw_counter_add(m, 3);
    uint64_t got = cw_counter_get(m);
    for (int i = 0; i < 4; i++) {
        const char *values[1] = {i % 2 ? "one" : "two"};
        cw_counter_inc(cw_family_get(f, values));
    }
    if (got != 3 && got != 0)
        *bad_flag(ctx) = 1;
    char *text = cw_metrics_encode(ctx);
    if (text && strcmp(text + strlen(text) - 6, "# EOF\n") != 0)
        *bad_flag(ctx) = 1;
    free(text);
    cw_metric_release(f);
    cw_metric_release(m);
    cw_ctx_release(c);
    return *bad_flag(ctx) ? NULL : ctx;
}

/* ---- Memory storage ------------------------------------------------------------ */

/* Open blob `name` of `partition` and write `len` bytes at 0 and sync
 * them; whether they were synced. *b is the open blob, or NULL when the
 * open found no memory. */
static bool write_synced(cw_ctx *ctx, const char *partition, const char *name, const void *data,
                         size_t len, cw_blob **b)
{
    uint64_t size = 0;
    *b = NULL;
    if (cw_storage_open(ctx, partition, name, strlen(name), b, &size, NULL) != CW_OK)
        return false;
    return cw_blob_write_at(*b, 0, data, len, 0, NULL) == CW_OK && cw_blob_sync(*b, NULL) == CW_OK;
}

/* What a sync made durable reads back; a call that found no memory says
 * so with CW_ERR_NOMEM (or the storage error that carries it). */
static void *storage_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b;
    cw_storage_error err;
    const char data[] = "durable bytes";
    bool synced = write_synced(ctx, "sweep", "log", data, sizeof data, &b);
    if (!b)
        return ctx;
    char back[sizeof data] = {0};
    if (synced && cw_blob_read_into(b, 0, back, sizeof back, 0, &err) == CW_OK &&
        memcmp(back, data, sizeof data) != 0)
        *bad_flag(ctx) = 1;
    cw_blob_close(b);
    cw_blob_names *names = NULL;
    if (cw_storage_scan(ctx, "sweep", &names, &err) == CW_OK) {
        if (synced && !cw_blob_names_contains(names, "log", 3))
            *bad_flag(ctx) = 1;
        cw_blob_names_release(names);
    }
    cw_storage_remove(ctx, "sweep", NULL, 0, &err);
    return *bad_flag(ctx) ? NULL : ctx;
}

/* ---- The network ------------------------------------------------------------ */

static bool nomem_or(int rc, int want)
{
    return rc == want || rc == CW_ERR_NOMEM;
}

/* `text` from `sink` to `stream`: what arrives is what was sent, or a
 * call said it found no memory. */
static void exchange(cw_ctx *ctx, cw_sink *sink, cw_stream *stream, const char *text)
{
    size_t len = strlen(text);
    cw_iobufs *l = cw_iobufs_new(running);
    cw_iobuf buf;
    if (!l || cw_iobuf_static(running, text, len, &buf) != CW_OK ||
        cw_iobufs_append(l, &buf) != CW_OK) {
        cw_iobufs_release(l);
        return;
    }
    int rc = cw_sink_send(sink, l);
    cw_iobufs_release(l);
    if (!nomem_or(rc, CW_OK))
        *bad_flag(ctx) = 1;
    cw_iobufs *got = NULL;
    if (rc == CW_OK) {
        rc = cw_stream_recv(stream, len, &got);
        if (!nomem_or(rc, CW_OK) || (got && !cw_iobufs_equal_bytes(got, text, len)))
            *bad_flag(ctx) = 1;
    }
    cw_iobufs_release(got);
}

static void close_halves(cw_sink *sink, cw_stream *stream)
{
    cw_sink_close(sink);
    cw_stream_close(stream);
}

/* A dial to `l` and its accept, and a message each way. */
static void connect_to(cw_ctx *ctx, cw_listener *l)
{
    cw_addr at;
    cw_sink *sink;
    cw_stream *stream;
    cw_conn c;
    if (cw_listener_local_addr(l, &at) != CW_OK)
        *bad_flag(ctx) = 1;
    int rc = cw_dial(ctx, &at, &sink, &stream);
    if (rc != CW_OK) {
        *bad_flag(ctx) |= !nomem_or(rc, CW_OK) || sink || stream;
        return;
    }
    rc = cw_listener_accept(l, &c);
    if (rc == CW_OK) {
        exchange(ctx, sink, c.stream, "ping");
        exchange(ctx, c.sink, stream, "pong");
        close_halves(c.sink, c.stream);
    }
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK);
    close_halves(sink, stream);
}

/* Names, partitions and a mock channel: each works, is not there on this
 * backend, or says it found no memory. */
static void network_extras(cw_ctx *ctx)
{
    cw_addr lo = cw_addr_loopback4(0), any = cw_addr_ipv4(0, 0, 0, 0, 0), out[4];
    size_t n = 0;
    int reg = cw_resolver_register(ctx, "localhost", &lo, 1);
    int rc = cw_resolve(ctx, "localhost", out, 4, &n, NULL);
    *bad_flag(ctx) |= !nomem_or(reg, CW_OK) && reg != CW_ERR_UNSUPPORTED;
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK) && !(rc == CW_ERR_RESOLVE_FAILED && reg != CW_OK);
    *bad_flag(ctx) |= rc == CW_OK ? n == 0 : n != 0;
    rc = cw_network_partition(ctx, &any, &lo);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK) && rc != CW_ERR_UNSUPPORTED;
    rc = cw_network_repair(ctx, &any, &lo);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK) && rc != CW_ERR_UNSUPPORTED;
    cw_sink *sink;
    cw_stream *stream;
    rc = cw_mock_channel(ctx, &sink, &stream);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK) || (rc != CW_OK && (sink || stream));
    if (rc == CW_OK) {
        exchange(ctx, sink, stream, "mock");
        close_halves(sink, stream);
    }
}

static void *network_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_listener *l = NULL;
    cw_addr any = cw_addr_loopback4(0);
    int rc = cw_bind(ctx, &any, &l);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK) || (rc != CW_OK && l);
    if (rc == CW_OK) {
        connect_to(ctx, l);
        cw_listener_close(l);
    }
    network_extras(ctx);
    return *bad_flag(ctx) ? NULL : ctx;
}

/* ---- TCP through the network's ring ------------------------------------------ */

/* More than a loopback socket takes before its reader reads (its
 * receive buffer may grow to 32 MiB): the send goes out in part by calls,
 * and the rest through the ring (native/tcp.c). */
enum { BULK = 64 << 20, BULK_READ = 4 << 20 };

/* A pattern that repeats every 4093 bytes (a prime: no chunk or segment
 * boundary lines up with it), filled by doubling copies, which each run's
 * process makes quickly even under a sanitizer. It is mapped, not a
 * global or a heap block: LeakSanitizer scans those at every run's exit,
 * and 64 MiB of them made each run of every workload slower. NULL when
 * the mapping fails, which the workload takes as no memory. */
static const uint8_t *bulk_bytes(void)
{
    enum { PERIOD = 4093 };
    static uint8_t *bytes;
    if (bytes)
        return bytes;
    void *p = mmap(NULL, BULK, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED)
        return NULL;
    bytes = p;
    for (size_t i = 0; i < PERIOD; i++)
        bytes[i] = (uint8_t)(i * 31 + 1);
    for (size_t have = PERIOD; have < BULK; have *= 2)
        memcpy(bytes + have, bytes, have < BULK - have ? have : BULK - have);
    return bytes;
}

/* The accepted side and what its reader saw: CW_OK once every byte came
 * right, else the error of the recv that failed. */
typedef struct bulk_side {
    cw_conn c;
    int rc;
} bulk_side;

/* Every byte, checked, in recvs of BULK_READ; then both halves closed, so
 * that a sender still waiting for room fails rather than waits for ever. */
static void *bulk_read(cw_ctx *ctx, void *arg)
{
    bulk_side *b = arg;
    /* Late, so that the socket fills and the send is left waiting for room. */
    (void)cw_sleep(ctx, 2 * CW_MSEC);
    for (size_t at = 0; at < BULK && b->rc == CW_OK; at += BULK_READ) {
        cw_iobufs *got = NULL;
        b->rc = cw_stream_recv(b->c.stream, BULK_READ, &got);
        if (b->rc == CW_OK && !cw_iobufs_equal_bytes(got, bulk_bytes() + at, BULK_READ))
            *bad_flag(ctx) = 1;
        cw_iobufs_release(got);
    }
    close_halves(b->c.sink, b->c.stream);
    return NULL;
}

/* The send of BULK bytes, racing the reader's end: its result, or
 * CW_ERR_CLOSED when the reader ended first (it never started, or failed),
 * which gives the send up. */
static int bulk_send(cw_sink *sink, cw_handle *reader, int *joined)
{
    *joined = 1; /* not yet */
    cw_iobufs *l = cw_iobufs_new(running);
    cw_iobuf buf;
    if (!l || cw_iobuf_static(running, bulk_bytes(), BULK, &buf) != CW_OK ||
        cw_iobufs_append(l, &buf) != CW_OK) {
        cw_iobufs_release(l);
        return CW_ERR_NOMEM;
    }
    void *v;
    cw_wait w[2] = {cw_wait_sink_send(sink, l), cw_wait_join(reader, &v)};
    int rc = cw_select(w, 2) == 0 ? w[0].result : CW_ERR_CLOSED;
    if (rc == CW_ERR_CLOSED)
        *joined = w[1].result;
    cw_iobufs_release(l);
    return rc;
}

/* BULK bytes in one send to a task that reads them. Each side succeeds,
 * or finds no memory, or fails because the other did. */
static void bulk_through(cw_ctx *ctx, cw_sink *sink, bulk_side *b)
{
    b->rc = CW_OK;
    cw_handle *reader = cw_spawn(cw_child(ctx, "reader"), bulk_read, b);
    int joined;
    int rc = bulk_send(sink, reader, &joined);
    cw_sink_close(sink); /* after its bytes: a reader still reading sees them, then the end */
    if (joined == 1)
        joined = cw_join(reader, NULL);
    cw_handle_release(reader);
    if (joined == CW_ERR_NOMEM) /* the reader never ran */
        close_halves(b->c.sink, b->c.stream);
    /* The reader never ran, or failed: the send may fail for it. */
    bool reader_failed = joined == CW_ERR_NOMEM || b->rc != CW_OK;
    *bad_flag(ctx) |= joined != CW_OK && joined != CW_ERR_NOMEM;
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK) &&
                      !(reader_failed && (rc == CW_ERR_CLOSED || rc == CW_ERR_SEND_FAILED));
    *bad_flag(ctx) |= !nomem_or(b->rc, CW_OK) && !(b->rc == CW_ERR_RECV_FAILED && rc != CW_OK);
}

static void *ring_network_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    if (!bulk_bytes())
        return ctx; /* nothing to send: as if the first allocation failed */
    cw_listener *l = NULL;
    cw_addr any = cw_addr_loopback4(0), at;
    int rc = cw_bind(ctx, &any, &l);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK);
    if (rc != CW_OK)
        return *bad_flag(ctx) ? NULL : ctx;
    cw_sink *sink = NULL;
    cw_stream *stream = NULL;
    bulk_side b;
    rc = cw_listener_local_addr(l, &at);
    if (rc == CW_OK)
        rc = cw_dial(ctx, &at, &sink, &stream);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK);
    if (rc == CW_OK && (rc = cw_listener_accept(l, &b.c)) == CW_OK)
        bulk_through(ctx, sink, &b);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK);
    if (rc != CW_OK && sink)
        cw_sink_close(sink);
    if (stream)
        cw_stream_close(stream);
    cw_listener_close(l);
    return *bad_flag(ctx) ? NULL : ctx;
}

/* ---- Crash and recovery ------------------------------------------------------ */

static const char synced_bytes[] = "synced before the crash";

/* Whether the run before the crash synced its blob. */
static int *synced_flag(void)
{
    static int synced;
    return &synced;
}

/* The first run: a blob written and synced, then the crash. */
static void *before_crash(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b;
    *synced_flag() = write_synced(ctx, "crash", "blob", synced_bytes, sizeof synced_bytes, &b);
    if (b)
        cw_blob_close(b);
    return ctx;
}

/* The recovered run: what was synced before the crash is there. */
static void *after_crash(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = NULL;
    uint64_t size = 0;
    cw_storage_error err;
    if (cw_storage_open(ctx, "crash", "blob", 4, &b, &size, &err) != CW_OK)
        return ctx;
    char back[sizeof synced_bytes] = {0};
    if (*synced_flag()) {
        int rc = cw_blob_read_into(b, 0, back, sizeof back, 0, &err);
        if (size != sizeof synced_bytes || !nomem_or(rc, CW_OK) ||
            (rc == CW_OK && memcmp(back, synced_bytes, sizeof back) != 0))
            *bad_flag(ctx) = 1;
    }
    cw_blob_close(b);
    return *bad_flag(ctx) ? NULL : ctx;
}

/* A run that crashes with a checkpoint, then its recovery running `root`. */
static int start_recovered(cw_sweep_root root)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cw_run_result res;
    cw_checkpoint *cp = NULL;
    *synced_flag() = 0;
    running = cw_backend_deterministic();
    int rc = cw_start_checkpoint(cw_backend_deterministic(), &cfg, before_crash, NULL, &res, &cp);
    if (run_ok(rc) || !cp) {
        if (cp)
            cw_checkpoint_free(cp);
        return run_ok(rc) || (rc == CW_OK && !cp);
    }
    rc = cw_recover(cp, root, NULL, &res, NULL);
    return rc != res.status || run_ok(rc);
}

/* ---- Buffer pools ------------------------------------------------------------ */

/* A buffer of `cap` bytes from `pool`, filled, frozen into a list and read
 * back: every step works or says CW_ERR_NOMEM. */
static void buffer_round_trip(cw_ctx *ctx, cw_bufpool *pool, size_t cap)
{
    cw_iobuf_mut m;
    int rc = cw_bufpool_alloc(pool, cap, &m);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK);
    if (rc != CW_OK)
        return;
    memset(m.data, 0x5a, cap);
    m.len = cap;
    cw_iobuf buf;
    cw_iobuf_mut_freeze(&m, &buf);
    cw_iobufs *l = cw_iobufs_new(running);
    if (!l || cw_iobufs_append(l, &buf) != CW_OK) {
        cw_iobuf_release(&buf);
        cw_iobufs_release(l);
        return;
    }
    static uint8_t back[70000];
    if (cw_iobufs_copy_out(l, back, cap) != CW_OK || back[0] != 0x5a || back[cap - 1] != 0x5a)
        *bad_flag(ctx) = 1;
    cw_iobufs_release(l);
}

static void *buffers_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cw_bufpool *pool = NULL;
    int rc = cw_bufpool_new(running, &cfg, &pool);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK) || (rc != CW_OK && pool);
    static const size_t sizes[] = {1, 64, 4096, 65536, 70000};
    for (size_t i = 0; pool && i < sizeof sizes / sizeof *sizes; i++)
        buffer_round_trip(ctx, pool, sizes[i]);
    cw_bufpool_release(pool);
    buffer_round_trip(ctx, cw_network_buffer_pool(ctx), 512);
    return *bad_flag(ctx) ? NULL : ctx;
}

/* ---- Strategies ---------------------------------------------------------------- */

static void square(void *out, size_t i, void *arg)
{
    (void)arg;
    *(uint64_t *)out = (uint64_t)i * i;
}

static void sum_identity(void *acc, void *arg)
{
    (void)arg;
    *(uint64_t *)acc = 0;
}

static void sum_range(void *acc, size_t begin, size_t end, void *arg)
{
    (void)arg;
    for (size_t i = begin; i < end; i++)
        *(uint64_t *)acc += i;
}

static void sum_reduce(void *acc, void *other, void *arg)
{
    (void)arg;
    *(uint64_t *)acc += *(uint64_t *)other;
}

static void *job_value(cw_strategy *s, void *arg)
{
    (void)s;
    return arg;
}

/* A map, a fold and a job: each gives the right answer or CW_ERR_NOMEM. */
static void use_strategy(cw_ctx *ctx, cw_strategy *s)
{
    static uint64_t squares[200];
    int rc = cw_strategy_map(s, ctx, 0, 200, sizeof *squares, square, NULL, squares);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK) || (rc == CW_OK && squares[199] != 199u * 199u);
    cw_fold f = {sizeof(uint64_t), sum_identity, sum_range, sum_reduce, NULL, NULL};
    uint64_t sum = 0;
    rc = cw_strategy_fold(s, ctx, 0, 1000, &f, &sum);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK) || (rc == CW_OK && sum != 499500);
    cw_job *j = NULL;
    rc = cw_strategy_spawn(s, job_value, ctx, &j);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK);
    void *v = NULL;
    if (rc == CW_OK && (cw_job_join(j, ctx, &v) != CW_OK || v != ctx))
        *bad_flag(ctx) = 1;
}

static void *strategy_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_strategy *s = NULL;
    int rc = cw_strategy_new(ctx, 2, &s);
    *bad_flag(ctx) |= !nomem_or(rc, CW_OK) || (rc != CW_OK && s);
    if (s) {
        use_strategy(ctx, s);
        cw_strategy_release(s);
    }
    return *bad_flag(ctx) ? NULL : ctx;
}

const cw_sweep_workload cw_sweep_workloads[] = {
    {"empty_run", returns_arg, start_deterministic, 0},
    {"spawn_tree", tree_root, start_deterministic, 0},
    {"channels", chan_root, start_deterministic, 0},
    {"metrics", metrics_root, start_deterministic, 0},
    {"storage", storage_root, start_deterministic, 0},
    {"network", network_root, start_deterministic, 0},
    {"recover", after_crash, start_recovered, 0},
    {"buffers", buffers_root, start_deterministic, 0},
    {"strategies", strategy_root, start_deterministic, 0},
    {"native_strategies", strategy_root, start_native, 0},
    {"native_network", network_root, start_native, 0},
    {"native_storage", storage_root, start_native, 0},
    /* Each run moves 64 MiB: a small sample of its points. */
    {"native_ring_network", ring_network_root, start_native_ring, 16},
    {NULL, NULL, NULL, 0},
};

int cw_sweep_run(const cw_sweep_workload *w)
{
    *bad_flag(NULL) = 0;
    int rc = w->start(w->root);
    return rc || *bad_flag(NULL);
}
