/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * alloc_faults.c - every place a workload allocates, refused in turn
 * (RUN-007 and the rules of exhausted memory each section states).
 *
 * A workload is a root task that uses one part of the interface and checks
 * that each call did what its rule says or reported CW_ERR_NOMEM. It runs
 * first with every allocation allowed, recording the places it allocates at
 * (harness/allocator.h); then once per place, in a child process of its
 * own, with the first allocation at that place refused, and at some places
 * with every allocation from then on refused as well (memory gone for
 * good): the sweep of cases/alloc_sweep.h, which alloc_faults_more.c's
 * workloads share. Each such run must end with its checks passed and
 * cw_start returning CW_OK or CW_ERR_NOMEM: no crash, no abort, no hang, no
 * call answering with another error, and no memory kept for what a refusal
 * left undone (RUN-008). A backend that ends the process on exhausted
 * memory, or reports success for what it could not do and then trips over
 * it, fails here.
 *
 * The places are the backend's and libc's alike: a thread libc could not
 * start for want of memory is exhausted memory too. Where the suite's
 * allocator is not the process's (a sanitizer build, valgrind), each
 * workload runs once, unrefused.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases/alloc_sweep.h"
#include "cases/metrics.h"

/* ---- Workloads: a run, spawns and aborts ----------------------------------------------- */

static void *returns_arg(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

static void *sleeps_on(cw_ctx *ctx, void *arg)
{
    (void)arg;
    while (cw_sleep(ctx, CW_MSEC) == CW_OK)
        ;
    return NULL;
}

/* A join of a task that returned `want`: that, or CW_ERR_NOMEM (it never
 * ran). A NULL handle is TASK-011's answer of a backend that could not
 * make even a spent one. */
static void join_returned(cw_handle *h, void *want)
{
    if (!h)
        return;
    void *v = NULL;
    int rc = cw_join(h, &v);
    EXPECT(rc == CW_ERR_NOMEM || (rc == CW_OK && v == want));
    cw_handle_release(h);
}

/* A join of an aborted sleeper: CW_ERR_CLOSED, or CW_ERR_NOMEM (it never
 * ran), or its NULL (a sleep without memory for its alarm ended it). */
static void join_aborted(cw_handle *h)
{
    if (!h)
        return;
    cw_abort(h);
    void *v = &v;
    int rc = cw_join(h, &v);
    EXPECT(rc == CW_ERR_CLOSED || rc == CW_ERR_NOMEM || (rc == CW_OK && v == NULL));
    cw_handle_release(h);
}

static void *tree_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *kept[3];
    for (int i = 0; i < 3; i++) {
        cw_ctx *branch = cw_with_attribute(cw_child(ctx, "branch"), "k", "v");
        EXPECT(branch != NULL);
        kept[i] = cw_spawn(cw_child(branch, "leaf"), sleeps_on, NULL);
        cw_ctx_release(branch);
    }
    EXPECT(cwc_ok_or_nomem(cw_sleep(ctx, 3 * CW_MSEC)));
    for (int i = 0; i < 3; i++)
        join_aborted(kept[i]);
    join_returned(cw_spawn(cw_child(ctx, "last"), returns_arg, ctx), ctx);
    /* Each kind of execution: a task whose thread or pool cannot be had is
     * refused, never left unrun with its join waiting for ever (TASK-011). */
    join_returned(cw_spawn(cw_dedicated(cw_child(ctx, "own")), returns_arg, ctx), ctx);
    join_returned(cw_spawn(cw_shared(cw_child(ctx, "blocking"), true), returns_arg, ctx), ctx);
    return ctx;
}

CWC_CASE(alloc_faults_empty_run, "runner", "RUN-006 RUN-007 RUN-008", 0)
{
    cwc_sweep(returns_arg);
}

CWC_CASE(alloc_faults_spawn_tree, "tasks", "RUN-007 RUN-008 TASK-011 CTX-006", 0)
{
    cwc_sweep(tree_root);
}

/* A run that begins, sleeps and spawns, under a checkpoint. */
static void *checkpointed_root(cw_ctx *ctx, void *arg)
{
    cwc_sweep_root_began();
    return tree_root(ctx, arg);
}

/* The run of `root` with a checkpoint: once the run started (its root
 * began), a checkpoint is handed back whatever the memory, so a backend
 * that cannot have it must refuse the run before it starts [DET-008]. */
static void run_checkpointed(cw_task_fn root, void *prepared)
{
    (void)prepared;
    cw_config cfg = cwc_config();
    cw_run_result res;
    memset(&res, 0, sizeof res);
    cw_checkpoint *cp = (cw_checkpoint *)&res; /* must be overwritten */
    int rc = cw_start_checkpoint(cwc_backend, &cfg, root, NULL, &res, &cp);
    cwc_sweep_check_checkpoint(rc, &res, cp);
}

CWC_CASE(alloc_faults_checkpoint, "recover", "DET-008 RUN-007 RUN-008",
         CW_CAP_DETERMINISTIC | CW_CAP_RECOVER)
{
    cwc_workload w = {checkpointed_root, NULL, run_checkpointed};
    cwc_sweep_workload(&w);
}

/* ---- Channels, oneshots, select and stops ---------------------------------------------- */

static void *counting_sender(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    cw_chan *c = arg;
    for (int i = 1; i <= 40; i++)
        if (cw_chan_send(c, &i) != CW_OK)
            break; /* no memory to grow: this value and the later ones are not sent */
    cw_chan_sender_drop(c);
    return NULL;
}

/* Received: 1, 2, 3... in order, until the sender stopped; their sum. */
static int receive_in_order(cw_ctx *ctx, cw_chan *c)
{
    int want = 1, v = 0, sum = 0;
    for (;;) {
        cw_wait w[2] = {cw_wait_recv(c, &v), cw_wait_sleep(ctx, 5 * CW_MSEC)};
        int i = cw_select(w, 2);
        if (i != 0 || w[0].result != CW_OK)
            return sum; /* the sender is gone, or the sleep had no memory */
        EXPECT(v == want);
        want++;
        sum += v;
    }
}

/* cw_timeout on a wait nothing will complete: it ran out, not before its
 * time, or its alarm found no memory and it ended at once [CLK-008]. A
 * timeout reported early would be the alarm's refusal misnamed. */
static void timeout_or_nomem(cw_ctx *ctx, cw_oneshot *o)
{
    int v = 0;
    cw_wait w = cw_wait_oneshot(o, &v);
    cw_time before = cw_current(ctx);
    int rc = cw_timeout(ctx, 2 * CW_MSEC, &w);
    EXPECT(rc == CW_ERR_NOMEM || (rc == CW_ERR_TIMEOUT && cw_current(ctx) - before >= 2 * CW_MSEC));
}

static void *chan_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_chan *c = cw_chan_new(ctx, sizeof(int), 0);
    cw_oneshot *o = cw_oneshot_new(ctx, sizeof(int));
    if (!c || !o) { /* NULL is their answer to exhausted memory */
        if (c)
            cw_chan_sender_drop(c), cw_chan_receiver_drop(c);
        if (o)
            cw_oneshot_sender_drop(o), cw_oneshot_receiver_drop(o);
        return ctx;
    }
    cw_handle *h = cw_spawn(cw_child(ctx, "sender"), counting_sender, c);
    int sum = receive_in_order(ctx, c);
    cw_chan_receiver_drop(c);
    join_returned(h, NULL);
    timeout_or_nomem(ctx, o);
    int got = 0;
    EXPECT(cw_oneshot_send(o, &sum) == CW_OK);
    cw_oneshot_sender_drop(o);
    EXPECT(cw_oneshot_recv(o, &got) == CW_OK && got == sum);
    return ctx;
}

CWC_CASE(alloc_faults_channels, "channels", "RUN-007 RUN-008 CHN-001 CLK-008", 0)
{
    cwc_sweep(chan_root);
}

/* A task that holds its stop signal until the stop comes. */
static void *holds_signal(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_signal *s = cw_stopped(ctx);
    EXPECT(s != NULL);
    int32_t value = 0;
    int rc = cw_signal_wait(s, &value);
    EXPECT(rc == CW_ERR_NOMEM || (rc == CW_OK && value == 7));
    cw_signal_release(s);
    return NULL;
}

static void *stop_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h = cw_spawn(cw_child(ctx, "holder"), holds_signal, NULL);
    EXPECT(cwc_ok_or_nomem(cw_sleep(ctx, CW_MSEC)));
    int rc = cw_stop(ctx, 7, CW_SEC);
    EXPECT(cwc_ok_or_nomem(rc) || rc == CW_ERR_TIMEOUT);
    join_returned(h, NULL);
    return ctx;
}

CWC_CASE(alloc_faults_stop, "signals", "RUN-007 RUN-008 SIG-007", 0)
{
    cwc_sweep(stop_root);
}

/* Signals taken and released before the stop: whether one was spent (no
 * memory for it) or not, none holds a claim once released, so the stop
 * waits for nothing. A spent one's release does nothing, whatever signal
 * is made after it [SIG-007]. */
static void *released_claims_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        cw_signal_release(cw_stopped(ctx));
    cw_signal *first = cw_stopped(ctx);
    cw_signal *second = cw_stopped(ctx);
    cw_signal_release(first);
    cw_signal_release(second);
    EXPECT(cwc_ok_or_nomem(cw_stop(ctx, 7, CW_SEC)));
    return ctx;
}

CWC_CASE(alloc_faults_spent_signal_released, "signals", "RUN-007 RUN-008 SIG-007", 0)
{
    cwc_sweep(released_claims_root);
}

/* ---- Metrics ---------------------------------------------------------------------------- */

/* Whether every sample line of `text` (not a # line) that names `metric`
 * also holds `label`. */
static bool every_line_labelled(const char *text, const char *metric, const char *label)
{
    for (const char *line = text; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        if (line[0] != '#' && memmem(line, len, metric, strlen(metric)) &&
            !memmem(line, len, label, strlen(label)))
            return false;
        line += len + (end != NULL);
    }
    return true;
}

/* A context made below one with an attribute, by cw_child and by a spawn,
 * has the attribute or is spent: a metric it registers is labelled with
 * it, or is not in the output under that context's name (CTX-006: no
 * attribute lost quietly; MET-019). */
static void *labelled_leaf(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_metric *m = cw_counter(ctx, "hits", "hits seen");
    EXPECT(m != NULL);
    if (m)
        cw_counter_inc(m);
    char *text = cw_metrics_encode(ctx);
    EXPECT(!text || every_line_labelled(text, "leaf_hits", "zone=\"a\""));
    free(text);
    cw_metric_release(m);
    return NULL;
}

static void attributes_inherited(cw_ctx *c)
{
    cw_ctx *leaf = cw_child(c, "leaf");
    EXPECT(leaf != NULL);
    labelled_leaf(leaf, NULL);
    cw_ctx_release(leaf);
    cw_handle *h = cw_spawn(cw_child(c, "spawned_leaf"), labelled_leaf, NULL);
    EXPECT(h != NULL);
    void *v = NULL;
    int rc = cw_join(h, &v);
    EXPECT(rc == CW_OK || rc == CW_ERR_NOMEM);
    cw_handle_release(h);
}

/* A metric reads what was added, or 0 when it is spent (MET-019); an
 * encode is whole text, holding every metric not spent, or NULL. */
static void *metrics_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const char *const labels[1] = {"peer"};
    cw_ctx *c = cw_with_attribute(cw_child(ctx, "svc"), "zone", "a");
    cw_metric *m = cw_counter(c, "requests", "requests served");
    cw_metric *f = cw_family(c, "bytes", "bytes by peer", CW_METRIC_COUNTER, labels, 1);
    EXPECT(m != NULL && f != NULL);
    if (!m || !f)
        return ctx; /* failed above: the rest would only crash */
    cw_counter_add(m, 3);
    uint64_t got = cw_counter_get(m);
    EXPECT(got == 3 || got == 0);
    for (int i = 0; i < 4; i++) {
        const char *values[1] = {i % 2 ? "one" : "two"};
        cw_metric *child = cw_family_get(f, values);
        EXPECT(child != NULL);
        if (child)
            cw_counter_inc(child);
    }
    /* A histogram that is not spent reads what it observed, and a whole
     * text holds its series. */
    static const double bounds[2] = {1, 2};
    cw_metric *h = cw_histogram(c, "latency", "latency seen", bounds, 2);
    EXPECT(h != NULL);
    if (!h)
        return ctx;
    cw_histogram_observe(h, 0.5);
    bool live = cw_histogram_count(h) == 1;
    EXPECT(live || cw_histogram_count(h) == 0);
    /* A buffer of the run's network pool, so that the encode below also
     * writes that pool's series (MET-014), each made as it encodes. */
    cw_bufpool *np = cw_network_buffer_pool(ctx);
    cw_iobuf_mut pooled;
    if (np && cw_bufpool_alloc(np, 100, &pooled) == CW_OK)
        cw_iobuf_mut_release(&pooled);
    char *text = cw_metrics_encode(ctx);
    EXPECT(!text || strcmp(text + strlen(text) - 6, "# EOF\n") == 0);
    EXPECT(!text || !live || strstr(text, "latency_count") != NULL);
    /* Whole text or none: a bucket whose bound could not be spelled
     * fails the encode, never writes a bucket without its bound. */
    EXPECT(!text || !live ||
           (strstr(text, "le=\"1.0\"}") != NULL && strstr(text, "le=\"2.0\"}") != NULL));
    free(text);
    cw_metric_release(h);
    cw_metric_release(f);
    cw_metric_release(m);
    attributes_inherited(c);
    cw_ctx_release(c);
    return ctx;
}

CWC_CASE(alloc_faults_metrics, "metrics", "RUN-007 RUN-008 MET-019 CTX-006", CWC_NEEDS_METRICS)
{
    cwc_sweep(metrics_root);
}

/* ---- Buffers ------------------------------------------------------------------------------ */

static void release_counted(void *data, void *arg)
{
    (void)data;
    atomic_fetch_add((atomic_int *)arg, 1);
}

/* An adopted buffer: viewed, or refused with its bytes still the
 * caller's (BUF-002); released once either way by the end. */
static void adopt_once(void)
{
    static char bytes[64] = "adopted";
    atomic_int released;
    atomic_init(&released, 0);
    cw_iobuf b;
    int rc = cw_iobuf_adopt(cwc_backend, bytes, sizeof bytes, release_counted, &released, &b);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc == CW_OK) {
        EXPECT(cw_iobuf_equal_bytes(&b, bytes, sizeof bytes));
        cw_iobuf_release(&b);
    }
    EXPECT(atomic_load(&released) == (rc == CW_OK));
}

/* A pooled buffer of `cap` bytes, filled, frozen, read back. */
static void pool_round_trip(cw_bufpool *pool, size_t cap)
{
    cw_iobuf_mut m;
    int rc = cw_bufpool_alloc(pool, cap, &m);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc != CW_OK)
        return;
    memset(m.data, 0x5a, cap);
    m.len = cap;
    cw_iobuf buf;
    cw_iobuf_mut_freeze(&m, &buf);
    static uint8_t back[70000];
    EXPECT(cw_iobuf_copy_out(&buf, back, cap) == CW_OK && back[0] == 0x5a && back[cap - 1] == 0x5a);
    cw_iobuf_release(&buf);
}

static void zeroed_and_copied(void)
{
    cw_iobuf_mut z;
    int rc = cw_iobuf_mut_zeroed(cwc_backend, 3000, &z);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc == CW_OK) {
        static const uint8_t zeros[3000];
        EXPECT(cw_iobuf_mut_equal_bytes(&z, zeros, sizeof zeros));
        cw_iobuf_mut_release(&z);
    }
    cw_iobuf c;
    rc = cw_iobuf_copy(cwc_backend, "copied", 6, &c);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc == CW_OK)
        EXPECT(cw_iobuf_equal_bytes(&c, "copied", 6)), cw_iobuf_release(&c);
}

/* A buffer at a page boundary: given, or refused (BUF-002). */
static void aligned_once(void)
{
    cw_iobuf_mut m;
    int rc = cw_iobuf_mut_with_alignment(cwc_backend, 5000, 4096, &m);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc != CW_OK)
        return;
    EXPECT(((uintptr_t)m.data & 4095) == 0 && cw_iobuf_mut_capacity(&m) >= 5000);
    cw_iobuf_mut_release(&m);
}

/* Two chunks of `l` (of "ab" and "cd") made one: the four bytes in order,
 * or no memory with the list as it was and `*out` the empty handle
 * (BUF-015, BUF-029). */
static void coalesce_mut_once(cw_iobufs_mut *l)
{
    cw_iobuf_mut out;
    memset(&out, 0xa5, sizeof out);
    int rc = cw_iobufs_mut_coalesce(l, NULL, &out);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc == CW_OK) {
        EXPECT(cw_iobuf_mut_equal_bytes(&out, "abcd", 4));
        EXPECT(cw_iobufs_mut_len(l) == 0);
        cw_iobuf_mut_release(&out);
        return;
    }
    EXPECT(out.data != NULL && out.len == 0 && out.cap == 0);
    EXPECT(cw_iobufs_mut_equal_bytes(l, "abcd", 4));
}

/* The same for an immutable list. */
static void coalesce_once(cw_iobufs *l)
{
    cw_iobuf out;
    memset(&out, 0xa5, sizeof out);
    int rc = cw_iobufs_coalesce(l, NULL, &out);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc == CW_OK) {
        EXPECT(cw_iobuf_equal_bytes(&out, "abcd", 4));
        EXPECT(cw_iobufs_len(l) == 0);
        cw_iobuf_release(&out);
        return;
    }
    EXPECT(out.data != NULL && out.len == 0);
    EXPECT(cw_iobufs_equal_bytes(l, "abcd", 4));
}

/* `text` appended to both lists as a chunk of its own; false when memory
 * ran short, with what was not appended released. */
static bool append_chunk(cw_iobufs_mut *ml, cw_iobufs *l, const char *text)
{
    cw_iobuf_mut m;
    if (cw_iobuf_mut_with_capacity(cwc_backend, 2, &m) != CW_OK)
        return false;
    EXPECT(cw_iobuf_mut_put(&m, text, 2) == CW_OK);
    if (cw_iobufs_mut_append(ml, &m) != CW_OK) {
        cw_iobuf_mut_release(&m);
        return false;
    }
    cw_iobuf c;
    if (cw_iobuf_copy(cwc_backend, text, 2, &c) != CW_OK)
        return false;
    if (cw_iobufs_append(l, &c) != CW_OK) {
        cw_iobuf_release(&c);
        return false;
    }
    return true;
}

/* Lists of two chunks, each coalesced when it could be made whole. */
static void coalesced(void)
{
    cw_iobufs_mut *ml = cw_iobufs_mut_new(cwc_backend);
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    if (ml && l && append_chunk(ml, l, "ab") && append_chunk(ml, l, "cd")) {
        coalesce_mut_once(ml);
        coalesce_once(l);
    }
    if (ml)
        cw_iobufs_mut_release(ml);
    if (l)
        cw_iobufs_release(l);
}

/* A builder's inline bytes and a pushed buffer made one list, then split:
 * each step done, or no memory and nothing changed (a refused push leaves
 * the buffer with the caller or takes it whole, a refused finish keeps the
 * builder, a refused split leaves the list whole and `*head` NULL). */
static void built_and_split(cw_ctx *ctx)
{
    cw_iobufs_builder *bld = cw_iobufs_builder_new(cw_network_buffer_pool(ctx), 16);
    cw_iobuf pushed;
    if (!bld || cw_iobuf_copy(cwc_backend, "-pushed-", 8, &pushed) != CW_OK) {
        cw_iobufs_builder_release(bld);
        return;
    }
    /* A backend may find the inline buffer's memory only as a put needs it. */
    int rc = cw_iobufs_builder_put(bld, "head", 4);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc == CW_OK) {
        rc = cw_iobufs_builder_push(bld, &pushed);
        EXPECT(cwc_ok_or_nomem(rc));
    }
    cw_iobuf_release(&pushed); /* empty once moved in */
    if (rc == CW_OK) {
        rc = cw_iobufs_builder_put(bld, "tail", 4);
        EXPECT(cwc_ok_or_nomem(rc));
    }
    if (rc != CW_OK) {
        cw_iobufs_builder_release(bld);
        return;
    }
    cw_iobufs *l = cw_iobufs_builder_finish(bld);
    if (!l) {
        cw_iobufs_builder_release(bld);
        return;
    }
    EXPECT(cw_iobufs_equal_bytes(l, "head-pushed-tail", 16));
    cw_iobufs *head = (cw_iobufs *)&head; /* must be overwritten */
    rc = cw_iobufs_split_to(l, 6, &head);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc == CW_OK) {
        EXPECT(cw_iobufs_equal_bytes(head, "head-p", 6));
        EXPECT(cw_iobufs_equal_bytes(l, "ushed-tail", 10));
        cw_iobufs_release(head);
    } else {
        EXPECT(head == NULL && cw_iobufs_equal_bytes(l, "head-pushed-tail", 16));
    }
    cw_iobufs_release(l);
}

static void *buffers_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cfg.prefill = true;
    cfg.max_per_class = 2;
    cw_bufpool *pool = NULL;
    int rc = cw_bufpool_new(cwc_backend, &cfg, &pool);
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (pool != NULL));
    static const size_t sizes[] = {1, 64, 4096, 65536, 70000};
    for (size_t i = 0; pool && i < sizeof sizes / sizeof *sizes; i++)
        pool_round_trip(pool, sizes[i]);
    cw_bufpool_release(pool);
    pool_round_trip(cw_network_buffer_pool(ctx), 512);
    adopt_once();
    aligned_once();
    zeroed_and_copied();
    coalesced();
    built_and_split(ctx);
    return ctx;
}

CWC_CASE(alloc_faults_buffers, "buffers",
         "RUN-007 RUN-008 BUF-002 BUF-004 BUF-014 BUF-015 BUF-017 BUF-029 BUF-032",
         CWC_NEEDS_BUFFERS)
{
    cwc_sweep(buffers_root);
}

/* ---- Storage ------------------------------------------------------------------------------- */

static const char durable[] = "durable bytes";

/* What the blob "log" holds after a write and a sync. */
typedef struct blob_state {
    bool written, synced;
} blob_state;

/* The write_at events, and the resolve and resolver_register ones, of the
 * run so far, on a backend with CW_CAP_AUDIT: given on the run's thread, as
 * each enters the digest (DET-016). */
static uint64_t writes_logged, names_logged;
static uint8_t last_send[16]; /* the bytes of the last send event, cut at 16 */
static size_t last_send_len;

static void count_events(void *arg, const cw_event *e)
{
    (void)arg;
    if (strcmp(e->label, "send") == 0 && e->nfields >= 2) {
        last_send_len = e->fields[1].len;
        memcpy(last_send, e->fields[1].data,
               last_send_len < sizeof last_send ? last_send_len : sizeof last_send);
    }
    if (strcmp(e->label, "write_at") == 0)
        writes_logged++;
    if (strcmp(e->label, "resolve") == 0 || strcmp(e->label, "resolver_register") == 0)
        names_logged++;
}

/* A write that returned `rc` recorded its event, `before` the count of
 * them ahead of it: one not refused is one more (STOR-029). One refused
 * for want of memory may or may not have recorded it. */
static void write_logged(int rc, uint64_t before)
{
    if (!(cwc_backend->capabilities & CW_CAP_AUDIT) || rc == CW_ERR_NOMEM)
        return;
    EXPECT(writes_logged == before + 1);
}

static void run_logging_events(cw_task_fn root, void *prepared)
{
    (void)prepared;
    cw_config cfg = cwc_config();
    cfg.event_log = count_events;
    cwc_sweep_run_config(&cfg, root);
}

/* Blob `name` of the partition "sweep" opened, its length in `*size`:
 * the blob, or NULL when a call said it found no memory. An open refused
 * for memory did nothing (RUN-007), so it is asked again once: a blob it
 * began to make must not then read as another's or as corrupt. */
static cw_blob *open_swept(cw_ctx *ctx, const char *name, uint64_t *size)
{
    cw_blob *b = NULL;
    int rc = CW_ERR_NOMEM;
    for (int tries = 0; tries < 2 && rc == CW_ERR_NOMEM; tries++) {
        rc = cw_storage_open(ctx, "sweep", name, strlen(name), &b, size, NULL);
        EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (b != NULL));
    }
    return b;
}

/* The blob "log" written and synced; NULL when the open failed. */
static cw_blob *write_synced(cw_ctx *ctx, blob_state *st)
{
    uint64_t size = 0;
    cw_storage_error err;
    cw_blob *b = open_swept(ctx, "log", &size);
    if (!b)
        return NULL;
    uint64_t before = writes_logged;
    int rc = cw_blob_write_at(b, 0, durable, sizeof durable, 0, &err);
    EXPECT(cwc_ok_or_nomem(rc));
    write_logged(rc, before);
    st->written = rc == CW_OK;
    rc = cw_blob_sync(b, &err);
    EXPECT(cwc_ok_or_nomem(rc));
    st->synced = st->written && rc == CW_OK;
    return b;
}

/* "onetwo" written at `at` as two chunks, one transfer of two pieces
 * (STOR-008): written, or a call said it found no memory. */
static void write_two_chunks(cw_blob *b, uint64_t at)
{
    cw_iobufs *bufs = cw_iobufs_new(cwc_backend);
    if (!bufs)
        return;
    int rc = CW_OK;
    for (int i = 0; i < 2 && rc == CW_OK; i++) {
        cw_iobuf c;
        rc = cw_iobuf_copy(cwc_backend, i ? "two" : "one", 3, &c);
        EXPECT(cwc_ok_or_nomem(rc));
        if (rc != CW_OK)
            break;
        rc = cw_iobufs_append(bufs, &c);
        EXPECT(cwc_ok_or_nomem(rc));
        if (rc != CW_OK)
            cw_iobuf_release(&c);
    }
    if (rc == CW_OK) {
        uint64_t before = writes_logged;
        rc = cw_blob_write_bufs(b, at, bufs, 0, NULL);
        EXPECT(cwc_ok_or_nomem(rc));
        write_logged(rc, before);
    }
    if (rc == CW_OK) {
        char back[6] = {0};
        rc = cw_blob_read_into(b, at, back, sizeof back, 0, NULL);
        EXPECT(cwc_ok_or_nomem(rc) && (rc != CW_OK || memcmp(back, "onetwo", 6) == 0));
    }
    cw_iobufs_release(bufs);
}

/* A plain write, then a synced one inside it, at `at`: the synced bytes
 * are durable and the others not yet (STOR-008), which a backend may
 * keep track of by cutting the first write in two. The bytes read back
 * are the last written; a synced write that found no memory may have
 * written its bytes without making them durable (RUN-007 leaves undone
 * only what it did not do), so either content is right after it. */
static void synced_inside(cw_blob *b, uint64_t at)
{
    static const char outer[] = "0123456789abcdef", inner[] = "XY", after[] = "0123XY6789abcdef";
    int rc = cw_blob_write_at(b, at, outer, 16, CW_WRITE_DEFAULT, NULL);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc != CW_OK)
        return;
    rc = cw_blob_write_at(b, at + 4, inner, 2, CW_WRITE_SYNC, NULL);
    EXPECT(cwc_ok_or_nomem(rc));
    char back[16] = {0};
    int read = cw_blob_read_into(b, at, back, sizeof back, 0, NULL);
    EXPECT(cwc_ok_or_nomem(read) && (read != CW_OK || memcmp(back, after, 16) == 0 ||
                                     (rc != CW_OK && memcmp(back, outer, 16) == 0)));
}

/* The written bytes read into a buffer of the run's storage pool: they,
 * or no memory (STOR-006); a buffer a failed read took from the pool goes
 * back to it, or the pool outlives the run (RUN-008). */
static void read_pooled(cw_blob *b)
{
    cw_iobuf_mut m;
    int rc = cw_blob_read_at(b, 0, sizeof durable, 0, &m, NULL);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc != CW_OK)
        return;
    EXPECT(cw_iobuf_mut_equal_bytes(&m, durable, sizeof durable));
    cw_iobuf_mut_release(&m);
}

/* A sync started and joined: what cw_blob_sync would have returned
 * (STOR-016), CW_OK or no memory; a NULL handle is TASK-011's answer of a
 * backend that could not make even a spent one. */
static void synced_in_the_background(cw_blob *b)
{
    cw_handle *h = cw_blob_start_sync(b);
    if (!h)
        return;
    void *v = NULL;
    int rc = cw_join(h, &v);
    EXPECT(cwc_ok_or_nomem(rc));
    cw_handle_release(h);
}

/* Faults that fail every open, then none: each setting takes effect when
 * it reports CW_OK (STOR-030). Whether the storage is fault-free after. */
static bool faults_set_and_cleared(cw_ctx *ctx)
{
    cw_storage_faults f;
    memset(&f, 0, sizeof f);
    f.open = CW_RATE_ALWAYS;
    int rc = cw_storage_set_faults(ctx, &f);
    EXPECT(cwc_ok_or_nomem(rc) || rc == CW_ERR_UNSUPPORTED);
    if (rc == CW_ERR_UNSUPPORTED)
        return true;
    if (rc == CW_OK) {
        cw_blob *b = NULL;
        uint64_t size = 0;
        rc = cw_storage_open(ctx, "sweep", "log", 3, &b, &size, NULL);
        EXPECT(rc == CW_ERR_BLOB_OPEN_FAILED || rc == CW_ERR_NOMEM);
        if (b)
            cw_blob_close(b);
    }
    memset(&f, 0, sizeof f);
    rc = cw_storage_set_faults(ctx, &f);
    EXPECT(cwc_ok_or_nomem(rc));
    return rc == CW_OK;
}

/* A run that asked for CW_IO_URING and started has its ring (NAT-008),
 * whatever allocation was refused before its root: the gauge
 * runtime_io_uring is 1 in the text, when there was memory for one. */
static void ring_had_when_asked(cw_ctx *ctx)
{
    const uint64_t both = CW_CAP_PARALLEL | CW_CAP_PERSISTENT_STORAGE;
    if (cwc_io_backend != CW_IO_URING || (cwc_backend->capabilities & both) != both)
        return;
    static const char key[] = "\nruntime_io_uring ";
    char *text = cw_metrics_encode(ctx);
    if (!text)
        return;
    const char *line = strstr(text, key);
    EXPECT(line == NULL || strtol(line + sizeof key - 1, NULL, 10) == 1);
    free(text);
}

/* The blob reopened after its close: a synced one is there with its
 * bytes (STOR-006), whatever allocation its first open was refused; or a
 * call said it found no memory. */
static void reopened_whole(cw_ctx *ctx, const blob_state *st)
{
    if (!st->synced)
        return;
    uint64_t size = 0;
    cw_blob *b = open_swept(ctx, "log", &size);
    if (!b)
        return;
    EXPECT(size >= sizeof durable);
    char back[sizeof durable] = {0};
    int rc = cw_blob_read_into(b, 0, back, sizeof back, 0, NULL);
    EXPECT(cwc_ok_or_nomem(rc) && (rc != CW_OK || memcmp(back, durable, sizeof back) == 0));
    cw_blob_close(b);
}

/* Whether `rc` is CW_OK, checked to be that or no memory. */
static bool done(int rc)
{
    EXPECT(cwc_ok_or_nomem(rc));
    return rc == CW_OK;
}

/* Blob "two" through two opens: the first makes sixteen changes, resizes
 * it, writes, writes synced over part of that (a change to cut) and syncs;
 * then the second, opened before that sync, writes "zz" and syncs. Once
 * the second's sync said CW_OK a fresh open reads "zz" there (STOR-015),
 * or a call said it found no memory. */
static void two_opens(cw_ctx *ctx)
{
    uint64_t size = 0;
    cw_blob *w = open_swept(ctx, "two", &size), *o = w ? open_swept(ctx, "two", &size) : NULL;
    if (w) {
        for (uint64_t i = 0; i < 16; i++) /* sixteen changes, then a resize */
            done(cw_blob_write_at(w, i, "j", 1, 0, NULL));
        done(cw_blob_resize(w, 8, NULL));
        done(cw_blob_write_at(w, 0, "abcd", 4, 0, NULL));
        done(cw_blob_write_at(w, 2, "XY", 2, CW_WRITE_SYNC, NULL));
        done(cw_blob_sync(w, NULL));
    }
    bool mine = o && done(cw_blob_write_at(o, 0, "zz", 2, 0, NULL)) && done(cw_blob_sync(o, NULL));
    if (o)
        cw_blob_close(o);
    if (w)
        cw_blob_close(w);
    cw_blob *fresh = mine ? open_swept(ctx, "two", &size) : NULL;
    if (!fresh)
        return;
    char back[2] = {0};
    int rc = cw_blob_read_into(fresh, 0, back, 2, 0, NULL);
    EXPECT(cwc_ok_or_nomem(rc) && (rc != CW_OK || memcmp(back, "zz", 2) == 0));
    cw_blob_close(fresh);
}

/* Written bytes read back, also after a reopen (STOR-006); a synced blob is
 * listed; each write not refused recorded its event (STOR-029). */
static void *storage_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    writes_logged = 0;
    ring_had_when_asked(ctx);
    if (!faults_set_and_cleared(ctx))
        return ctx; /* every open may still fail */
    int rc;
    blob_state st = {false, false};
    cw_blob *b = write_synced(ctx, &st);
    if (!b)
        return ctx;
    char back[sizeof durable] = {0};
    cw_storage_error err;
    if (st.written) {
        rc = cw_blob_read_into(b, 0, back, sizeof back, 0, &err);
        EXPECT(cwc_ok_or_nomem(rc) && (rc != CW_OK || memcmp(back, durable, sizeof back) == 0));
    }
    if (st.written)
        read_pooled(b);
    write_two_chunks(b, sizeof durable);
    synced_inside(b, sizeof durable + 6);
    synced_in_the_background(b);
    cw_blob_close(b);
    reopened_whole(ctx, &st);
    cw_blob_names *names = NULL;
    rc = cw_storage_scan(ctx, "sweep", &names, &err);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc == CW_OK)
        EXPECT(!st.synced || cw_blob_names_contains(names, "log", 3)), cw_blob_names_release(names);
    two_opens(ctx);
    /* One blob removed, then the partition: two ways through a backend. */
    EXPECT(cwc_ok_or_nomem(cw_storage_remove(ctx, "sweep", "log", 3, &err)));
    EXPECT(cwc_ok_or_nomem(cw_storage_remove(ctx, "sweep", NULL, 0, &err)));
    return ctx;
}

CWC_CASE(alloc_faults_storage, "storage",
         "RUN-007 RUN-008 STOR-006 STOR-008 STOR-011 STOR-015 STOR-016 STOR-029 NAT-008",
         CWC_NEEDS_STORAGE)
{
    const cwc_workload w = {storage_root, NULL, run_logging_events};
    cwc_sweep_workload(&w);
}

/* ---- The network ---------------------------------------------------------------------------- */

static void close_halves(cw_sink *sink, cw_stream *stream)
{
    cw_sink_close(sink);
    cw_stream_close(stream);
}

/* A call that makes two halves gave both with CW_OK, or neither with no
 * memory; true when there are halves to use (not so after a failed check). */
static bool made_halves(int rc, cw_sink *sink, cw_stream *stream)
{
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (sink != NULL) &&
           (rc == CW_OK) == (stream != NULL));
    return rc == CW_OK && sink && stream;
}

/* "ping" one way and "pong" back. */
static void ping_pong(cw_sink *sink, cw_stream *stream, cw_sink *back, cw_stream *from)
{
    cwc_sweep_exchange(sink, stream, "ping");
    cwc_sweep_exchange(back, from, "pong");
}

/* "two" and "chunks" sent as one message of two chunks, which an audited
 * send records as one field: it arrives whole, or a call said it found no
 * memory (NET-034, DET-015). */
static void exchange_two_chunks(cw_sink *sink, cw_stream *stream, cw_sink *back, cw_stream *from)
{
    (void)back, (void)from;
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf a, b;
    if (!l || cw_iobuf_static(cwc_backend, "two", 3, &a) != CW_OK ||
        cw_iobufs_append(l, &a) != CW_OK ||
        cw_iobuf_static(cwc_backend, "chunks", 6, &b) != CW_OK ||
        cw_iobufs_append(l, &b) != CW_OK) {
        cw_iobufs_release(l);
        return;
    }
    int rc = cw_sink_send(sink, l);
    cw_iobufs_release(l);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc != CW_OK)
        return;
    if (cwc_backend->capabilities & CW_CAP_AUDIT) /* its event holds all its bytes */
        EXPECT(last_send_len == 9 && memcmp(last_send, "twochunks", 9) == 0);
    cw_iobufs *got = NULL;
    rc = cw_stream_recv(stream, 9, &got);
    EXPECT(cwc_ok_or_nomem(rc) && (rc != CW_OK || cw_iobufs_equal_bytes(got, "twochunks", 9)));
    cw_iobufs_release(got);
}

/* A connection to `l`, dialed and accepted, and `talk` over it: the
 * dialer's sink to the accepted stream, the accepted sink back. A dial
 * refused for memory made no connection and counts nothing, wherever in
 * it the memory ran out: after the kernel made the connection, when its
 * halves cannot be had, included; a dial made counts one (NET-025), and a
 * counter the output shows is never wrong for want of memory (MET-019). */
static void connect_to(cw_ctx *ctx, cw_listener *l,
                       void (*talk)(cw_sink *, cw_stream *, cw_sink *, cw_stream *))
{
    cw_addr at;
    EXPECT(cw_listener_local_addr(l, &at) == CW_OK);
    cw_sink *sink = NULL;
    cw_stream *stream = NULL;
    long before = cwc_series_value(ctx, "runtime_outbound_connections_total");
    int rc = cw_dial(ctx, &at, &sink, &stream);
    long after = cwc_series_value(ctx, "runtime_outbound_connections_total");
    EXPECT(before < 0 || after < 0 || after == before + (rc == CW_OK)); /* and MET-019 */
    if (!made_halves(rc, sink, stream))
        return;
    cw_conn c;
    memset(&c, 0x5a, sizeof c); /* an accept that fails must still clear its halves [NET-005] */
    rc = cw_listener_accept(l, &c);
    if (made_halves(rc, c.sink, c.stream)) {
        talk(sink, c.stream, c.sink, stream);
        close_halves(c.sink, c.stream);
    }
    close_halves(sink, stream);
}

/* A name call that returned `rc` recorded its event, `before` the count
 * of them ahead of it (11-deterministic.md: each cw_resolve and
 * cw_resolver_register); one refused for want of memory may or may not
 * have. */
static void name_logged(int rc, uint64_t before)
{
    if (!(cwc_backend->capabilities & CW_CAP_AUDIT) || rc == CW_ERR_NOMEM ||
        rc == CW_ERR_UNSUPPORTED)
        return;
    EXPECT(names_logged == before + 1);
}

static int register_name(cw_ctx *ctx, const char *host, const cw_addr *addrs, size_t n)
{
    uint64_t before = names_logged;
    int rc = cw_resolver_register(ctx, host, addrs, n);
    name_logged(rc, before);
    return rc;
}

/* How many addresses `host` resolves to now: 0 when unknown, -1 when the
 * resolution found no memory (which tells nothing). */
static int resolves_to(cw_ctx *ctx, const char *host)
{
    cw_addr out[4];
    size_t n = 0;
    uint64_t before = names_logged;
    int rc = cw_resolve(ctx, host, out, 4, &n, NULL);
    name_logged(rc, before);
    EXPECT(rc == CW_OK || rc == CW_ERR_RESOLVE_FAILED || rc == CW_ERR_NOMEM);
    EXPECT(rc == CW_OK || n == 0);
    return rc == CW_OK ? (int)n : rc == CW_ERR_RESOLVE_FAILED ? 0 : -1;
}

/* The removal of `host`, known to resolve to `had` addresses (0 for an
 * unknown name): done, or refused for want of memory with the table as it
 * was [NET-021, NET-034]. A removal is swept first thing, before any
 * registration, so that its own allocations are the ones refused. */
static void remove_name(cw_ctx *ctx, const char *host, int had)
{
    cw_addr none = cw_addr_loopback4(0);
    int rc = register_name(ctx, host, &none, 0);
    EXPECT(cwc_ok_or_nomem(rc));
    int now = resolves_to(ctx, host);
    EXPECT(now < 0 || now == (rc == CW_OK ? 0 : had));
}

/* Names and a mock channel: each works, or says it found no memory. */
static void network_extras(cw_ctx *ctx)
{
    cw_addr lo = cw_addr_loopback4(0), out[4];
    size_t n = 0;
    int reg = register_name(ctx, "sweep.gone", &lo, 0);
    EXPECT(cwc_ok_or_nomem(reg) || reg == CW_ERR_UNSUPPORTED);
    if (reg != CW_ERR_UNSUPPORTED)
        EXPECT(resolves_to(ctx, "sweep.gone") <= 0); /* unknown, or no memory to tell */
    reg = register_name(ctx, "sweep.test", &lo, 1);
    EXPECT(cwc_ok_or_nomem(reg) || reg == CW_ERR_UNSUPPORTED);
    if (reg == CW_OK) {
        int rc = cw_resolve(ctx, "sweep.test", out, 4, &n, NULL);
        EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK ? n == 1 : n == 0));
        remove_name(ctx, "sweep.test", 1);
    } else {
        /* The system's resolver, which may also say it failed when its
         * own allocations are refused. */
        int rc = cw_resolve(ctx, "127.0.0.1", out, 4, &n, NULL);
        EXPECT((cwc_ok_or_nomem(rc) || rc == CW_ERR_RESOLVE_FAILED) &&
               (rc == CW_OK ? n == 1 && cw_addr_equal(&out[0], &lo) : n == 0));
    }
    cw_sink *sink = NULL;
    cw_stream *stream = NULL;
    int rc = cw_mock_channel(ctx, &sink, &stream);
    if (made_halves(rc, sink, stream)) {
        cwc_sweep_exchange(sink, stream, "mock");
        close_halves(sink, stream);
    }
}

/* A dial before any other network call, to where nothing listens: the
 * first call that needs the network's state (NET-006). */
static void dial_first(cw_ctx *ctx)
{
    cw_addr nowhere = cw_addr_loopback4(1);
    cw_sink *sink = NULL;
    cw_stream *stream = NULL;
    int rc = cw_dial(ctx, &nowhere, &sink, &stream);
    EXPECT((rc == CW_ERR_CONNECTION_FAILED || rc == CW_ERR_NOMEM) && !sink && !stream);
}

static void *network_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    dial_first(ctx);
    cw_listener *l = NULL;
    cw_addr lo = cw_addr_loopback4(0);
    int rc = cw_bind(ctx, &lo, &l);
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (l != NULL));
    if (rc == CW_OK && l) { /* a backend that said CW_OK with no listener failed above */
        connect_to(ctx, l, ping_pong);
        cw_listener_close(l);
    }
    /* A listener of its own: over TCP a dial refused for memory above may
     * have left the kernel's connection for an accept (NET-034). */
    l = NULL;
    rc = cw_bind(ctx, &lo, &l);
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (l != NULL));
    if (rc == CW_OK && l) {
        connect_to(ctx, l, exchange_two_chunks);
        cw_listener_close(l);
    }
    network_extras(ctx);
    return ctx;
}

CWC_CASE(alloc_faults_network, "network", "RUN-007 RUN-008 NET-005 NET-021 NET-025 NET-034 DET-015",
         CWC_NEEDS_NETWORK)
{
    static const cwc_workload w = {network_root, NULL, run_logging_events};
    cwc_sweep_workload(&w);
}
