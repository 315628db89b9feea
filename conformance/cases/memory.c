/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * memory.c - a backend whose memory runs out (TASK-011, CTX-006, CLK-008,
 * MET-019): the call that needed memory reports it, nothing is lost
 * quietly, and the process and the run go on.
 *
 * Memory is made to run out with the address-space limit, RLIMIT_AS, set a
 * little above what the case's process already maps: any allocation
 * larger than that margin then fails, in libc, under the sanitizers and
 * under valgrind alike, while small ones still succeed. A call is made to
 * need more than the margin by giving it a long string to copy: a label of
 * big_mib() mebibytes, mapped as the same mebibyte of 'a's over and over so
 * that it costs address space and next to no memory. The limit is lifted
 * before anything is checked, so that a failing check has memory to say so.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cases/metrics.h"
#include "harness/instrumented.h"

enum { MIB = 1 << 20 };

/* The margin must cover what a parallel backend's threads map and unmap
 * on their own (a thread's stack, malloc's per-thread arenas); the long
 * string must exceed it. Under valgrind, which runs one backend thread at
 * a fiftieth of the speed, both are smaller, so that the scans of the
 * string stay quick. */
static size_t margin_mib(void)
{
    return RUNNING_ON_VALGRIND ? 8 : 48;
}

static size_t big_mib(void)
{
    return RUNNING_ON_VALGRIND ? 12 : 80;
}

/* ---- A long label that costs no memory ------------------------------------- */

typedef struct big_string {
    char *s;
    size_t len, mapped;
} big_string;

/* big_mib() MiB of 'a' then a NUL, or the case fails. */
static big_string big_string_new(void)
{
    int fd = memfd_create("cwc-label", 0);
    ck_assert_msg(fd >= 0, "memfd_create: %s", strerror(errno));
    ck_assert_int_eq(ftruncate(fd, MIB), 0);
    char *page = mmap(NULL, MIB, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
    ck_assert(page != MAP_FAILED);
    memset(page, 'a', MIB);
    munmap(page, MIB);
    size_t mib = big_mib();
    big_string b = {NULL, mib * MIB, (mib + 1) * MIB};
    b.s = mmap(NULL, b.mapped, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    ck_assert(b.s != MAP_FAILED);
    for (size_t i = 0; i < mib; i++)
        ck_assert(mmap(b.s + i * MIB, MIB, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) != MAP_FAILED);
    close(fd);
    char *tail = mmap(b.s + b.len, MIB, PROT_READ | PROT_WRITE,
                      MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0);
    ck_assert(tail != MAP_FAILED); /* its first byte, zero, ends the string */
    return b;
}

static void big_string_free(big_string *b)
{
    munmap(b->s, b->mapped);
}

/* Run `root` with a long string as its argument. */
static void run_with_big_string(cw_task_fn root)
{
    big_string big = big_string_new();
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, root, &big);
    big_string_free(&big);
}

/* ---- The limit ---------------------------------------------------------------- */

static struct rlimit saved_as;

static size_t mapped_now(void)
{
    FILE *f = fopen("/proc/self/statm", "r");
    ck_assert(f != NULL);
    unsigned long pages = 0;
    int got = fscanf(f, "%lu", &pages);
    fclose(f);
    ck_assert_int_eq(got, 1);
    return (size_t)pages * (size_t)sysconf(_SC_PAGESIZE);
}

/* From now on nothing larger than margin_mib() MiB can be allocated. */
static void memory_limited(void)
{
    ck_assert_int_eq(getrlimit(RLIMIT_AS, &saved_as), 0);
    struct rlimit limit = {mapped_now() + margin_mib() * MIB, saved_as.rlim_max};
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &limit), 0);
}

static void memory_restored(void)
{
    ck_assert_int_eq(setrlimit(RLIMIT_AS, &saved_as), 0);
}

/* ---- Contexts and spawns ------------------------------------------------------ */

static void *mark_ran(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    atomic_store((atomic_int *)arg, 1);
    return arg;
}

/* Spawn mark_ran from `c` (consumed); its join's status. */
static int spawn_from(cw_ctx *c, atomic_int *ran)
{
    cw_handle *h = cw_spawn(c, mark_ran, ran);
    if (!h)
        return 1; /* not a status: the case reports it */
    int rc = cw_join(h, NULL);
    cw_handle_release(h);
    return rc;
}

typedef struct child_seen {
    bool child_given, grandchild_given;
    int spawn, grandchild_spawn, after;
} child_seen;

static void *child_root(cw_ctx *ctx, void *arg)
{
    big_string *big = arg;
    atomic_int ran;
    atomic_init(&ran, 0);
    cw_ctx *long_named = cw_child(ctx, big->s); /* a label of big_mib() MiB */
    child_seen seen;
    memory_limited();
    cw_ctx *c = cw_child(long_named, "x"); /* needs a copy of that label */
    seen.child_given = c != NULL;
    cw_ctx *g = c ? cw_child(c, "y") : NULL;
    seen.grandchild_given = g != NULL;
    seen.grandchild_spawn = g ? spawn_from(g, &ran) : 1;
    seen.spawn = c ? spawn_from(c, &ran) : 1;
    memory_restored();
    ck_assert_msg(seen.child_given, "cw_child without memory gave NULL [CTX-006]");
    ck_assert_msg(seen.grandchild_given, "cw_child of a spent context gave NULL [CTX-006]");
    CWC_EQ(seen.spawn, CW_ERR_NOMEM);
    CWC_EQ(seen.grandchild_spawn, CW_ERR_NOMEM);
    CWC_EQ(atomic_load(&ran), 0);
    /* With memory back, the same call works and the run goes on. */
    cw_ctx *again = cw_child(long_named, "x");
    const char *joined = cw_label(again);
    ck_assert(joined[big->len] == '_' && joined[big->len + 1] == 'x' && !joined[big->len + 2]);
    cw_ctx_release(again);
    seen.after = spawn_from(cw_child(ctx, "after"), &ran);
    CWC_EQ(seen.after, CW_OK);
    CWC_EQ(atomic_load(&ran), 1);
    cw_ctx_release(long_named);
    return ctx;
}

CWC_CASE(memory_child_without_memory, "context", "CTX-006 TASK-011", 0)
{
    run_with_big_string(child_root);
}

/* A stack larger than the memory left: the task that needs it never runs,
 * its join says why, and the next spawn, with memory back, runs. */
static void *stack_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    atomic_int ran;
    atomic_init(&ran, 0);
    memory_limited();
    int starved = spawn_from(cw_child(ctx, "starved"), &ran);
    int ran_starved = atomic_load(&ran);
    memory_restored();
    CWC_EQ(starved, CW_ERR_NOMEM);
    CWC_EQ(ran_starved, 0);
    CWC_EQ(spawn_from(cw_child(ctx, "fed"), &ran), CW_OK);
    CWC_EQ(atomic_load(&ran), 1);
    return NULL;
}

CWC_CASE(memory_stack_without_memory, "tasks", "TASK-011", 0)
{
    cw_config cfg = cwc_config();
    cfg.stack_size = (size_t)2 * big_mib() * MIB; /* above the margin, below RUN-002's 1 GiB */
    cwc_run_ok(&cfg, stack_root, NULL);
}

typedef struct attr_seen {
    bool same_ctx;
    int spawn;
} attr_seen;

static void *attribute_root(cw_ctx *ctx, void *arg)
{
    big_string *big = arg;
    atomic_int ran;
    atomic_init(&ran, 0);
    cw_ctx *c = cw_with_attribute(cw_child(ctx, "attrs"), "k", "kept");
    attr_seen seen;
    memory_limited();
    seen.same_ctx = cw_with_attribute(c, "k", big->s) == c; /* a value of big_mib() MiB */
    memory_restored();
    ck_assert_msg(seen.same_ctx, "cw_with_attribute did not return its context");
    /* The value it could not copy is not there: the old one is. */
    cw_metric *m = cw_counter(c, "seen", "a counter under the context");
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "attrs_seen_total{k=\"kept\"} 0");
    free(text);
    cw_metric_release(m);
    /* And the context is spent: it spawns nothing. */
    seen.spawn = spawn_from(c, &ran);
    CWC_EQ(seen.spawn, CW_ERR_NOMEM);
    CWC_EQ(atomic_load(&ran), 0);
    return ctx;
}

CWC_CASE(memory_attribute_without_memory, "context", "CTX-006", CWC_NEEDS_METRICS)
{
    run_with_big_string(attribute_root);
}

/* ---- Metrics ---------------------------------------------------------------------- */

typedef struct metric_seen {
    bool counter_given, family_given, child_given, child_again;
    uint64_t counted, child_counted;
    bool encoded;
} metric_seen;

static void *register_root(cw_ctx *ctx, void *arg)
{
    big_string *big = arg;
    static const char *const labels[1] = {"l"};
    const char *values[1] = {"v"};
    cw_ctx *long_named = cw_child(ctx, big->s);
    cw_metric *kept = cw_counter(ctx, "kept", "registered with memory to spare");
    metric_seen seen;
    memory_limited();
    /* Each name is the long label's copy plus a suffix. */
    cw_metric *m = cw_counter(long_named, "c", "no memory for its name");
    cw_metric *f = cw_family(long_named, "f", "no memory either", CW_METRIC_COUNTER, labels, 1);
    cw_metric *child = f ? cw_family_get(f, values) : NULL;
    seen.counter_given = m != NULL;
    seen.family_given = f != NULL;
    seen.child_given = child != NULL;
    if (m)
        cw_counter_add(m, 5);
    if (child)
        cw_counter_add(child, 7);
    seen.counted = m ? cw_counter_get(m) : 1;
    seen.child_counted = child ? cw_counter_get(child) : 1;
    cw_metric *again = child ? cw_family_get(child, values) : NULL;
    seen.child_again = again != NULL;
    cw_metric_release(m);
    cw_metric_release(f);
    memory_restored();
    ck_assert_msg(seen.counter_given && seen.family_given && seen.child_given && seen.child_again,
                  "registering without memory gave NULL [MET-019]");
    CWC_EQ(seen.counted, 0);
    CWC_EQ(seen.child_counted, 0);
    cw_counter_inc(kept);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "kept_total 1\n");
    CWC_LACKS(text, "aaaa_c_total");
    CWC_LACKS(text, "aaaa_f_total");
    free(text);
    cw_metric_release(kept);
    cw_ctx_release(long_named);
    return ctx;
}

CWC_CASE(memory_register_without_memory, "metrics", "MET-019", 0)
{
    run_with_big_string(register_root);
}

/* A metric whose name alone is longer than the memory left: no text can
 * hold it, so the encode gives NULL, and again a text once memory is back. */
static void *encode_root(cw_ctx *ctx, void *arg)
{
    big_string *big = arg;
    cw_ctx *long_named = cw_child(ctx, big->s);
    cw_metric *m = cw_counter(long_named, "c", "a counter with a long name");
    memory_limited();
    char *limited = cw_metrics_encode(ctx);
    memory_restored();
    ck_assert_msg(limited == NULL, "an encode larger than the memory left gave a text");
    char *text = cw_metrics_encode(ctx);
    ck_assert(text != NULL);
    ck_assert(strlen(text) > big->len);
    free(text);
    cw_metric_release(m);
    cw_ctx_release(long_named);
    return ctx;
}

CWC_CASE(memory_encode_without_memory, "metrics", "MET-019", 0)
{
    run_with_big_string(encode_root);
}

/* ---- Sleeping ------------------------------------------------------------------------ */

/* As many sleepers as a doubling array from 64 holds when full, so that
 * one more alarm is the one that needs memory. */
enum { SLEEPERS = 256, EAT_LIMIT_MIB = 512 };

/* Every block malloc gives, largest first, until it gives none or
 * EAT_LIMIT_MIB is held (an allocator that maps memory it reserved
 * before the limit never runs out). The blocks form a list. */
static void *eat_memory(void)
{
    void *list = NULL;
    size_t eaten = 0;
    for (size_t size = MIB; size >= sizeof(void *) && eaten < (size_t)EAT_LIMIT_MIB * MIB;) {
        void **block = malloc(size);
        if (!block) {
            size /= 2;
            continue;
        }
        *block = list;
        list = block;
        eaten += size;
    }
    return list;
}

static void give_back(void *list)
{
    while (list) {
        void *next = *(void **)list;
        free(list);
        list = next;
    }
}

static void *sleeps_a_while(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_sleep(ctx, CW_SEC);
    return NULL;
}

/* Many alarms armed, then one more with memory gone: the sleep ends on
 * time or at once with CW_ERR_NOMEM, and the run goes on. */
static void *sleep_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h[SLEEPERS];
    for (int i = 0; i < SLEEPERS; i++)
        h[i] = cw_spawn(cw_child(ctx, "sleeper"), sleeps_a_while, NULL);
    for (int i = 0; i < 8; i++)
        cw_yield(ctx); /* every sleeper arms its alarm */
    memory_limited();
    /* Under valgrind and ThreadSanitizer, whose own bookkeeping would fail
     * first and end the process, only the limit. */
    void *eaten = RUNNING_ON_VALGRIND || CWC_TSAN ? NULL : eat_memory();
    int rc = cw_sleep(ctx, CW_MSEC);
    give_back(eaten);
    memory_restored();
    ck_assert_msg(rc == CW_OK || rc == CW_ERR_NOMEM, "a sleep without memory returned %d", rc);
    CWC_EQ(cw_sleep(ctx, CW_MSEC), CW_OK);
    for (int i = 0; i < SLEEPERS; i++) {
        cw_abort(h[i]);
        cw_handle_release(h[i]);
    }
    return ctx;
}

CWC_CASE(memory_sleep_without_memory, "clock", "CLK-008", 0)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, sleep_root, NULL);
}

/* ---- The stop signal ------------------------------------------------------------------ */

typedef struct signal_seen {
    bool given;
    int index, result, stop;
} signal_seen;

/* A signal taken with memory gone: either a real one (no stop yet, so
 * its wait loses to a sleep) or a spent one, whose wait gives
 * CW_ERR_NOMEM and which holds no stop back. */
static void *signal_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    signal_seen seen = {false, -1, 0, 0};
    memory_limited();
    void *eaten = RUNNING_ON_VALGRIND || CWC_TSAN ? NULL : eat_memory();
    cw_signal *s = cw_stopped(ctx);
    give_back(eaten);
    memory_restored();
    seen.given = s != NULL;
    ck_assert_msg(seen.given, "cw_stopped without memory gave NULL [SIG-007]");
    cw_wait w[2] = {cw_wait_signal(s, NULL), cw_wait_sleep(ctx, CW_MSEC)};
    seen.index = cw_select(w, 2);
    seen.result = w[seen.index].result;
    if (seen.index == 0) {
        CWC_EQ(seen.result, CW_ERR_NOMEM);   /* no stop was made: only a spent signal completes */
        seen.stop = cw_stop(ctx, 1, CW_SEC); /* and it holds nothing back */
        CWC_EQ(seen.stop, CW_OK);
        cw_signal_release(s);
    } else {
        CWC_EQ(seen.index, 1);
        cw_signal_release(s);
        CWC_EQ(cw_stop(ctx, 1, CW_SEC), CW_OK);
    }
    return ctx;
}

CWC_CASE(memory_signal_without_memory, "signals", "SIG-007", 0)
{
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, signal_root, NULL);
}

/* ---- The network ---------------------------------------------------------------------- */

/* A send of the long string on a mock channel: its receiving side cannot
 * buffer that much, so the send fails with CW_ERR_NOMEM, delivers nothing
 * and poisons its sink; a new channel then works. */
static void *send_root(cw_ctx *ctx, void *arg)
{
    big_string *big = arg;
    cw_sink *sink;
    cw_stream *stream;
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf whole;
    ck_assert_int_eq(cw_iobuf_static(cwc_backend, big->s, big->len, &whole), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &whole), CW_OK);
    memory_limited();
    int rc = cw_sink_send(sink, l);
    memory_restored();
    CWC_EQ(rc, CW_ERR_NOMEM);
    uint8_t peeked[1];
    CWC_EQ(cw_stream_peek(stream, sizeof peeked, peeked), 0); /* nothing arrived */
    CWC_EQ(cw_sink_send(sink, l), CW_ERR_CLOSED);             /* NET-013 */
    cw_iobufs_release(l);
    cw_sink_close(sink);
    cw_stream_close(stream);
    ck_assert_int_eq(cw_mock_channel(ctx, &sink, &stream), CW_OK);
    l = cw_iobufs_new(cwc_backend);
    ck_assert_int_eq(cw_iobuf_static(cwc_backend, "after", 5, &whole), CW_OK);
    ck_assert_int_eq(cw_iobufs_append(l, &whole), CW_OK);
    CWC_EQ(cw_sink_send(sink, l), CW_OK);
    cw_iobufs_release(l);
    cw_iobufs *got = NULL;
    CWC_EQ(cw_stream_recv(stream, 5, &got), CW_OK);
    ck_assert(cw_iobufs_equal_bytes(got, "after", 5));
    cw_iobufs_release(got);
    cw_sink_close(sink);
    cw_stream_close(stream);
    return ctx;
}

CWC_CASE(memory_send_without_memory, "network", "NET-034 NET-013", CWC_NEEDS_BUFFERS)
{
    run_with_big_string(send_root);
}

/* A name longer than the memory left cannot be registered: the call says
 * CW_ERR_NOMEM and the table is as it was. */
static void *register_name_root(cw_ctx *ctx, void *arg)
{
    big_string *big = arg;
    cw_addr kept = cw_addr_ipv4(10, 0, 0, 1, 0), other = cw_addr_ipv4(10, 0, 0, 2, 0);
    CWC_EQ(cw_resolver_register(ctx, "kept", &kept, 1), CW_OK);
    memory_limited();
    int rc = cw_resolver_register(ctx, big->s, &other, 1);
    memory_restored();
    CWC_EQ(rc, CW_ERR_NOMEM);
    cw_addr out[2];
    size_t n = 9;
    CWC_EQ(cw_resolve(ctx, big->s, out, 2, &n, NULL), CW_ERR_RESOLVE_FAILED);
    CWC_EQ(n, 0);
    CWC_EQ(cw_resolve(ctx, "kept", out, 2, &n, NULL), CW_OK);
    CWC_EQ(n, 1);
    ck_assert(cw_addr_equal(&out[0], &kept));
    return ctx;
}

CWC_CASE(memory_resolver_register_without_memory, "network", "NET-034", CW_CAP_DETERMINISTIC)
{
    run_with_big_string(register_name_root);
}
