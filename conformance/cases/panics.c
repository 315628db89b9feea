/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * panics.c - panics, catch_panics, cleanup handlers and how a run ends
 * (spec/06-panics.md, spec/02-runner.md).
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases/util.h"

static void *panic_now(cw_ctx *ctx, void *arg)
{
    cw_panic(ctx, "%s", (const char *)arg);
}

static void expect_panic(const cw_config *cfg, cw_task_fn root, void *arg, const char *needle)
{
    cw_run_result res;
    int rc = cwc_run(cfg, root, arg, &res);
    ck_assert_int_eq(rc, CW_ERR_PANICKED);
    ck_assert_int_eq(res.status, CW_ERR_PANICKED);
    ck_assert_msg(strstr(res.message, needle), "message '%s' lacks '%s'", res.message, needle);
}

CWC_CASE(panic_aborts_root, "panics", "RUN-004 PAN-001 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    expect_panic(&cfg, panic_now, "blah", "blah");
    cfg.catch_panics = true; /* a root panic ends the run even when caught */
    expect_panic(&cfg, panic_now, "blah", "blah");
}

/* A message longer than the run's result can hold reaches it whole up to
 * that size, through whichever panic entry the backend fills: `panic`
 * receives it formatted and cut to CW_PANIC_MESSAGE_MAX - 1 bytes, and a
 * backend has room for all of them (PAN-007, PAN-001). */
static void *panic_long(cw_ctx *ctx, void *arg)
{
    cw_panic(ctx, "%s|end", (const char *)arg);
}

CWC_CASE(panic_message_through_either_entry, "panics", "PAN-007 PAN-001 RUN-008", CWC_REPEATED)
{
    ck_assert_msg(CW_BACKEND_HAS(cwc_backend, panic) || cwc_backend->vpanic,
                  "the table fills neither panic nor vpanic");
    char text[601], expect[CW_PANIC_MESSAGE_MAX];
    memset(text, 'x', 600), text[600] = '\0';
    memcpy(expect, text, sizeof expect - 1), expect[sizeof expect - 1] = '\0';
    cw_config cfg = cwc_config();
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, panic_long, text, &res), CW_ERR_PANICKED);
    ck_assert_uint_eq(strlen(res.message), CW_PANIC_MESSAGE_MAX - 1);
    ck_assert_str_eq(res.message, expect);
}

static void *sleep_forever(cw_ctx *ctx)
{
    for (;;)
        cw_sleep(ctx, 100 * CW_MSEC);
    return NULL;
}

static void *panic_spawn_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "panic"), panic_now, "blah"));
    return sleep_forever(ctx);
}

CWC_CASE(panic_aborts_spawn, "panics", "PAN-001 RUN-008", CWC_REPEATED)
{
    expect_panic(NULL, panic_spawn_root, NULL, "blah");
}

static void *panic_spawn_caught_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h = cw_spawn(cw_child(ctx, "panic"), panic_now, "blah");
    int rc = cw_join(h, NULL);
    cw_handle_release(h);
    return (void *)(intptr_t)rc;
}

CWC_CASE(panic_aborts_spawn_caught, "panics", "PAN-002 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.catch_panics = true;
    ck_assert_int_eq((int)(intptr_t)cwc_run_ok(&cfg, panic_spawn_caught_root, NULL), CW_ERR_EXITED);
}

/* A task aborted while it runs that panics before its next suspension point
 * ends by its panic: its joins give CW_ERR_EXITED, as any caught panic's
 * [PAN-002, TASK-002]. */
static void *abort_self_then_panic(cw_ctx *ctx, void *arg)
{
    cw_handle *self;
    ck_assert_int_eq(cw_oneshot_recv(arg, &self), CW_OK);
    cw_abort(self);
    cw_panic(ctx, "after its own abort"); /* no suspension point between */
}

static void *panic_after_abort_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_oneshot *self = cw_oneshot_new(ctx, sizeof(cw_handle *));
    cw_handle *h = cw_spawn(cw_child(ctx, "aborts_itself"), abort_self_then_panic, self);
    ck_assert_int_eq(cw_oneshot_send(self, &h), CW_OK);
    int rc = cw_join(h, NULL);
    cw_handle_release(h);
    return (void *)(intptr_t)rc;
}

CWC_CASE(panic_after_own_abort_caught, "panics", "PAN-002 TASK-002 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.catch_panics = true;
    ck_assert_int_eq((int)(intptr_t)cwc_run_ok(&cfg, panic_after_abort_root, NULL), CW_ERR_EXITED);
}

static void *multiple_panics_root(cw_ctx *ctx, void *arg)
{
    static const char *booms[3] = {"boom 1", "boom 2", "boom 3"};
    cw_handle *h[3];
    for (int i = 0; i < 3; i++)
        h[i] = cw_spawn(cw_child(ctx, "panic"), panic_now, (void *)booms[i]);
    if (!arg)
        return sleep_forever(ctx);
    int *results = arg;
    for (int i = 0; i < 3; i++) {
        results[i] = cw_join(h[i], NULL);
        cw_handle_release(h[i]);
    }
    return NULL;
}

CWC_CASE(multiple_panics, "panics", "PAN-001 PAN-003 RUN-008", CWC_REPEATED)
{
    cw_run_result res;
    ck_assert_int_eq(cwc_run(NULL, multiple_panics_root, NULL, &res), CW_ERR_PANICKED);
    ck_assert_msg(!strcmp(res.message, "boom 1") || !strcmp(res.message, "boom 2") ||
                      !strcmp(res.message, "boom 3"),
                  "message '%s' is none of the panics", res.message);
}

CWC_CASE(multiple_panics_caught, "panics", "PAN-002 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.catch_panics = true;
    int results[3] = {0, 0, 0};
    cwc_run_ok(&cfg, multiple_panics_root, results);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq(results[i], CW_ERR_EXITED);
}

static void *blocking_panic_root(cw_ctx *ctx, void *arg)
{
    int execution = (int)(intptr_t)arg;
    cw_ctx *spawner = cw_child(ctx, "blocking");
    if (execution == CW_EXEC_DEDICATED)
        cw_dedicated(spawner);
    else
        cw_shared(spawner, true);
    cw_handle *h = cw_spawn(spawner, panic_now, "blocking task panicked");
    int rc = cw_join(h, NULL);
    cw_handle_release(h);
    return (void *)(intptr_t)rc;
}

CWC_CASE(spawn_blocking_panic, "panics", "PAN-001 TASK-006 RUN-008", CWC_REPEATED)
{
    expect_panic(NULL, blocking_panic_root, (void *)(intptr_t)CW_EXEC_SHARED_BLOCKING,
                 "blocking task panicked");
    expect_panic(NULL, blocking_panic_root, (void *)(intptr_t)CW_EXEC_DEDICATED,
                 "blocking task panicked");
}

CWC_CASE(spawn_blocking_panic_caught, "panics", "PAN-002 TASK-006 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.catch_panics = true;
    ck_assert_int_eq((int)(intptr_t)cwc_run_ok(&cfg, blocking_panic_root,
                                               (void *)(intptr_t)CW_EXEC_SHARED_BLOCKING),
                     CW_ERR_EXITED);
    ck_assert_int_eq(
        (int)(intptr_t)cwc_run_ok(&cfg, blocking_panic_root, (void *)(intptr_t)CW_EXEC_DEDICATED),
        CW_ERR_EXITED);
}

/* ---- cleanup handlers ------------------------------------------------------------------ */

struct order {
    char log[16];
    int n;
};

static void note_a(void *arg)
{
    struct order *o = arg;
    o->log[o->n++] = 'a';
}

static void note_b(void *arg)
{
    struct order *o = arg;
    o->log[o->n++] = 'b';
}

static void note_c(void *arg)
{
    struct order *o = arg;
    o->log[o->n++] = 'c';
}

struct cleanup_task {
    struct order *order;
    int mode;         /* 0: wait to be aborted, 1: panic, 2: pop normally */
    atomic_int ready; /* set once its handlers are registered */
};

static void *with_cleanups(cw_ctx *ctx, void *arg)
{
    struct cleanup_task *c = arg;
    CW_CLEANUP_PUSH(ctx, note_a, c->order);
    CW_CLEANUP_PUSH(ctx, note_b, c->order);
    c->ready = 1;
    if (c->mode == 1)
        cw_panic(ctx, "unwind me");
    if (c->mode == 0)
        cwc_pending_task(ctx, NULL);
    CW_CLEANUP_POP(ctx, true);
    CW_CLEANUP_PUSH(ctx, note_c, c->order);
    CW_CLEANUP_POP(ctx, false);
    CW_CLEANUP_POP(ctx, true);
    return NULL;
}

static void *cleanup_root(cw_ctx *ctx, void *arg)
{
    struct order *orders = arg;
    struct cleanup_task tasks[3] = {{&orders[0], 0, 0}, {&orders[1], 1, 0}, {&orders[2], 2, 0}};
    cw_handle *h[3];
    for (int i = 0; i < 3; i++)
        h[i] = cw_spawn(cw_child(ctx, "cleanup"), with_cleanups, &tasks[i]);
    while (!tasks[0].ready) /* abort it at a suspension point, not before it starts */
        cw_yield(ctx);
    cw_abort(h[0]);
    ck_assert_int_eq(cw_join(h[0], NULL), CW_ERR_CLOSED);
    ck_assert_int_eq(cw_join(h[1], NULL), CW_ERR_EXITED);
    ck_assert_int_eq(cw_join(h[2], NULL), CW_OK);
    for (int i = 0; i < 3; i++)
        cw_handle_release(h[i]);
    return NULL;
}

CWC_CASE(cleanup_handlers_run_newest_first, "panics", "PAN-004 TASK-002 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.catch_panics = true;
    struct order orders[3] = {{{0}, 0}, {{0}, 0}, {{0}, 0}};
    cwc_run_ok(&cfg, cleanup_root, orders);
    ck_assert_str_eq(orders[0].log, "ba"); /* aborted at its suspension point */
    ck_assert_str_eq(orders[1].log, "ba"); /* panicked */
    ck_assert_str_eq(orders[2].log, "ba"); /* popped with execute, c popped without */
}

/* A blocking call inside a cleanup handler of an unwinding task fails at
 * once instead of suspending, and cw_park and cw_yield return at once:
 * nothing would ever wake this park. */
struct blocked_cleanup {
    cw_ctx *ctx;
    int sleep_result;
    atomic_int ready;
};

static void sleep_in_cleanup(void *arg)
{
    struct blocked_cleanup *b = arg;
    cw_park(b->ctx);
    cw_yield(b->ctx);
    b->sleep_result = cw_sleep(b->ctx, CW_SEC);
}

static void *cleanup_sleeper(cw_ctx *ctx, void *arg)
{
    struct blocked_cleanup *b = arg;
    b->ctx = ctx;
    CW_CLEANUP_PUSH(ctx, sleep_in_cleanup, b);
    b->ready = 1;
    cwc_pending_task(ctx, NULL);
    CW_CLEANUP_POP(ctx, false);
    return NULL;
}

static void *blocked_cleanup_root(cw_ctx *ctx, void *arg)
{
    struct blocked_cleanup *b = arg;
    cw_handle *h = cw_spawn(cw_child(ctx, "sleeper"), cleanup_sleeper, b);
    while (!b->ready)
        cw_yield(ctx);
    cw_abort(h);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    return NULL;
}

CWC_CASE(cleanup_cannot_block, "panics", "PAN-005 RUN-008", CWC_REPEATED)
{
    struct blocked_cleanup b = {NULL, 12345, 0};
    cwc_run_ok(NULL, blocked_cleanup_root, &b);
    ck_assert_int_eq(b.sleep_result, CW_ERR_CLOSED);
}

/* ---- the end of a run frees what is left ---------------------------------------------- */

struct cycle_state {
    cw_chan *setup, *mine, *theirs;
    atomic_int *alive;
};

static void drop_resource(void *arg)
{
    atomic_int *alive = arg;
    atomic_fetch_sub(alive, 1);
}

/* Each task holds the sending side the other waits on, so neither channel
 * can ever close: only the end of the run can free them. */
static void *cycle_task(cw_ctx *ctx, void *arg)
{
    struct cycle_state *s = arg;
    atomic_fetch_add(s->alive, 1);
    CW_CLEANUP_PUSH(ctx, drop_resource, s->alive);
    char unit = 1;
    ck_assert_int_eq(cw_chan_send(s->theirs, &unit), CW_OK);
    ck_assert_int_eq(cw_chan_recv(s->mine, &unit), CW_OK);
    ck_assert_int_eq(cw_chan_send(s->setup, &unit), CW_OK);
    while (cw_chan_recv(s->mine, &unit) == CW_OK) {
    }
    CW_CLEANUP_POP(ctx, true);
    return NULL;
}

static void *inner_cycle_root(cw_ctx *ctx, void *arg)
{
    static struct cycle_state s1, s2;
    cw_chan *setup = cw_chan_new(ctx, 1, 0);
    cw_chan *c1 = cw_chan_new(ctx, 1, 0), *c2 = cw_chan_new(ctx, 1, 0);
    s1 = (struct cycle_state){setup, c1, c2, arg};
    s2 = (struct cycle_state){setup, c2, c1, arg};
    cw_handle_release(cw_spawn(cw_child(ctx, "task1"), cycle_task, &s1));
    cw_handle_release(cw_spawn(cw_child(ctx, "task2"), cycle_task, &s2));
    char unit;
    ck_assert_int_eq(cw_chan_recv(setup, &unit), CW_OK);
    ck_assert_int_eq(cw_chan_recv(setup, &unit), CW_OK);
    return NULL;
}

static void *outer_cycle_root(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    atomic_int *alive = arg;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(NULL, inner_cycle_root, alive, &res), CW_OK);
    ck_assert_int_eq(*alive, 0); /* both blocked tasks released their resource */
    return NULL;
}

CWC_CASE(circular_reference_prevents_cleanup, "runner", "RUN-003 RUN-008", CWC_REPEATED)
{
    atomic_int alive = 0;
    cwc_run_ok(NULL, outer_cycle_root, &alive);
    ck_assert_int_eq(alive, 0);
}

/* ---- misuse ------------------------------------------------------------------------- */

static void noop_cleanup(void *arg)
{
    (void)arg;
}

static void *pop_out_of_order(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_cleanup outer, inner;
    cw_cleanup_push(ctx, &outer, noop_cleanup, NULL);
    cw_cleanup_push(ctx, &inner, noop_cleanup, NULL);
    cw_cleanup_pop(ctx, &outer, false); /* not the newest: a misuse */
    return NULL;
}

CWC_CASE(cleanup_pop_out_of_order_panics, "panics", "PAN-004 RUN-008", CWC_REPEATED)
{
    expect_panic(NULL, pop_out_of_order, NULL, "cleanup handlers must be popped newest first");
}

static void *call_from_foreign_thread(void *arg)
{
    cw_yield(arg); /* not a task of the runtime: ends the process */
    return NULL;
}

static void *foreign_thread_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, call_from_foreign_thread, ctx), 0);
    pthread_join(t, NULL);
    return NULL;
}

/* A cleanup handler that panics: nothing is left to unwind to. */
static void panic_in_cleanup(void *arg)
{
    cw_panic(arg, "a panic while unwinding");
}

static void *panicking_cleanup_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    CW_CLEANUP_PUSH(ctx, panic_in_cleanup, ctx);
    cw_panic(ctx, "the first panic");
    CW_CLEANUP_POP(ctx, false);
    return NULL;
}

/* cw_panic from a thread that runs no task of the run. */
static void *panic_from_foreign_thread(void *arg)
{
    cw_panic(arg, "a panic outside any task");
    return NULL;
}

static void *foreign_panic_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, panic_from_foreign_thread, ctx), 0);
    pthread_join(t, NULL);
    return NULL;
}

/* The run of `root` in a child process: it must end the process, with a
 * message on the standard error stream (00-conventions.md, "When the
 * process ends") that holds `names` where the rule says what it names. */
static void expect_process_end(cw_task_fn root, const char *what, const char *names)
{
    char said[1024];
    int status = cwc_run_in_child(NULL, root, NULL, said, sizeof said);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGABRT,
                  "%s did not end the process (wait status %#x)", what, (unsigned)status);
    ck_assert_msg(said[0] != '\0', "%s ended the process without a message", what);
    ck_assert_msg(!names || strstr(said, names),
                  "%s ended the process with a message that does not name the call (%s): \"%s\"",
                  what, names, said);
}

CWC_CASE(panic_in_a_cleanup_handler_ends_the_process, "panics", "PAN-008", 0)
{
    expect_process_end(panicking_cleanup_root, "a panic in a cleanup handler", NULL);
    expect_process_end(foreign_panic_root, "a panic outside any task", NULL);
}

CWC_CASE(suspending_outside_a_task_ends_the_process, "panics", "PAN-006", 0)
{
    expect_process_end(foreign_thread_root, "cw_yield from a foreign thread", "cw_yield");
}

/* Handlers still registered when a task returns normally are not run
 * (PAN-004): a task, and the root, push one and return without popping
 * it. Nothing unwinds them, now or when the run ends. */
static void count_run(void *arg)
{
    atomic_fetch_add((atomic_int *)arg, 1);
}

struct left_registered {
    cw_cleanup node;
    atomic_int *runs;
};

static void *returns_with_a_handler(cw_ctx *ctx, void *arg)
{
    struct left_registered *l = arg;
    cw_cleanup_push(ctx, &l->node, count_run, l->runs);
    return NULL;
}

static void *left_registered_root(cw_ctx *ctx, void *arg)
{
    atomic_int *runs = arg;
    static struct left_registered task_side, root_side;
    task_side.runs = root_side.runs = runs;
    cw_handle *h = cw_spawn(cw_child(ctx, "returner"), returns_with_a_handler, &task_side);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    ck_assert_int_eq(atomic_load(runs), 0);
    cw_cleanup_push(ctx, &root_side.node, count_run, runs);
    return NULL;
}

CWC_CASE(cleanup_handlers_left_at_return_do_not_run, "panics", "PAN-004 RUN-008", CWC_REPEATED)
{
    atomic_int runs = 0;
    cwc_run_ok(NULL, left_registered_root, &runs);
    ck_assert_int_eq(atomic_load(&runs), 0);
}
