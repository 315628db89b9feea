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
 * good). A place refused once is refused again in the runs that follow in
 * the same process, which must not hold more memory after each
 * (refused_run_after_run, RUN-008): a leak on the path of a refusal. Each such run must end with
 * its checks passed and cw_start returning CW_OK or CW_ERR_NOMEM: no crash, no abort, no hang, no
 * call answering with another error. A backend that ends the process on exhausted memory, or
 * reports success for what it could not do and then trips over it, fails here.
 *
 * The places are the backend's and libc's alike: a thread libc could not
 * start for want of memory is exhausted memory too. Where the suite's
 * allocator is not the process's (a sanitizer build, valgrind), each
 * workload runs once, unrefused.
 */
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases/util.h"
#include "harness/allocator.h"

/* Places a workload is swept at, at most (chosen evenly among them), and
 * every how many of those the rest of the run gets no memory either. */
enum { SWEEP_PLACES = 256, SWEEP_FOR_GOOD_EVERY = 4, RUN_SECONDS = 10 };
/* Runs after the first in which a place refused once is refused again
 * (RUN-008 after a refusal: refused_run_after_run). */
enum { REPEATED_RUNS = 3 };

/* CWC_ALLOC_PLACES=N sweeps at most N places instead (at least 1): for
 * the project's own repeated certifications of backends already swept in
 * full, where the sweep would be most of their time. The report does not
 * say that a sweep was cut short, so a certificate meant for others must
 * come from a run without it. */
static size_t sweep_places(void)
{
    const char *e = getenv("CWC_ALLOC_PLACES");
    long n = e ? strtol(e, NULL, 10) : SWEEP_PLACES;
    return n < 1 ? 1 : n > SWEEP_PLACES ? SWEEP_PLACES : (size_t)n;
}

/* Memory shared with the run's child process. */
typedef struct sweep_shared {
    cwc_places places;
    char wrong[256]; /* the first check a run failed, or "" */
    int ran;         /* the root began */
} sweep_shared;

static sweep_shared *shared;

/* ---- Checks inside a run ----------------------------------------------------------- */

#define EXPECT(cond) expect((cond), #cond, __LINE__)

static void expect(bool ok, const char *what, int line)
{
    if (!ok && !shared->wrong[0])
        snprintf(shared->wrong, sizeof shared->wrong, "alloc_faults.c:%d: %s", line, what);
}

static bool ok_or_nomem(int rc)
{
    return rc == CW_OK || rc == CW_ERR_NOMEM;
}

/* ---- One run ------------------------------------------------------------------------- */

/* Set by a workload that runs with a checkpoint (DET-008). */
static bool checkpointed;

/* The run of `root` with a checkpoint: once the run started (its root
 * began), a checkpoint is handed back whatever the memory, so a backend
 * that cannot have it must refuse the run before it starts [DET-008]. */
static void run_checkpointed(cw_task_fn root)
{
    cw_config cfg = cwc_config();
    cw_run_result res;
    memset(&res, 0, sizeof res);
    cw_checkpoint *cp = (cw_checkpoint *)&res; /* must be overwritten */
    int rc = cw_start_checkpoint(cwc_backend, &cfg, root, NULL, &res, &cp);
    EXPECT(rc == res.status);
    EXPECT(ok_or_nomem(rc));
    EXPECT(cp != (cw_checkpoint *)&res);
    EXPECT(!shared->ran || cp != NULL);
    EXPECT(cp != NULL || rc == CW_ERR_NOMEM);
    if (cp && cp != (cw_checkpoint *)&res)
        cw_checkpoint_free(cp);
}

/* The run of `root`, checked as RUN-007 says. */
static void run_checked(cw_task_fn root)
{
    if (checkpointed) {
        run_checkpointed(root);
        return;
    }
    cw_config cfg = cwc_config();
    cw_run_result res;
    memset(&res, 0, sizeof res);
    int rc = cwc_run(&cfg, root, NULL, &res);
    EXPECT(rc == res.status);
    EXPECT(ok_or_nomem(rc));
    EXPECT(rc != CW_ERR_NOMEM || res.message[0] != '\0');
}

typedef enum refusal { REFUSE_NONE, REFUSE_ONCE, REFUSE_FOR_GOOD } refusal;

/* A place refused once: the run, then RUN-008 where an allocation was
 * refused: what the run did not do must not leave memory behind. The
 * same allocation is refused in the runs that follow in the same process,
 * and the memory held may not rise after each of the REPEATED_RUNS after
 * the first (which lets the backend fill what it keeps on that path): a
 * count that falls or stays once ends the check, so a cache that fills is
 * no failure. The first run is made in a process that ran nothing, so an
 * allocation made once per process is refused too. */
static void refused_run_after_run(cw_task_fn root, uint64_t place)
{
    long long first = 0, last = 0;
    for (int i = 0; i <= REPEATED_RUNS && !shared->wrong[0]; i++) {
        cwc_allocator_refuse(&shared->places, place, false);
        shared->ran = 0; /* each run's root begins anew */
        run_checked(root);
        cwc_allocator_off();
        long long now = cwc_heap_live();
        if (i > 0 && now <= last)
            return;
        first = i == 0 ? now : first;
        last = now;
    }
    if (!shared->wrong[0])
        snprintf(shared->wrong, sizeof shared->wrong,
                 "RUN-008: the memory held grew after each of %d runs with this allocation "
                 "refused, by %lld bytes a run: what the refusal left undone was not given back",
                 REPEATED_RUNS, (last - first) / REPEATED_RUNS);
}

/* One run of `root` in a child process; its wait status. The child exits
 * 0 when every check passed and 3 when one failed (shared->wrong). */
static int run_child(cw_task_fn root, refusal how, uint64_t place)
{
    shared->wrong[0] = '\0';
    shared->ran = 0;
    fflush(NULL); /* or the child's buffered output is written twice */
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork failed");
    if (pid == 0) {
        alarm(RUN_SECONDS);
        if (how == REFUSE_ONCE) {
            refused_run_after_run(root, place);
            _exit(shared->wrong[0] ? 3 : 0);
        }
        if (how == REFUSE_NONE)
            cwc_allocator_record(&shared->places);
        else
            cwc_allocator_refuse(&shared->places, place, how == REFUSE_FOR_GOOD);
        run_checked(root);
        cwc_allocator_off();
        _exit(shared->wrong[0] ? 3 : 0);
    }
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    ck_assert_msg(got == pid, "waitpid: %s", strerror(errno));
    return status;
}

/* What went wrong in a run that ended with `status`, or NULL. */
static const char *run_fault(int status, char *buf, size_t len)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return NULL;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        snprintf(buf, len, "it hung (no end within %d s)", RUN_SECONDS);
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "the process died of signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WEXITSTATUS(status) == 3)
        snprintf(buf, len, "a check failed: %s", shared->wrong);
    else
        snprintf(buf, len, "the process exited with status %d", WEXITSTATUS(status));
    return buf;
}

/* ---- The sweep -------------------------------------------------------------------------- */

/* Place `i` of the recorded run, as "fn+off <- fn+off <- ..." */
static void describe_place(size_t i, char *buf, size_t len)
{
    char **names = backtrace_symbols(shared->places.frames[i], CWC_PLACE_FRAMES);
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; names && k < CWC_PLACE_FRAMES && used < len; k++)
        if (shared->places.frames[i][k])
            used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? " <- " : "", names[k]);
    free(names);
}

static void fail_at_place(size_t i, refusal how, const char *fault)
{
    char where[1024];
    describe_place(i, where, sizeof where);
    ck_abort_msg("with the allocation at [%s] refused%s: %s [RUN-007]", where,
                 how == REFUSE_FOR_GOOD ? " and every one after it" : "", fault);
}

static void sweep_place(cw_task_fn root, size_t i, refusal how)
{
    char fault[512];
    const char *f = run_fault(run_child(root, how, shared->places.id[i]), fault, sizeof fault);
    if (f)
        fail_at_place(i, how, f);
}

static void sweep(cw_task_fn root)
{
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert(shared != MAP_FAILED);
    char fault[512];
    const char *f = run_fault(run_child(root, REFUSE_NONE, 0), fault, sizeof fault);
    ck_assert_msg(!f, "with every allocation allowed: %s", f);
    if (!cwc_allocator_live())
        return; /* nothing was recorded: the runs would refuse nothing */
    /* A backend with an allocator of its own may allocate nothing here:
     * then there is nothing to refuse. */
    size_t n = shared->places.n;
    size_t most = sweep_places(), runs = n < most ? n : most;
    for (size_t r = 0; r < runs; r++) {
        size_t i = r * n / runs;
        sweep_place(root, i, REFUSE_ONCE);
        if (r % SWEEP_FOR_GOOD_EVERY == 0)
            sweep_place(root, i, REFUSE_FOR_GOOD);
    }
    munmap(shared, sizeof *shared);
}

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
    EXPECT(ok_or_nomem(cw_sleep(ctx, 3 * CW_MSEC)));
    for (int i = 0; i < 3; i++)
        join_aborted(kept[i]);
    join_returned(cw_spawn(cw_child(ctx, "last"), returns_arg, ctx), ctx);
    return ctx;
}

CWC_CASE(alloc_faults_empty_run, "runner", "RUN-006 RUN-007 RUN-008", 0)
{
    sweep(returns_arg);
}

CWC_CASE(alloc_faults_spawn_tree, "tasks", "RUN-007 RUN-008 TASK-011 CTX-006", 0)
{
    sweep(tree_root);
}

/* A run that begins, sleeps and spawns, under a checkpoint. */
static void *checkpointed_root(cw_ctx *ctx, void *arg)
{
    shared->ran = 1;
    return tree_root(ctx, arg);
}

CWC_CASE(alloc_faults_checkpoint, "recover", "DET-008 RUN-007 RUN-008",
         CW_CAP_DETERMINISTIC | CW_CAP_RECOVER)
{
    checkpointed = true;
    sweep(checkpointed_root);
    checkpointed = false;
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
    sweep(chan_root);
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
    EXPECT(ok_or_nomem(cw_sleep(ctx, CW_MSEC)));
    int rc = cw_stop(ctx, 7, CW_SEC);
    EXPECT(ok_or_nomem(rc) || rc == CW_ERR_TIMEOUT);
    join_returned(h, NULL);
    return ctx;
}

CWC_CASE(alloc_faults_stop, "signals", "RUN-007 RUN-008 SIG-007", 0)
{
    sweep(stop_root);
}

/* ---- Metrics ---------------------------------------------------------------------------- */

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
    char *text = cw_metrics_encode(ctx);
    EXPECT(!text || strcmp(text + strlen(text) - 6, "# EOF\n") == 0);
    EXPECT(!text || !live || strstr(text, "latency_count") != NULL);
    free(text);
    cw_metric_release(h);
    cw_metric_release(f);
    cw_metric_release(m);
    cw_ctx_release(c);
    return ctx;
}

CWC_CASE(alloc_faults_metrics, "metrics", "RUN-007 RUN-008 MET-019", CWC_NEEDS_METRICS)
{
    sweep(metrics_root);
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
    EXPECT(ok_or_nomem(rc));
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
    EXPECT(ok_or_nomem(rc));
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
    EXPECT(ok_or_nomem(rc));
    if (rc == CW_OK) {
        static const uint8_t zeros[3000];
        EXPECT(cw_iobuf_mut_equal_bytes(&z, zeros, sizeof zeros));
        cw_iobuf_mut_release(&z);
    }
    cw_iobuf c;
    rc = cw_iobuf_copy(cwc_backend, "copied", 6, &c);
    EXPECT(ok_or_nomem(rc));
    if (rc == CW_OK)
        EXPECT(cw_iobuf_equal_bytes(&c, "copied", 6)), cw_iobuf_release(&c);
}

/* A buffer at a page boundary: given, or refused (BUF-002). */
static void aligned_once(void)
{
    cw_iobuf_mut m;
    int rc = cw_iobuf_mut_with_alignment(cwc_backend, 5000, 4096, &m);
    EXPECT(ok_or_nomem(rc));
    if (rc != CW_OK)
        return;
    EXPECT(((uintptr_t)m.data & 4095) == 0 && cw_iobuf_mut_capacity(&m) >= 5000);
    cw_iobuf_mut_release(&m);
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
    EXPECT(ok_or_nomem(rc) && (rc == CW_OK) == (pool != NULL));
    static const size_t sizes[] = {1, 64, 4096, 65536, 70000};
    for (size_t i = 0; pool && i < sizeof sizes / sizeof *sizes; i++)
        pool_round_trip(pool, sizes[i]);
    cw_bufpool_release(pool);
    pool_round_trip(cw_network_buffer_pool(ctx), 512);
    adopt_once();
    aligned_once();
    zeroed_and_copied();
    return ctx;
}

CWC_CASE(alloc_faults_buffers, "buffers", "RUN-007 RUN-008 BUF-002 BUF-004 BUF-032",
         CWC_NEEDS_BUFFERS)
{
    sweep(buffers_root);
}

/* ---- Storage ------------------------------------------------------------------------------- */

static const char durable[] = "durable bytes";

/* What the blob "log" holds after a write and a sync. */
typedef struct blob_state {
    bool written, synced;
} blob_state;

/* The blob "log" written and synced; NULL when the open failed. */
static cw_blob *write_synced(cw_ctx *ctx, blob_state *st)
{
    cw_blob *b = NULL;
    uint64_t size = 0;
    cw_storage_error err;
    int rc = cw_storage_open(ctx, "sweep", "log", 3, &b, &size, &err);
    EXPECT(ok_or_nomem(rc) && (rc == CW_OK) == (b != NULL));
    if (!b)
        return NULL;
    rc = cw_blob_write_at(b, 0, durable, sizeof durable, 0, &err);
    EXPECT(ok_or_nomem(rc));
    st->written = rc == CW_OK;
    rc = cw_blob_sync(b, &err);
    EXPECT(ok_or_nomem(rc));
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
        EXPECT(ok_or_nomem(rc));
        if (rc != CW_OK)
            break;
        rc = cw_iobufs_append(bufs, &c);
        EXPECT(ok_or_nomem(rc));
        if (rc != CW_OK)
            cw_iobuf_release(&c);
    }
    if (rc == CW_OK) {
        rc = cw_blob_write_bufs(b, at, bufs, 0, NULL);
        EXPECT(ok_or_nomem(rc));
    }
    if (rc == CW_OK) {
        char back[6] = {0};
        rc = cw_blob_read_into(b, at, back, sizeof back, 0, NULL);
        EXPECT(ok_or_nomem(rc) && (rc != CW_OK || memcmp(back, "onetwo", 6) == 0));
    }
    cw_iobufs_release(bufs);
}

/* Faults that fail every open, then none: each setting takes effect when
 * it reports CW_OK (STOR-030). Whether the storage is fault-free after. */
static bool faults_set_and_cleared(cw_ctx *ctx)
{
    cw_storage_faults f;
    memset(&f, 0, sizeof f);
    f.open = CW_RATE_ALWAYS;
    int rc = cw_storage_set_faults(ctx, &f);
    EXPECT(ok_or_nomem(rc) || rc == CW_ERR_UNSUPPORTED);
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
    EXPECT(ok_or_nomem(rc));
    return rc == CW_OK;
}

/* Written bytes read back (STOR-006); a synced blob is listed. */
static void *storage_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
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
        EXPECT(ok_or_nomem(rc) && (rc != CW_OK || memcmp(back, durable, sizeof back) == 0));
    }
    write_two_chunks(b, sizeof durable);
    cw_blob_close(b);
    cw_blob_names *names = NULL;
    rc = cw_storage_scan(ctx, "sweep", &names, &err);
    EXPECT(ok_or_nomem(rc));
    if (rc == CW_OK)
        EXPECT(!st.synced || cw_blob_names_contains(names, "log", 3)), cw_blob_names_release(names);
    EXPECT(ok_or_nomem(cw_storage_remove(ctx, "sweep", NULL, 0, &err)));
    return ctx;
}

CWC_CASE(alloc_faults_storage, "storage", "RUN-007 RUN-008 STOR-006 STOR-008", CWC_NEEDS_STORAGE)
{
    sweep(storage_root);
}

/* ---- The network ---------------------------------------------------------------------------- */

/* `text` from `sink` to `stream`: it arrives whole, or a call said it
 * found no memory (NET-034). */
static void exchange(cw_sink *sink, cw_stream *stream, const char *text)
{
    size_t len = strlen(text);
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf buf;
    if (!l || cw_iobuf_static(cwc_backend, text, len, &buf) != CW_OK ||
        cw_iobufs_append(l, &buf) != CW_OK) {
        cw_iobufs_release(l);
        return;
    }
    int rc = cw_sink_send(sink, l);
    cw_iobufs_release(l);
    EXPECT(ok_or_nomem(rc));
    if (rc != CW_OK)
        return;
    cw_iobufs *got = NULL;
    rc = cw_stream_recv(stream, len, &got);
    EXPECT(ok_or_nomem(rc) && (rc != CW_OK || cw_iobufs_equal_bytes(got, text, len)));
    cw_iobufs_release(got);
}

static void close_halves(cw_sink *sink, cw_stream *stream)
{
    cw_sink_close(sink);
    cw_stream_close(stream);
}

/* A call that makes two halves gave both with CW_OK, or neither with no
 * memory; true when there are halves to use (not so after a failed check). */
static bool made_halves(int rc, cw_sink *sink, cw_stream *stream)
{
    EXPECT(ok_or_nomem(rc) && (rc == CW_OK) == (sink != NULL) && (rc == CW_OK) == (stream != NULL));
    return rc == CW_OK && sink && stream;
}

/* A dial to `l` and its accept, and a message each way. */
static void connect_to(cw_ctx *ctx, cw_listener *l)
{
    cw_addr at;
    EXPECT(cw_listener_local_addr(l, &at) == CW_OK);
    cw_sink *sink = NULL;
    cw_stream *stream = NULL;
    int rc = cw_dial(ctx, &at, &sink, &stream);
    if (!made_halves(rc, sink, stream))
        return;
    cw_conn c;
    memset(&c, 0x5a, sizeof c); /* an accept that fails must still clear its halves [NET-005] */
    rc = cw_listener_accept(l, &c);
    if (made_halves(rc, c.sink, c.stream)) {
        exchange(sink, c.stream, "ping");
        exchange(c.sink, stream, "pong");
        close_halves(c.sink, c.stream);
    }
    close_halves(sink, stream);
}

/* Names and a mock channel: each works, or says it found no memory. */
static void network_extras(cw_ctx *ctx)
{
    cw_addr lo = cw_addr_loopback4(0), out[4];
    size_t n = 0;
    int reg = cw_resolver_register(ctx, "sweep.test", &lo, 1);
    EXPECT(ok_or_nomem(reg) || reg == CW_ERR_UNSUPPORTED);
    if (reg == CW_OK) {
        int rc = cw_resolve(ctx, "sweep.test", out, 4, &n, NULL);
        EXPECT(ok_or_nomem(rc) && (rc == CW_OK ? n == 1 : n == 0));
    } else {
        /* The system's resolver, which may also say it failed when its
         * own allocations are refused. */
        int rc = cw_resolve(ctx, "127.0.0.1", out, 4, &n, NULL);
        EXPECT((ok_or_nomem(rc) || rc == CW_ERR_RESOLVE_FAILED) &&
               (rc == CW_OK ? n == 1 && cw_addr_equal(&out[0], &lo) : n == 0));
    }
    cw_sink *sink = NULL;
    cw_stream *stream = NULL;
    int rc = cw_mock_channel(ctx, &sink, &stream);
    if (made_halves(rc, sink, stream)) {
        exchange(sink, stream, "mock");
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
    EXPECT(ok_or_nomem(rc) && (rc == CW_OK) == (l != NULL));
    if (rc == CW_OK && l) { /* a backend that said CW_OK with no listener failed above */
        connect_to(ctx, l);
        cw_listener_close(l);
    }
    network_extras(ctx);
    return ctx;
}

CWC_CASE(alloc_faults_network, "network", "RUN-007 RUN-008 NET-005 NET-034", CWC_NEEDS_NETWORK)
{
    sweep(network_root);
}
