/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * alloc_faults_more.c - more workloads of the allocation sweep
 * (cases/alloc_sweep.h, RUN-007, RUN-008): the parts of the interface
 * alloc_faults.c leaves out, each checked against what its section says a
 * call must do when memory runs out. The deterministic network's
 * partitions and links, a recovered run, the metrics endpoint, parallel
 * strategies, rate limiters, and contexts of many attributes that register
 * metrics.
 */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "cases/alloc_sweep.h"

/* ---- The deterministic network: partitions over slow links ------------------------------ */

/* A dial to `at`: refused while a partition cuts it [NET-028], made
 * otherwise; either may find no memory instead [NET-034]. */
static void dial_while(cw_ctx *ctx, const cw_addr *at, bool cut)
{
    cw_sink *sink = NULL;
    cw_stream *stream = NULL;
    int rc = cw_dial(ctx, at, &sink, &stream);
    if (cut)
        EXPECT(rc == CW_ERR_CONNECTION_FAILED || rc == CW_ERR_NOMEM);
    else
        EXPECT(cwc_ok_or_nomem(rc));
    EXPECT((rc == CW_OK) == (sink != NULL) && (rc == CW_OK) == (stream != NULL));
    if (sink)
        cw_sink_close(sink);
    if (stream)
        cw_stream_close(stream);
}

/* A connection to `l` dialed and accepted; false when memory ran out. */
static bool connected(cw_ctx *ctx, cw_listener *l, const cw_addr *at, cw_conn *dialed,
                      cw_conn *accepted)
{
    int rc = cw_dial(ctx, at, &dialed->sink, &dialed->stream);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc != CW_OK)
        return false;
    rc = cw_listener_accept(l, accepted);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc == CW_OK)
        return true;
    cw_sink_close(dialed->sink);
    cw_stream_close(dialed->stream);
    return false;
}

static void hang_up(cw_conn *c)
{
    cw_sink_close(c->sink);
    cw_stream_close(c->stream);
}

/* A cut between every address and the listener's, and one between two
 * other addresses: each made, or the partitions as they were [NET-034];
 * then repaired, or not. Dials and bytes tell which partitions stand. */
static void cut_and_repair(cw_ctx *ctx, cw_listener *l, const cw_addr *at)
{
    cw_conn dialed, accepted;
    bool up = connected(ctx, l, at, &dialed, &accepted);
    cw_addr any = cw_addr_ipv4(0, 0, 0, 0, 0);
    cw_addr a = cw_addr_loopback4(7001), b = cw_addr_loopback4(7002);
    int cut = cw_network_partition(ctx, &any, at);
    EXPECT(cwc_ok_or_nomem(cut));
    EXPECT(cwc_ok_or_nomem(cw_network_partition(ctx, &a, &b)));
    dial_while(ctx, at, cut == CW_OK);
    int repair = cw_network_repair(ctx, at, &any);
    EXPECT(cwc_ok_or_nomem(repair));
    bool stands = cut == CW_OK && repair != CW_OK;
    dial_while(ctx, at, stands);
    if (up && !stands) { /* bytes a standing cut holds would stall the run */
        cwc_sweep_exchange(dialed.sink, accepted.stream, "ping");
        cwc_sweep_exchange(accepted.sink, dialed.stream, "pong");
    }
    if (up) {
        hang_up(&dialed);
        hang_up(&accepted);
    }
}

static void *partition_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_listener *l = NULL;
    cw_addr lo = cw_addr_loopback4(0), at;
    int rc = cw_bind(ctx, &lo, &l);
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (l != NULL));
    if (rc != CW_OK || !l)
        return ctx;
    EXPECT(cw_listener_local_addr(l, &at) == CW_OK);
    cut_and_repair(ctx, l, &at);
    cw_listener_close(l);
    return ctx;
}

/* Links with a latency and a jitter: the bytes of each send arrive later
 * on the virtual clock, in order [NET-027]. */
static void run_slow_links(cw_task_fn root, void *prepared)
{
    (void)prepared;
    cw_config cfg = cwc_config();
    cfg.network_latency = 2 * CW_MSEC;
    cfg.network_jitter = CW_MSEC;
    cwc_sweep_run_config(&cfg, root);
}

CWC_CASE(alloc_faults_partitions, "network", "RUN-007 RUN-008 NET-027 NET-028 NET-034",
         CWC_NEEDS_NETWORK | CW_CAP_DETERMINISTIC)
{
    cwc_workload w = {partition_root, NULL, run_slow_links};
    cwc_sweep_workload(&w);
}

/* ---- A recovered run ------------------------------------------------------------------------ */

static const char kept[] = "kept across the crash";

/* The run before the crash: a blob written and synced. */
static void *writes_durable(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = NULL;
    uint64_t size = 0;
    EXPECT(cw_storage_open(ctx, "sweep", "kept", 4, &b, &size, NULL) == CW_OK);
    if (!b)
        return NULL;
    EXPECT(cw_blob_write_at(b, 0, kept, sizeof kept, 0, NULL) == CW_OK);
    EXPECT(cw_blob_sync(b, NULL) == CW_OK);
    cw_blob_close(b);
    return NULL;
}

/* Made before anything is refused: the checkpoint a recovery consumes. */
static void *checkpoint_to_recover(void)
{
    cw_config cfg = cwc_config();
    cw_run_result res;
    cw_checkpoint *cp = NULL;
    int rc = cw_start_checkpoint(cwc_backend, &cfg, writes_durable, NULL, &res, &cp);
    EXPECT(rc == CW_OK && cp != NULL);
    return cp;
}

/* The recovered run reads what was durable, or finds no memory
 * [DET-009]; it spawns and sleeps as any run. */
static void *recovered_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cwc_sweep_root_began();
    cw_blob *b = NULL;
    uint64_t size = 0;
    int rc = cw_storage_open(ctx, "sweep", "kept", 4, &b, &size, NULL);
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (b != NULL));
    if (b) {
        char back[sizeof kept] = {0};
        EXPECT(size == sizeof kept);
        rc = cw_blob_read_into(b, 0, back, sizeof back, 0, NULL);
        EXPECT(cwc_ok_or_nomem(rc) && (rc != CW_OK || memcmp(back, kept, sizeof kept) == 0));
        cw_blob_close(b);
    }
    EXPECT(cwc_ok_or_nomem(cw_sleep(ctx, CW_MSEC)));
    cw_handle *h = cw_spawn(cw_child(ctx, "after"), cwc_return_42, NULL);
    if (h) {
        void *v = NULL;
        rc = cw_join(h, &v);
        EXPECT(rc == CW_ERR_NOMEM || (rc == CW_OK && v == (void *)(intptr_t)42));
        cw_handle_release(h);
    }
    return ctx;
}

/* cw_recover consumes the checkpoint whatever the outcome, and hands back
 * the next one as cw_start_checkpoint does [DET-008, DET-011]: a recovery
 * refused for want of memory must still free what it was given. */
static void run_recovered(cw_task_fn root, void *prepared)
{
    cw_checkpoint *cp = prepared;
    if (!cp)
        return; /* the check in checkpoint_to_recover failed */
    cw_run_result res;
    memset(&res, 0, sizeof res);
    cw_checkpoint *next = (cw_checkpoint *)&res; /* must be overwritten */
    int rc = cw_recover(cp, root, NULL, &res, &next);
    cwc_sweep_check_checkpoint(rc, &res, next);
}

CWC_CASE(alloc_faults_recover, "recover", "RUN-007 RUN-008 DET-008 DET-009 DET-011",
         CW_CAP_DETERMINISTIC | CW_CAP_RECOVER | CWC_NEEDS_STORAGE)
{
    cwc_workload w = {recovered_root, checkpoint_to_recover, run_recovered};
    cwc_sweep_workload(&w);
}

/* ---- The metrics endpoint ------------------------------------------------------------------- */

/* The answer to one request, read until the endpoint closed (it always
 * does, Connection: close); static, so that reading it allocates nothing. */
static char answer[1 << 16];

/* A socket connected to the numeric "a.b.c.d:port", or -1. */
static int connect_numeric(const char *address)
{
    char host[32];
    const char *colon = strrchr(address, ':');
    if (!colon || (size_t)(colon - address) >= sizeof host)
        return -1;
    snprintf(host, sizeof host, "%.*s", (int)(colon - address), address);
    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)atoi(colon + 1));
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        return -1;
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        close(fd);
        fd = -1;
    }
    return fd;
}

/* GET /metrics; the answer's length, or 0 when none came. */
static size_t get_metrics(const char *address)
{
    static const char req[] = "GET /metrics HTTP/1.1\r\nHost: sweep\r\n\r\n";
    int fd = connect_numeric(address);
    EXPECT(fd >= 0);
    if (fd < 0)
        return 0;
    size_t used = 0;
    if (send(fd, req, sizeof req - 1, MSG_NOSIGNAL) == (ssize_t)(sizeof req - 1))
        for (ssize_t n; used < sizeof answer - 1 &&
                        (n = recv(fd, answer + used, sizeof answer - 1 - used, 0)) > 0;)
            used += (size_t)n;
    answer[used] = '\0';
    close(fd);
    return used;
}

/* The whole text, which holds the counter unless it is spent; or 503
 * when the text could not be made [MET-017, MET-019]. */
static void answer_is_whole(size_t len, bool counted)
{
    const char *body = strstr(answer, "\r\n\r\n");
    EXPECT(body != NULL);
    if (!body)
        return;
    body += 4;
    char length[64];
    snprintf(length, sizeof length, "\r\nContent-Length: %zu\r\n", len - (size_t)(body - answer));
    EXPECT(strstr(answer, length) != NULL);
    if (strncmp(answer, "HTTP/1.1 503 ", 13) == 0)
        return;
    EXPECT(strncmp(answer, "HTTP/1.1 200 OK\r\n", 17) == 0);
    size_t n = strlen(body);
    EXPECT(n >= 6 && strcmp(body + n - 6, "# EOF\n") == 0);
    EXPECT(!counted || strstr(body, "\nsweep_scrapes_total 2\n") != NULL);
}

static void *endpoint_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char address[64];
    EXPECT(cw_metrics_endpoint(ctx, address, sizeof address) == CW_OK);
    cw_metric *m = cw_counter(ctx, "sweep_scrapes", "scrapes made");
    EXPECT(m != NULL);
    if (!m)
        return ctx;
    cw_counter_add(m, 2);
    bool counted = cw_counter_get(m) == 2; /* or it is spent */
    EXPECT(counted || cw_counter_get(m) == 0);
    size_t len = get_metrics(address);
    EXPECT(len > 0);
    if (len)
        answer_is_whole(len, counted);
    cw_metric_release(m);
    return ctx;
}

static void run_with_endpoint(cw_task_fn root, void *prepared)
{
    (void)prepared;
    cw_config cfg = cwc_config();
    cfg.metrics_address = "127.0.0.1:0";
    cwc_sweep_run_config(&cfg, root);
}

CWC_CASE(alloc_faults_metrics_endpoint, "metrics", "RUN-007 RUN-008 MET-017 MET-019",
         CW_CAP_PARALLEL | CWC_NEEDS_METRICS)
{
    cwc_workload w = {endpoint_root, NULL, run_with_endpoint};
    cwc_sweep_workload(&w);
}

/* ---- Parallel strategies -------------------------------------------------------------------- */

enum { ITEMS = 200 };

/* How many times a function of a strategy's call ran. */
static atomic_int calls;

static void square(void *out, size_t i, void *arg)
{
    (void)arg;
    atomic_fetch_add(&calls, 1);
    *(uint64_t *)out = (uint64_t)i * i;
}

static void sum_zero(void *acc, void *arg)
{
    (void)arg;
    atomic_fetch_add(&calls, 1);
    *(uint64_t *)acc = 0;
}

static void sum_range(void *acc, size_t begin, size_t end, void *arg)
{
    (void)arg;
    atomic_fetch_add(&calls, 1);
    for (size_t i = begin; i < end; i++)
        *(uint64_t *)acc += i;
}

static void sum_merge(void *acc, void *other, void *arg)
{
    (void)arg;
    atomic_fetch_add(&calls, 1);
    *(uint64_t *)acc += *(uint64_t *)other;
}

/* A map: every result in its place, or CW_ERR_NOMEM having called
 * nothing and written nothing [PAR-003, PAR-011]. */
static void map_squares(cw_strategy *s, cw_ctx *ctx)
{
    static uint64_t out[ITEMS];
    memset(out, 0xee, sizeof out);
    atomic_store(&calls, 0);
    int rc = cw_strategy_map(s, ctx, 0, ITEMS, sizeof out[0], square, NULL, out);
    EXPECT(cwc_ok_or_nomem(rc));
    bool right = true;
    for (size_t i = 0; i < ITEMS; i++)
        right = right && out[i] == (rc == CW_OK ? (uint64_t)i * i : UINT64_C(0xeeeeeeeeeeeeeeee));
    EXPECT(right);
    EXPECT(rc == CW_OK || atomic_load(&calls) == 0);
}

/* A fold: the sum, or CW_ERR_NOMEM having called nothing [PAR-002, PAR-011]. */
static void fold_sum(cw_strategy *s, cw_ctx *ctx)
{
    cw_fold f = {sizeof(uint64_t), sum_zero, sum_range, sum_merge, NULL, NULL};
    uint64_t sum = 7;
    atomic_store(&calls, 0);
    int rc = cw_strategy_fold(s, ctx, 0, ITEMS, &f, &sum);
    EXPECT(cwc_ok_or_nomem(rc));
    EXPECT(rc == CW_OK ? sum == (uint64_t)ITEMS * (ITEMS - 1) / 2 : sum == 7);
    EXPECT(rc == CW_OK || atomic_load(&calls) == 0);
}

static void *job_body(cw_strategy *s, void *arg)
{
    (void)s;
    return arg;
}

/* A job: joined with its value, or refused with no job [PAR-007, PAR-011]. */
static void job_joined(cw_strategy *s, cw_ctx *ctx)
{
    cw_job *j = NULL;
    int rc = cw_strategy_spawn(s, job_body, ctx, &j);
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (j != NULL));
    if (!j)
        return;
    void *v = NULL;
    EXPECT(cw_job_join(j, ctx, &v) == CW_OK && v == ctx);
}

/* A strategy of `parallelism` threads: made, or refused with none
 * [PAR-001, PAR-011]; each of its calls then does its work or finds no memory. */
static void strategy_of(cw_ctx *ctx, size_t parallelism)
{
    cw_strategy *s = (cw_strategy *)&s; /* must be overwritten */
    int rc = cw_strategy_new(ctx, parallelism, &s);
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (s != NULL));
    if (rc != CW_OK || !s)
        return;
    map_squares(s, ctx);
    fold_sum(s, ctx);
    job_joined(s, ctx);
    cw_strategy_release(s);
}

static void *strategy_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    strategy_of(ctx, 2);
    strategy_of(ctx, 1);
    return ctx;
}

/* A strategy made and used by the root, then kept past the run: its pool
 * stops when the run ends all the same, whatever memory its making lacked
 * (a strategy handed out must be one whose pool the run's end stops), so
 * a map made after the run runs inline on the caller [PAR-008]. */
static cw_strategy *kept_strategy;
static pthread_t kept_caller;
static atomic_int kept_elsewhere;

static void *strategy_kept_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    int rc = cw_strategy_new(ctx, 2, &kept_strategy);
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (kept_strategy != NULL));
    if (kept_strategy)
        map_squares(kept_strategy, ctx);
    return ctx;
}

static void note_thread(void *out, size_t i, void *arg)
{
    (void)arg;
    if (!pthread_equal(pthread_self(), kept_caller))
        atomic_fetch_add(&kept_elsewhere, 1);
    *(uint64_t *)out = i;
}

static void run_then_release(cw_task_fn root, void *prepared)
{
    (void)prepared;
    cw_config cfg = cwc_config();
    kept_strategy = NULL;
    cwc_sweep_run_config(&cfg, root);
    if (!kept_strategy)
        return;
    uint64_t out[ITEMS];
    kept_caller = pthread_self();
    atomic_store(&kept_elsewhere, 0);
    int rc = cw_strategy_map(kept_strategy, NULL, 0, ITEMS, sizeof out[0], note_thread, NULL, out);
    EXPECT(cwc_ok_or_nomem(rc));
    EXPECT(rc != CW_OK || atomic_load(&kept_elsewhere) == 0); /* its pool stopped [PAR-008] */
    cw_strategy_release(kept_strategy);
    kept_strategy = NULL;
}

CWC_CASE(alloc_faults_strategy, "parallel",
         "RUN-007 RUN-008 PAR-001 PAR-002 PAR-003 PAR-007 PAR-008 PAR-011 TASK-014", 0)
{
    cwc_sweep(strategy_root);
    cwc_workload w = {strategy_kept_root, NULL, run_then_release};
    cwc_sweep_workload(&w);
}

/* ---- Rate limiters -------------------------------------------------------------------------- */

enum { KEYS = 150 };

/* One cell a second, no burst: a key's first check takes its cell, a
 * second at the same instant is turned away. */
static bool one_a_second(cw_quota *q)
{
    memset(q, 0, sizeof *q);
    return cw_quota_per(q, 1, CW_SEC) == CW_OK;
}

/* Key `i` checked at `now` until it is stored, then once more: a key stored
 * takes its cell and is then turned away; a key that could not be stored
 * changed nothing [RATE-004, RATE-008]. One key in eight is long (a
 * backend may keep short keys inline and long ones apart). */
static void key_checked(cw_keyed_limiter *l, int i, cw_time now)
{
    char key[48];
    int len = i % 8 == 7 ? snprintf(key, sizeof key, "a key of more than 16 bytes, %d", i)
                         : snprintf(key, sizeof key, "key-%d", i);
    size_t held = cw_keyed_limiter_len(l);
    int rc = cw_keyed_limiter_check_at(l, key, (size_t)len, now, NULL);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc == CW_ERR_NOMEM) { /* no cell taken: the next check may take it [RATE-008] */
        EXPECT(cw_keyed_limiter_len(l) <= held); /* idle keys may have gone first */
        rc = cw_keyed_limiter_check_at(l, key, (size_t)len, now, NULL);
        EXPECT(cwc_ok_or_nomem(rc));
        if (rc != CW_OK)
            return;
    }
    cw_time next = 0;
    rc = cw_keyed_limiter_check_at(l, key, (size_t)len, now, &next);
    EXPECT(rc == CW_ERR_WOULD_BLOCK && next > now);
}

/* More keys than the first limit (64), each checked 20 ms after the one
 * before, so that the first are idle when the limit is reached [RATE-005]. */
static void many_keys(const cw_quota *q)
{
    cw_keyed_limiter *l = NULL;
    int rc = cw_keyed_limiter_new(q, &l);
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (l != NULL));
    if (!l)
        return;
    for (int i = 0; i < KEYS; i++)
        key_checked(l, i, (cw_time)i * 20 * CW_MSEC);
    cw_keyed_limiter_retain_recent_at(l, (cw_time)KEYS * 20 * CW_MSEC);
    EXPECT(cw_keyed_limiter_len(l) <= 50);
    cw_keyed_limiter_free(l);
}

static void one_limiter(cw_ctx *ctx, const cw_quota *q)
{
    cw_limiter *l = NULL;
    int rc = cw_limiter_new(q, &l);
    EXPECT(cwc_ok_or_nomem(rc) && (rc == CW_OK) == (l != NULL));
    if (!l)
        return;
    cw_time now = cw_current(ctx);
    EXPECT(cw_limiter_check_at(l, now, NULL) == CW_OK);
    EXPECT(cw_limiter_check_at(l, now, NULL) == CW_ERR_WOULD_BLOCK);
    cw_limiter_free(l);
}

static void *ratelimit_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_quota q;
    EXPECT(one_a_second(&q));
    one_limiter(ctx, &q);
    many_keys(&q);
    return ctx;
}

CWC_CASE(alloc_faults_ratelimit, "ratelimit", "RUN-007 RUN-008 RATE-002 RATE-004 RATE-005 RATE-008",
         0)
{
    cwc_sweep(ratelimit_root);
}

/* ---- Contexts of many attributes that register metrics -------------------------------------- */

enum { ATTRIBUTES = 40 };

/* Each register event is the name and the help, then a key and a value
 * per attribute, or the name and the help alone when the attributes'
 * room could not be had [MET-018, MET-019]. Given on the run's thread. */
static void register_event(void *arg, const cw_event *e)
{
    (void)arg;
    if (strcmp(e->label, "register") != 0)
        return;
    EXPECT(e->nfields >= 2 && e->nfields % 2 == 0);
    EXPECT(e->nfields < 2 ||
           (e->fields[1].len == 10 && memcmp(e->fields[1].data, "the things", 10) == 0));
}

static void run_logging_registers(cw_task_fn root, void *prepared)
{
    (void)prepared;
    cw_config cfg = cwc_config();
    cfg.event_log = register_event;
    cwc_sweep_run_config(&cfg, root);
}

/* A context of ATTRIBUTES attributes: each added, or the context spent
 * with the attributes it had [CTX-006]. */
static cw_ctx *attributed(cw_ctx *ctx)
{
    cw_ctx *c = cw_child(ctx, "many");
    EXPECT(c != NULL);
    for (int i = 0; c && i < ATTRIBUTES; i++) {
        char key[16];
        snprintf(key, sizeof key, "k%02d", i);
        c = cw_with_attribute(c, key, "v");
        EXPECT(c != NULL);
    }
    return c;
}

/* A metric registered from `c`: counts, or is spent [MET-019]. */
static void registered_from(cw_ctx *c, const char *name)
{
    cw_metric *m = cw_counter(c, name, "the things");
    EXPECT(m != NULL);
    if (!m)
        return;
    cw_counter_inc(m);
    uint64_t got = cw_counter_get(m);
    EXPECT(got == 1 || got == 0);
    cw_metric_release(m);
}

/* The name of a counter released, or of one that could not be made, is
 * registered no more: a gauge takes it with no conflict [MET-002,
 * MET-004, MET-019], or is spent. */
static void name_taken_again(cw_ctx *c, const char *name)
{
    cw_metric *g = cw_gauge(c, name, "the things");
    EXPECT(g != NULL);
    if (!g)
        return;
    cw_gauge_set(g, 5);
    int64_t got = cw_gauge_get(g);
    EXPECT(got == 5 || got == 0);
    cw_metric_release(g);
}

/* Children of a family from `c`, two of them the same series. */
static void family_from(cw_ctx *c)
{
    static const char *const labels[1] = {"shard"};
    cw_metric *f = cw_family(c, "parts", "the things", CW_METRIC_GAUGE, labels, 1);
    EXPECT(f != NULL);
    if (!f)
        return;
    for (int i = 0; i < 6; i++) {
        const char *values[1] = {i % 3 == 0 ? "a" : i % 3 == 1 ? "b" : "c"};
        cw_metric *child = cw_family_get(f, values);
        EXPECT(child != NULL);
        if (child)
            cw_gauge_set(child, 1);
    }
    cw_metric_release(f);
}

/* A spawn from a context that may be spent: its value, or CW_ERR_NOMEM
 * (TASK-011); NULL when not even a spent handle could be made. */
static void join_or_nomem(cw_handle *h)
{
    if (!h)
        return;
    void *v = NULL;
    int rc = cw_join(h, &v);
    EXPECT(rc == CW_ERR_NOMEM || (rc == CW_OK && v == (void *)(intptr_t)42));
    cw_handle_release(h);
}

static void *attributes_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *c = attributed(ctx);
    if (!c)
        return ctx;
    cw_ctx *inner = cw_child(c, "inner"); /* a copy of every attribute */
    EXPECT(inner != NULL);
    if (inner) {
        registered_from(inner, "first");
        name_taken_again(inner, "first");
        family_from(inner);
        join_or_nomem(cw_spawn(inner, cwc_return_42, NULL));
    }
    registered_from(c, "second");
    char *text = cw_metrics_encode(ctx);
    EXPECT(!text || strstr(text, "# EOF\n") != NULL);
    free(text);
    cw_ctx_release(c);
    return ctx;
}

CWC_CASE(alloc_faults_attributes, "metrics",
         "RUN-007 RUN-008 CTX-006 MET-002 MET-004 MET-018 MET-019", CWC_NEEDS_METRICS)
{
    cwc_workload w = {attributes_root, NULL, run_logging_registers};
    cwc_sweep_workload(&w);
}
