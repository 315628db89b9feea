/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * deterministic.c - what a deterministic backend promises: reproducible
 * schedules and digests, virtual time, stall and timeout detection
 * (spec/11-deterministic.md). Skipped on backends without the capability.
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases/golden.h"
#include "cases/util.h"

#define DET CW_CAP_DETERMINISTIC
#define NRACERS 10

/* Each racer yields a few times and then reports: the completion order is
 * decided by the scheduler's shuffles alone. */
static void *racer(cw_ctx *ctx, void *arg)
{
    cw_chan *done = arg;
    int id = (int)cw_random_u64(ctx) % 1000; /* audited, seeded draw */
    for (int i = 0; i < 5; i++)
        cw_yield(ctx);
    ck_assert_int_eq(cw_chan_send(done, &id), CW_OK);
    return NULL;
}

struct race_outcome {
    int order[NRACERS];
    char digest[65];
};

static void *race_root(cw_ctx *ctx, void *arg)
{
    struct race_outcome *out = arg;
    cw_chan *done = cw_chan_new(ctx, sizeof(int), 0);
    for (int i = 0; i < NRACERS; i++)
        cw_handle_release(cw_spawn(cw_child(ctx, "task"), racer, done));
    for (int i = 0; i < NRACERS; i++)
        ck_assert_int_eq(cw_chan_recv(done, &out->order[i]), CW_OK);
    ck_assert_int_eq(cw_audit_digest(ctx, out->digest), CW_OK);
    return NULL;
}

static struct race_outcome race(uint64_t seed)
{
    struct race_outcome out;
    memset(&out, 0, sizeof out);
    cw_config cfg = cwc_config();
    cfg.seed = seed;
    cwc_run_ok(&cfg, race_root, &out);
    return out;
}

/* Run the race in a fresh process, so nothing but the seed is shared. */
static struct race_outcome race_in_child(uint64_t seed)
{
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        struct race_outcome out = race(seed);
        ssize_t n = write(fds[1], &out, sizeof out);
        _exit(n == (ssize_t)sizeof out ? 0 : 1);
    }
    close(fds[1]);
    struct race_outcome out;
    ck_assert_int_eq(read(fds[0], &out, sizeof out), (ssize_t)sizeof out);
    close(fds[0]);
    int status = 0;
    waitpid(pid, &status, 0);
    ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    return out;
}

CWC_CASE(same_seed_same_order, "deterministic", "DET-001 DET-003", DET)
{
    for (uint64_t seed = 0; seed < 20; seed++) {
        struct race_outcome a = race_in_child(seed), b = race_in_child(seed);
        ck_assert_str_eq(a.digest, b.digest);
        ck_assert_mem_eq(a.order, b.order, sizeof a.order);
    }
}

CWC_CASE(different_seeds_different_order, "deterministic", "DET-002 RUN-008", DET | CWC_REPEATED)
{
    struct race_outcome a = race(12345), b = race(54321);
    ck_assert_str_ne(a.digest, b.digest);
    ck_assert(memcmp(a.order, b.order, sizeof a.order) != 0);
}

/* The digest of this fixed workload is part of the specification: a change
 * to the PRNG, the shuffle, the clock or the audit encoding changes it. */
#define GOLDEN_SEED 42
#define GOLDEN_DIGEST "437195b0c48f268536b4b049384cd8db953172e01ac4d1b7f2c9cb0015837de1"

CWC_CASE(golden_digest, "deterministic", "DET-003 DET-004 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.seed = GOLDEN_SEED;
    struct race_outcome out;
    memset(&out, 0, sizeof out);
    cw_run_result res;
    ck_assert_int_eq(cw_start(cwc_backend, &cfg, race_root, &out, &res), CW_OK);
    cwc_golden("golden_digest", res.digest, GOLDEN_DIGEST);
}

static void *stall_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "stuck"), cwc_pending_task, NULL));
    return cwc_pending_task(ctx, NULL);
}

CWC_CASE(stall_names_blocked_tasks, "deterministic", "DET-006 RUN-008", DET | CWC_REPEATED)
{
    cw_run_result res;
    ck_assert_int_eq(cwc_run(NULL, stall_root, NULL, &res), CW_ERR_STALLED);
    ck_assert_ptr_nonnull(strstr(res.message, "runtime stalled"));
    ck_assert_ptr_nonnull(strstr(res.message, "root#"));
    ck_assert_ptr_nonnull(strstr(res.message, "stuck#"));
}

/* A waker of the root, held by the program outside the run and never
 * woken: the run does not wait for a wake from outside, it stalls
 * [DET-006]. A backend that waits while such a waker is held hangs here. */
static cw_waker *held_outside;

static void *held_waker_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    held_outside = cw_waker_current(ctx);
    for (;;)
        cw_park(ctx);
    return NULL;
}

CWC_CASE(stall_with_a_waker_held_outside, "deterministic", "DET-006 TASK-010 RUN-008",
         DET | CWC_REPEATED)
{
    cw_run_result res;
    ck_assert_int_eq(cwc_run(NULL, held_waker_root, NULL, &res), CW_ERR_STALLED);
    ck_assert_ptr_nonnull(strstr(res.message, "root#0"));
    ck_assert_ptr_nonnull(held_outside);
    cw_waker_wake(held_outside); /* after the run: does nothing [TASK-010] */
    cw_waker_release(held_outside);
}

#define CROWD 20

static void *crowd_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (int i = 0; i < CROWD; i++)
        cw_handle_release(cw_spawn(cw_child(ctx, "stuck"), cwc_pending_task, NULL));
    return cwc_pending_task(ctx, NULL);
}

/* Blocked tasks whose names together run far past result.message: the
 * message is cut at its size, and nothing after it in the result is
 * touched [DET-006]. */
static void *long_names_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (int i = 0; i < CROWD; i++)
        cw_handle_release(
            cw_spawn(cw_child(ctx, "a_label_long_enough_that_twenty_of_them_overrun_the_message"),
                     cwc_pending_task, NULL));
    return cwc_pending_task(ctx, NULL);
}

CWC_CASE(stall_message_cut_to_its_size, "deterministic", "DET-006 RUN-008", DET | CWC_REPEATED)
{
    cw_run_result res;
    memset(&res, 0x5a, sizeof res);
    cw_config cfg = cwc_config();
    cfg.audit = false; /* so the digest after the message must come back "" */
    ck_assert_int_eq(cwc_run(&cfg, long_names_root, NULL, &res), CW_ERR_STALLED);
    ck_assert(memchr(res.message, '\0', sizeof res.message) != NULL);
    static const char head[] = "runtime stalled: no task can make progress; blocked: root#0 ";
    ck_assert(strncmp(res.message, head, sizeof head - 1) == 0);
    ck_assert_str_eq(res.digest, "");
}

/* Every blocked task is named, in ascending id, or the count of those not
 * named closes the message. */
CWC_CASE(stall_names_every_blocked_task, "deterministic", "DET-006 RUN-008", DET | CWC_REPEATED)
{
    cw_run_result res;
    ck_assert_int_eq(cwc_run(NULL, crowd_root, NULL, &res), CW_ERR_STALLED);
    ck_assert_ptr_nonnull(strstr(res.message, "root#0"));
    const char *at = strstr(res.message, "root#0");
    size_t named = 1;
    char want[32];
    for (int id = 1; id <= CROWD; id++, named++) {
        snprintf(want, sizeof want, "stuck#%d", id);
        const char *next = strstr(at, want);
        if (!next)
            break;
        at = next;
    }
    const char *more = strstr(res.message, "(and ");
    size_t rest = 0;
    if (more)
        ck_assert_int_eq(sscanf(more, "(and %zu more)", &rest), 1);
    ck_assert_uint_eq(named + rest, CROWD + 1);
    size_t want_named = rest == 0 ? CROWD + 1 : 16; /* all, or exactly the first 16 */
    ck_assert_uint_eq(named, want_named);
}

static void *sleep_loop_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (;;)
        cw_sleep(ctx, CW_SEC);
    return NULL;
}

/* The deadline is the start plus the timeout, from the epoch and from a
 * later configured start alike. */
CWC_CASE(run_timeout, "deterministic", "DET-007 RUN-005 RUN-008", DET | CWC_REPEATED)
{
    const cw_time starts[] = {0, 7 * CW_SEC};
    for (size_t i = 0; i < sizeof starts / sizeof starts[0]; i++) {
        cw_config cfg = cwc_config();
        cfg.start_time = starts[i];
        cfg.timeout = 10 * CW_SEC;
        cw_run_result res;
        ck_assert_int_eq(cwc_run(&cfg, sleep_loop_root, NULL, &res), CW_ERR_RUN_TIMEOUT);
        ck_assert_str_eq(res.message, "runtime timeout");
        ck_assert_uint_eq(res.end_time, starts[i] + 10 * CW_SEC);
    }
}

static void *mark_root(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    *(int *)arg = 1;
    return arg;
}

/* A timeout of 0 puts the deadline at the start: the run times out before
 * its first iteration (step 2 comes before step 3), so the root, which
 * would have returned at once, never runs, and the clock never moved. */
CWC_CASE(run_timeout_zero_runs_nothing, "deterministic", "DET-007 RUN-005 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.timeout = 0;
    cfg.start_time = 7 * CW_SEC;
    int ran = 0;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, mark_root, &ran, &res), CW_ERR_RUN_TIMEOUT);
    ck_assert_str_eq(res.message, "runtime timeout");
    ck_assert_msg(ran == 0, "a run with a timeout of 0 ran its root");
    ck_assert_ptr_null(res.value);
    ck_assert_uint_eq(res.end_time, 7 * CW_SEC);
    ck_assert_uint_eq(res.iterations, 0);
}

static void *skip_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_uint_eq(cw_current(ctx), 100 * CW_SEC); /* the configured start */
    ck_assert_int_eq(cw_sleep(ctx, CW_SEC), CW_OK);
    ck_assert_uint_eq(cw_current(ctx), 101 * CW_SEC); /* jumped straight to the alarm */
    cw_yield(ctx);
    ck_assert_uint_eq(cw_current(ctx), 101 * CW_SEC + CW_MSEC); /* one cycle per iteration */
    return NULL;
}

CWC_CASE(virtual_time_skips_idle, "deterministic", "DET-005 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.start_time = 100 * CW_SEC;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, skip_root, NULL, &res), CW_OK);
    ck_assert_uint_lt(res.iterations, 10);
}

CWC_CASE(bad_config, "runner", "RUN-002 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.cycle = 0;
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, cwc_return_42, NULL, &res), CW_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(res.message, "cycle"));
    cfg = cwc_config();
    cfg.stack_size = 0;
    ck_assert_int_eq(cwc_run(&cfg, cwc_return_42, NULL, &res), CW_ERR_INVALID);
    ck_assert_ptr_nonnull(strstr(res.message, "stack"));
}

/* Alarms due at the same instant wake first armed first (11-deterministic.md,
 * step 7): four sleepers arm the same deadline in the order the first
 * batch's shuffle gives them, and the order they are woken in is the queue
 * the next shuffle permutes, so the digest depends on the tie-break. */
#define TIE_SEED 9
#define TIE_DIGEST "72f14b79d55e38ad0a71ba54e747c56ac297fd79955428f811226263791421fa"
#define TIE_SLEEPERS 4

static void *tie_sleeper(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_int_eq(cw_sleep_until(ctx, 5000000), CW_OK);
    cw_yield(ctx);
    return NULL;
}

static void *tie_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h[TIE_SLEEPERS];
    for (int i = 0; i < TIE_SLEEPERS; i++)
        h[i] = cw_spawn(cw_child(ctx, "sleeper"), tie_sleeper, NULL);
    for (int i = 0; i < TIE_SLEEPERS; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    return NULL;
}

CWC_CASE(alarm_ties_first_armed_first, "deterministic", "DET-003 DET-004 RUN-008",
         DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.seed = TIE_SEED;
    cw_run_result res;
    ck_assert_int_eq(cw_start(cwc_backend, &cfg, tie_root, NULL, &res), CW_OK);
    cwc_golden("alarm_ties_first_armed_first", res.digest, TIE_DIGEST);
}

/* The stall message word for word (DET-006): the root, a task spawned
 * from a child context, and one spawned from a child of that one. */
static void *stall_nested(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "b"), cwc_pending_task, NULL));
    return cwc_pending_task(ctx, NULL);
}

static void *stall_exact_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "a"), stall_nested, NULL));
    return cwc_pending_task(ctx, NULL);
}

CWC_CASE(stall_message_word_for_word, "deterministic", "DET-006 RUN-008", DET | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, stall_exact_root, NULL, &res), CW_ERR_STALLED);
    ck_assert_str_eq(res.message,
                     "runtime stalled: no task can make progress; blocked: root#0 a#1 a_b#2");
}

#define LONG_LABEL 900

static void *stall_labelled_root(cw_ctx *ctx, void *arg)
{
    cw_handle_release(cw_spawn(cw_child(ctx, arg), cwc_pending_task, NULL));
    return cwc_pending_task(ctx, NULL);
}

/* A run's result followed by bytes of the caller's that it must not touch. */
struct guarded_result {
    cw_run_result res;
    unsigned char guard[1024];
};

static void stall_with_label(const char *label, struct guarded_result *out)
{
    memset(out, 0x5a, sizeof *out);
    ck_assert_int_eq(cwc_run(NULL, stall_labelled_root, (void *)label, &out->res), CW_ERR_STALLED);
    for (size_t i = 0; i < sizeof out->guard; i++)
        CWC_REQUIRE(out->guard[i] == 0x5a, "the stall message ran past the result at %zu", i);
}

/* A stall message longer than result.message is cut to it, NUL and all,
 * and the result's other fields are the run's (DET-006: "may be cut at
 * result.message's size"): those of the same stall with a short label. */
CWC_CASE(stall_message_cut_to_its_buffer, "deterministic", "DET-006 RUN-008", DET | CWC_REPEATED)
{
    static char label[LONG_LABEL + 1];
    memset(label, 'a', LONG_LABEL);
    static struct guarded_result short_run, long_run;
    stall_with_label("a", &short_run);
    stall_with_label(label, &long_run);
    const cw_run_result *s = &short_run.res, *l = &long_run.res;
    ck_assert_ptr_nonnull(memchr(l->message, '\0', sizeof l->message));
    ck_assert_str_eq(s->message, "runtime stalled: no task can make progress; blocked: root#0 a#1");
    ck_assert_int_eq(strncmp(l->message, s->message, strlen(s->message) - 2), 0);
    ck_assert_uint_eq(l->end_time, s->end_time);
    ck_assert_uint_eq(l->iterations, s->iterations);
    ck_assert_ptr_nonnull(memchr(l->digest, '\0', sizeof l->digest));
    ck_assert_uint_eq(strlen(l->digest), strlen(s->digest));
    ck_assert_uint_eq(strspn(l->digest, "0123456789abcdef"), strlen(l->digest));
}
