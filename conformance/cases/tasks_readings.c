/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * tasks_readings.c - rules of the core a reader of the spec alone could
 * have read another way (TASK-013, TASK-008, RUN-002), each checked where
 * the readings part.
 */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#include "cases/util.h"

/* ---- TASK-013: one thread, the caller's ----------------------------------------------- */

typedef struct caller_thread {
    pthread_t caller;
    int elsewhere;
} caller_thread;

static void on_callers_thread(caller_thread *c)
{
    if (!pthread_equal(pthread_self(), c->caller))
        c->elsewhere++;
}

static void *thread_child(cw_ctx *ctx, void *arg)
{
    on_callers_thread(arg);
    cw_yield(ctx);
    on_callers_thread(arg);
    cw_sleep(ctx, CW_MSEC);
    on_callers_thread(arg);
    return NULL;
}

static void *thread_root(cw_ctx *ctx, void *arg)
{
    on_callers_thread(arg);
    cw_handle *h[4];
    for (int i = 0; i < 4; i++)
        h[i] = cw_spawn(cw_child(ctx, "t"), thread_child, arg);
    for (int i = 0; i < 4; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        on_callers_thread(arg);
        cw_handle_release(h[i]);
    }
    return NULL;
}

CWC_CASE(tasks_run_on_the_callers_thread, "tasks", "TASK-013 RUN-008",
         CWC_UNLESS_PARALLEL | CWC_REPEATED)
{
    caller_thread c = {pthread_self(), 0};
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, thread_root, &c);
    ck_assert_msg(c.elsewhere == 0,
                  "%d times a task ran on another thread than cw_start's caller (TASK-013)",
                  c.elsewhere);
}

/* ---- TASK-008: what a join that does not give CW_OK writes ---------------------------- */

static int marker;

static void *returns_marker(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cwc_pending_task(ctx, NULL); /* aborted here */
    return &marker;
}

static void *panics_now(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_panic(ctx, "join out");
}

static void *join_out_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    void *out = &marker;
    cw_handle *aborted = cw_spawn(cw_child(ctx, "a"), returns_marker, NULL);
    cw_abort(aborted);
    ck_assert_int_eq(cw_join(aborted, &out), CW_ERR_CLOSED);
    ck_assert_msg(out == NULL, "an aborted task's join left *out as it was");
    cw_handle_release(aborted);

    out = &marker;
    cw_handle *panicked = cw_spawn(cw_child(ctx, "p"), panics_now, NULL);
    ck_assert_int_eq(cw_join(panicked, &out), CW_ERR_EXITED);
    ck_assert_msg(out == NULL, "a panicked task's join left *out as it was");
    cw_handle_release(panicked);

    out = &marker;
    cw_handle *failed = cw_handle_ready(ctx, CW_ERR_CLOSED, &marker);
    ck_assert_int_eq(cw_join(failed, &out), CW_ERR_CLOSED);
    ck_assert_msg(out == NULL, "a ready handle's failed join gave its value");
    cw_handle_release(failed);

    int other = 0;
    out = &other;
    cw_handle *ready = cw_handle_ready(ctx, CW_OK, &marker);
    cw_abort(ready);
    ck_assert_int_eq(cw_join(ready, &out), CW_ERR_ABORTED);
    ck_assert_msg(out == &other, "an aborted ready handle's join wrote *out");
    cw_handle_release(ready);
    return NULL;
}

CWC_CASE(join_out_when_not_ok, "tasks", "TASK-008 TASK-007 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.catch_panics = true;
    cwc_run_ok(&cfg, join_out_root, NULL);
}

/* ---- RUN-002: the smallest size is the end of the last ABI 1.0 field ------------------ */

CWC_CASE(config_size_of_abi_1_0_fields, "runner", "RUN-002 RUN-008", CWC_REPEATED)
{
    size_t end = offsetof(cw_config, blocking_threads) + sizeof(uint32_t);
    cw_config cfg = cwc_config();
    cw_run_result res;
    cfg.size = (uint32_t)end;
    ck_assert_msg(cwc_run(&cfg, cwc_return_42, NULL, &res) == CW_OK,
                  "size %zu, the end of blocking_threads, refused: %s", end, res.message);
    cfg.size = (uint32_t)end - 1;
    ck_assert_int_eq(cwc_run(&cfg, cwc_return_42, NULL, &res), CW_ERR_INVALID);
}
