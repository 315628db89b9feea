/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * signals.c - stop and stopped (spec/05-signals.md).
 */
#include <stdatomic.h>

#include "cases/util.h"

#define KILL 9

static void *wait_for_stop(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_signal *s = cw_stopped(ctx);
    int32_t value = 0;
    ck_assert_int_eq(cw_signal_wait(s, &value), CW_OK);
    ck_assert_int_eq(value, KILL);
    cw_signal_release(s);
    return NULL;
}

static void *shutdown_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *before = cw_spawn(cw_child(ctx, "before"), wait_for_stop, NULL);
    cw_ctx *stopper = cw_child(ctx, "stop");
    ck_assert_int_eq(cw_stop(stopper, KILL, CW_FOREVER), CW_OK);
    cw_ctx_release(stopper);
    /* A signal taken after the stop resolves at once. */
    cw_handle *after = cw_spawn(cw_child(ctx, "after"), wait_for_stop, NULL);
    ck_assert_int_eq(cw_join(before, NULL), CW_OK);
    ck_assert_int_eq(cw_join(after, NULL), CW_OK);
    cw_handle_release(before);
    cw_handle_release(after);
    return NULL;
}

CWC_CASE(shutdown, "signals", "SIG-001 SIG-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, shutdown_root, NULL);
}

struct cleanup_worker {
    cw_chan *started;
    atomic_int *counter;
    cw_duration cleanup;
};

static void *cleanup_worker(cw_ctx *ctx, void *arg)
{
    struct cleanup_worker *w = arg;
    cw_signal *s = cw_stopped(ctx);
    char unit = 1;
    ck_assert_int_eq(cw_chan_send(w->started, &unit), CW_OK);
    int32_t value = 0;
    ck_assert_int_eq(cw_signal_wait(s, &value), CW_OK);
    ck_assert_int_eq(value, 42);
    cw_sleep(ctx, w->cleanup);
    atomic_fetch_add(w->counter, 1);
    cw_signal_release(s);
    return NULL;
}

static void *multiple_signals_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    atomic_int counter = 0;
    cw_chan *started = cw_chan_new(ctx, 1, 3);
    struct cleanup_worker w[3];
    cw_handle *h[3];
    for (int i = 0; i < 3; i++) {
        w[i] = (struct cleanup_worker){started, &counter, (cw_duration)(i + 1) * 10 * CW_MSEC};
        h[i] = cw_spawn(cw_child(ctx, "cleanup"), cleanup_worker, &w[i]);
    }
    for (int i = 0; i < 3; i++) {
        char unit;
        ck_assert_int_eq(cw_chan_recv(started, &unit), CW_OK);
    }
    ck_assert_int_eq(cw_stop(ctx, 42, CW_FOREVER), CW_OK);
    ck_assert_int_eq(counter, 3); /* stop waited for every cleanup */
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    return NULL;
}

CWC_CASE(shutdown_multiple_signals, "signals", "SIG-002 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, multiple_signals_root, NULL);
}

static void *hold_signal_forever(cw_ctx *ctx, void *arg)
{
    cw_signal *s = cw_stopped(ctx);
    cwc_notify(arg);
    cwc_pending_task(ctx, NULL);
    cw_signal_release(s);
    return NULL;
}

static void *shutdown_timeout_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_oneshot *started = cw_oneshot_new(ctx, 1);
    cw_handle_release(cw_spawn(cw_child(ctx, "signal"), hold_signal_forever, started));
    cwc_await(started);
    ck_assert_int_eq(cw_stop(ctx, 42, 100 * CW_MSEC), CW_ERR_TIMEOUT);
    return NULL;
}

CWC_CASE(shutdown_timeout, "signals", "SIG-005 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, shutdown_timeout_root, NULL);
}

struct slow_stopper {
    cw_oneshot *started;
    atomic_int *counter;
};

static void *slow_stopper(cw_ctx *ctx, void *arg)
{
    struct slow_stopper *s = arg;
    cw_signal *sig = cw_stopped(ctx);
    cwc_notify(s->started);
    int32_t value = 0;
    ck_assert_int_eq(cw_signal_wait(sig, &value), CW_OK);
    ck_assert_int_eq(value, 42);
    cw_sleep(ctx, 50 * CW_MSEC);
    atomic_fetch_add(s->counter, 1);
    cw_signal_release(sig);
    return NULL;
}

static void *multiple_stop_calls_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    atomic_int counter = 0;
    struct slow_stopper s = {cw_oneshot_new(ctx, 1), &counter};
    cw_handle *task = cw_spawn(cw_child(ctx, "blocking_task"), slow_stopper, &s);
    cwc_await(s.started);

    cw_wait stop1 = cw_wait_stop(ctx, 42);
    cw_wait stop2 = cw_wait_stop(ctx, 43);
    ck_assert_int_eq(cw_poll(&stop1, 1), CW_ERR_WOULD_BLOCK);
    ck_assert_int_eq(cw_poll(&stop2, 1), CW_ERR_WOULD_BLOCK);
    ck_assert_int_eq(cw_wait_one(&stop1), CW_OK);
    ck_assert_int_eq(cw_wait_one(&stop2), CW_OK);

    cw_signal *sig = cw_stopped(ctx);
    int32_t value = 0;
    ck_assert_int_eq(cw_signal_wait(sig, &value), CW_OK);
    ck_assert_int_eq(value, 42); /* the first stop's value wins */
    cw_signal_release(sig);

    ck_assert_int_eq(cw_join(task, NULL), CW_OK);
    ck_assert_int_eq(counter, 1);
    cw_handle_release(task);

    cw_wait late = cw_wait_stop(ctx, 43);
    ck_assert_int_eq(cw_poll(&late, 1), 0);
    ck_assert_int_eq(late.result, CW_OK);
    return NULL;
}

CWC_CASE(shutdown_multiple_stop_calls, "signals", "SIG-004 SIG-006 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, multiple_stop_calls_root, NULL);
}

/* A stop is made when its wait is first tried, not when the wait is made
 * (SIG-006): a signal taken between the two is held before the stop, so
 * it resolves only at the try, and the stop waits for its release
 * (SIG-002). Had the stop been made with the wait, the signal would have
 * been taken after it: resolved at once, holding nothing back (SIG-003). */
static void *made_at_try_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_wait stop = cw_wait_stop(ctx, 7);
    cw_signal *sig = cw_stopped(ctx);
    int32_t value = 0;
    cw_wait held = cw_wait_signal(sig, &value);
    ck_assert_int_eq(cw_poll(&held, 1), CW_ERR_WOULD_BLOCK); /* no stop yet */
    ck_assert_int_eq(cw_poll(&stop, 1), CW_ERR_WOULD_BLOCK); /* made now; `sig` holds it */
    ck_assert_int_eq(cw_poll(&held, 1), 0);
    ck_assert_int_eq(value, 7);
    cw_signal_release(sig);
    ck_assert_int_eq(cw_poll(&stop, 1), 0);
    ck_assert_int_eq(stop.result, CW_OK);
    return NULL;
}

CWC_CASE(stop_is_made_at_its_first_try, "signals", "SIG-006 SIG-002 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, made_at_try_root, NULL);
}

static void *never_stopped(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_signal *s = cw_stopped(ctx);
    int32_t value = 0;
    cw_signal_wait(s, &value);
    ck_assert_msg(0, "the run ended before any stop: this must not be reached");
    return NULL;
}

static void *unfulfilled_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "before"), never_stopped, NULL));
    cw_yield(ctx);
    return NULL;
}

CWC_CASE(unfulfilled_shutdown, "signals", "SIG-001 RUN-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, unfulfilled_root, NULL);
}

/* A stop value is any int32_t: a signal held before the stop and one taken
 * after it both resolve with exactly the value given. The held signal's
 * wait comes first in the select that makes the stop, so it can complete
 * as soon as the stop takes effect there (SEL-001). */
static void *value_range_root(cw_ctx *ctx, void *arg)
{
    int32_t want = *(const int32_t *)arg, before = 0, after = 0;
    cw_signal *early = cw_stopped(ctx);
    cw_wait w[2] = {cw_wait_signal(early, &before), cw_wait_stop(ctx, want)};
    ck_assert_int_eq(cw_select(w, 2), 0);
    ck_assert_int_eq(before, want);
    cw_signal_release(early);
    ck_assert_int_eq(cw_wait_one(&w[1]), CW_OK);
    cw_signal *late = cw_stopped(ctx);
    ck_assert_int_eq(cw_signal_wait(late, &after), CW_OK);
    ck_assert_int_eq(after, want);
    cw_signal_release(late);
    return NULL;
}

CWC_CASE(stop_values_full_range, "signals", "SIG-001 SIG-003 SIG-006 SEL-001 SEL-004 RUN-008",
         CWC_REPEATED)
{
    static const int32_t values[] = {INT32_MIN, -1, 0, 100000, INT32_MAX};
    for (size_t i = 0; i < sizeof values / sizeof values[0]; i++)
        cwc_run_ok(NULL, value_range_root, (void *)&values[i]);
}
