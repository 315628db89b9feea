/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * deterministic_order.c - the order of the ready queue where a reader of
 * spec/11-deterministic.md could have chosen otherwise (DET-004, DET-018
 * to DET-021). Each workload is built so that the only draws are the
 * shuffles of step 3; the case predicts every resumption from the text
 * alone (the PRNG of vrng.h, the shuffle, the rule under test) and
 * compares it with the process_task events the backend hands to
 * cfg.event_log (DET-016), over many seeds. A backend that took another
 * reading of the rule resumes the same tasks in another order for most
 * seeds, so the case names the first seed where they part.
 */
#include <string.h>

#include "cases/util.h"
#include "cases/vrng.h"

#define AUDITED (CW_CAP_DETERMINISTIC | CW_CAP_AUDIT)
#define SEEDS 24
#define MAX_RESUMED 64

/* ---- What the backend did: the task of each process_task ------------------------------ */

typedef struct resumed {
    uint64_t id[MAX_RESUMED];
    size_t n;
} resumed;

static void record_resumption(void *arg, const cw_event *e)
{
    resumed *r = arg;
    if (strcmp(e->label, "process_task") != 0 || e->nfields < 1 || e->fields[0].len != 16)
        return;
    const uint8_t *be = e->fields[0].data;
    uint64_t id = 0;
    for (int i = 8; i < 16; i++) /* ids fit in the low 8 of the 16 bytes */
        id = id << 8 | be[i];
    if (r->n < MAX_RESUMED)
        r->id[r->n] = id;
    r->n++;
}

/* A fast cycle, so that iterations never reach a sleep's deadline. */
static cw_config order_config(uint64_t seed, resumed *r)
{
    cw_config cfg = cwc_config();
    cfg.seed = seed;
    cfg.cycle = 1;
    cfg.audit = true;
    cfg.event_log = record_resumption;
    cfg.event_log_arg = r;
    memset(r, 0, sizeof *r);
    return cfg;
}

/* ---- What the spec says: batches and their shuffle (step 3) --------------------------- */

typedef struct model {
    vrng rng;
    uint64_t id[MAX_RESUMED];
    size_t n;
} model;

static void model_begin(model *m, uint64_t seed)
{
    vrng_seed(&m->rng, seed);
    m->n = 0;
}

/* One iteration: the queue `q[0..n)` in the order its tasks entered it,
 * shuffled as step 3 says (in place, so the caller sees the run order). */
static void model_batch(model *m, uint64_t *q, size_t n)
{
    for (size_t i = n; i-- > 1;) {
        size_t j = (size_t)vrng_below(&m->rng, i + 1);
        uint64_t t = q[i];
        q[i] = q[j];
        q[j] = t;
    }
    for (size_t i = 0; i < n && m->n < MAX_RESUMED; i++)
        m->id[m->n++] = q[i];
}

static void model_one(model *m, uint64_t id)
{
    model_batch(m, &id, 1);
}

static void same_resumptions(uint64_t seed, const resumed *got, const model *want, const char *rule)
{
    ck_assert_msg(got->n == want->n, "seed %llu: %zu resumptions, %s gives %zu",
                  (unsigned long long)seed, got->n, rule, want->n);
    for (size_t i = 0; i < want->n; i++)
        ck_assert_msg(got->id[i] == want->id[i],
                      "seed %llu: resumption %zu is task %llu, %s gives task %llu",
                      (unsigned long long)seed, i, (unsigned long long)got->id[i], rule,
                      (unsigned long long)want->id[i]);
}

/* Run `root` under each of SEEDS seeds and require the resumptions that
 * `predict`, the model of `rule`, gives for that seed. */
static void resumptions_follow(cw_task_fn root, void (*predict)(model *, uint64_t),
                               const char *rule)
{
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        resumed got;
        cw_config cfg = order_config(seed, &got);
        cwc_run_ok(&cfg, root, NULL);
        model want;
        predict(&want, seed);
        same_resumptions(seed, &got, &want, rule);
    }
}

/* ---- DET-018: an ending task's joiners, then its subtree ------------------------------ */

/* T (task 1) derives c1 then c2 and spawns a task from each (4, 5); c1's
 * task derives g and spawns from it (6). J1 and J2 (2, 3) join T. The
 * root aborts T once every task is parked. */
static void *cascade_leaf_parent(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "g"), cwc_pending_task, NULL));
    return cwc_pending_task(ctx, NULL);
}

static void *cascade_top(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "c1"), cascade_leaf_parent, NULL));
    cw_handle_release(cw_spawn(cw_child(ctx, "c2"), cwc_pending_task, NULL));
    return cwc_pending_task(ctx, NULL);
}

static void *cascade_joiner(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    ck_assert_int_eq(cw_join(arg, NULL), CW_ERR_CLOSED);
    return NULL;
}

static void *cascade_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *t = cw_spawn(cw_child(ctx, "t"), cascade_top, NULL);
    cw_handle *j1 = cw_spawn(cw_child(ctx, "j"), cascade_joiner, t);
    cw_handle *j2 = cw_spawn(cw_child(ctx, "j"), cascade_joiner, t);
    cw_sleep(ctx, CW_SEC); /* every other task runs until it parks */
    cw_abort(t);
    ck_assert_int_eq(cw_join(j1, NULL), CW_OK);
    ck_assert_int_eq(cw_join(j2, NULL), CW_OK);
    cw_handle_release(j1);
    cw_handle_release(j2);
    cw_handle_release(t);
    return NULL;
}

static void cascade_model(model *m, uint64_t seed)
{
    model_begin(m, seed);
    model_one(m, 0);               /* spawns 1, 2, 3 and sleeps */
    uint64_t first[3] = {1, 2, 3}; /* T spawns 4 then 5; J1, J2 arm their joins */
    model_batch(m, first, 3);      /* in the order they run */
    uint64_t second[2] = {4, 5};   /* c1 spawns 6 */
    model_batch(m, second, 2);
    model_one(m, 6);
    model_one(m, 0); /* the sleep's alarm: the root aborts T alone */
    model_one(m, 1); /* T unwinds and ends */
    uint64_t ended[5] = {0}, k = 0;
    for (int i = 0; i < 3; i++) /* its joiners, in the order they armed */
        if (first[i] != 1)
            ended[k++] = first[i];
    ended[k++] = 5; /* then its subtree: c2, derived last, first */
    ended[k++] = 4;
    ended[k++] = 6;
    model_batch(m, ended, 5); /* J1's end wakes the root */
    model_one(m, 0);
}

CWC_CASE(det_abort_cascade_queue_order, "deterministic", "DET-018 TASK-005 RUN-008",
         AUDITED | CWC_REPEATED)
{
    resumptions_follow(cascade_root, cascade_model,
                       "DET-018 (joiners, then the subtree newest first)");
}

/* ---- DET-019: a change wakes every wait armed on the object --------------------------- */

static void *blocked_sender(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    char unit = 1;
    ck_assert_int_eq(cw_chan_send(arg, &unit), CW_OK);
    return NULL;
}

/* A channel of capacity 1, full, and two senders (1, 2) waiting on it. */
static void *waiters_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_chan *ch = cw_chan_new(ctx, 1, 1);
    char unit = 0;
    ck_assert_int_eq(cw_chan_send(ch, &unit), CW_OK);
    cw_handle *s1 = cw_spawn(cw_child(ctx, "s"), blocked_sender, ch);
    cw_handle *s2 = cw_spawn(cw_child(ctx, "s"), blocked_sender, ch);
    cw_sleep(ctx, CW_SEC);
    ck_assert_int_eq(cw_chan_recv(ch, &unit), CW_OK); /* room for one: both woken */
    cw_sleep(ctx, CW_SEC);
    ck_assert_int_eq(cw_chan_recv(ch, &unit), CW_OK); /* wakes the one still waiting */
    ck_assert_int_eq(cw_chan_recv(ch, &unit), CW_OK); /* waits for its value */
    ck_assert_int_eq(cw_join(s1, NULL), CW_OK);
    ck_assert_int_eq(cw_join(s2, NULL), CW_OK);
    cw_handle_release(s1);
    cw_handle_release(s2);
    cw_chan_sender_drop(ch);
    cw_chan_receiver_drop(ch);
    return NULL;
}

static void waiters_model(model *m, uint64_t seed)
{
    model_begin(m, seed);
    model_one(m, 0);
    uint64_t armed[2] = {1, 2};
    model_batch(m, armed, 2); /* both wait, armed in this order */
    model_one(m, 0);          /* one receive wakes both */
    uint64_t woken[2] = {armed[0], armed[1]};
    model_batch(m, woken, 2); /* the first sends, the second finds it full and waits again */
    model_one(m, 0);          /* a receive wakes it; the root waits for its value */
    model_one(m, woken[1]);
    model_one(m, 0);
}

CWC_CASE(det_every_waiter_woken, "deterministic", "DET-019 CHN-002 RUN-008", AUDITED | CWC_REPEATED)
{
    resumptions_follow(waiters_root, waiters_model,
                       "DET-019 (every send wait woken, in arm order)");
}

/* ---- DET-020: a kept wake through a yield, a select, and a queued wake ----------------- */

static void *kept_wake_helper(cw_ctx *ctx, void *arg)
{
    cw_waker *w = arg;
    cw_sleep_until(ctx, 3 * CW_SEC);
    cw_waker_wake(w);
    cw_sleep_until(ctx, 5 * CW_SEC);
    cw_waker_wake(w); /* queues the parked root */
    cw_waker_wake(w); /* counts for the same park */
    cw_sleep_until(ctx, 7 * CW_SEC);
    cw_waker_wake(w);
    cw_waker_release(w);
    return NULL;
}

static void *kept_wake_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_waker *w = cw_waker_current(ctx);
    cw_handle *h = cw_spawn(cw_child(ctx, "helper"), kept_wake_helper, cw_waker_current(ctx));

    cw_waker_wake(w);
    cw_yield(ctx);
    cw_park(ctx); /* the wake survived the yield: at once, or the run stalls */
    ck_assert_msg(cw_current(ctx) < CW_SEC, "a kept wake did not survive cw_yield");

    cw_waker_wake(w);
    cw_sleep(ctx, CW_SEC); /* a select that suspends takes the wake */
    cw_park(ctx);
    ck_assert_msg(cw_current(ctx) >= 3 * CW_SEC,
                  "cw_park returned at %llu ns: the wake cw_sleep took was kept for it",
                  (unsigned long long)cw_current(ctx));

    cw_park(ctx); /* woken twice at 5 s */
    cw_park(ctx);
    ck_assert_msg(cw_current(ctx) >= 7 * CW_SEC,
                  "cw_park returned at %llu ns: a second wake of a queued park was kept",
                  (unsigned long long)cw_current(ctx));
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    cw_waker_release(w);
    return NULL;
}

CWC_CASE(det_kept_wake_through_yield_and_select, "deterministic", "DET-020 TASK-009 RUN-008",
         CW_CAP_DETERMINISTIC | CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.cycle = 1;
    cwc_run_ok(&cfg, kept_wake_root, NULL);
}

/* ---- DET-021: an alarm armed again goes behind ---------------------------------------- */

typedef struct alarms_run {
    cw_chan *ch;
    char log[4];
    int n;
} alarms_run;

/* Armed at 0 s for 10 s, woken early at 5 s, armed again for 10 s. */
static void *rearmed(cw_ctx *ctx, void *arg)
{
    alarms_run *a = arg;
    char unit;
    cw_wait w[2];
    w[0] = cw_wait_recv(a->ch, &unit);
    w[1] = cw_wait_sleep_until(ctx, 10 * CW_SEC);
    ck_assert_int_eq(cw_select(w, 2), 0);
    cw_sleep_until(ctx, 10 * CW_SEC);
    a->log[a->n++] = 'A';
    return NULL;
}

/* Armed at 1 s for 10 s, once. */
static void *armed_once(cw_ctx *ctx, void *arg)
{
    alarms_run *a = arg;
    cw_sleep_until(ctx, CW_SEC);
    cw_sleep_until(ctx, 10 * CW_SEC);
    a->log[a->n++] = 'B';
    return NULL;
}

static void *early_waker(cw_ctx *ctx, void *arg)
{
    alarms_run *a = arg;
    char unit = 1;
    cw_sleep_until(ctx, 5 * CW_SEC);
    ck_assert_int_eq(cw_chan_send(a->ch, &unit), CW_OK);
    return NULL;
}

static void *alarms_root(cw_ctx *ctx, void *arg)
{
    alarms_run *a = arg;
    a->ch = cw_chan_new(ctx, 1, 1);
    cw_handle *h[3];
    h[0] = cw_spawn(cw_child(ctx, "a"), rearmed, a);
    h[1] = cw_spawn(cw_child(ctx, "b"), armed_once, a);
    h[2] = cw_spawn(cw_child(ctx, "c"), early_waker, a);
    for (int i = 0; i < 3; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    cw_chan_sender_drop(a->ch);
    cw_chan_receiver_drop(a->ch);
    return NULL;
}

CWC_CASE(det_rearmed_alarm_goes_behind, "deterministic", "DET-021 DET-005 RUN-008",
         CW_CAP_DETERMINISTIC | CWC_REPEATED)
{
    for (uint64_t seed = 0; seed < SEEDS; seed++) {
        alarms_run a;
        memset(&a, 0, sizeof a);
        cw_config cfg = cwc_config();
        cfg.seed = seed;
        cfg.cycle = 1;
        cwc_run_ok(&cfg, alarms_root, &a);
        /* The only draws: the first batch of three (two), then the batch
         * the 10 s alarms make, B (armed at 1 s) before A (armed at 5 s). */
        model m;
        model_begin(&m, seed);
        uint64_t first[3] = {1, 2, 3};
        model_batch(&m, first, 3);
        uint64_t due[2] = {'B', 'A'};
        model_batch(&m, due, 2);
        char want[3] = {(char)due[0], (char)due[1], 0};
        ck_assert_msg(!strcmp(a.log, want),
                      "seed %llu: the 10 s alarms woke %s, DET-021 (last armed last) gives %s",
                      (unsigned long long)seed, a.log, want);
    }
}

/* ---- DET-004: a task aborted before it ran is resumed once ---------------------------- */

static void *never_runs(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    *(bool *)arg = true;
    return NULL;
}

static void *abort_unstarted_root(cw_ctx *ctx, void *arg)
{
    cw_handle *h = cw_spawn(cw_child(ctx, "x"), never_runs, arg);
    cw_abort(h);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_CLOSED);
    cw_handle_release(h);
    return NULL;
}

CWC_CASE(det_aborted_before_it_ran_is_resumed, "deterministic", "DET-004 TASK-002 RUN-008",
         AUDITED | CWC_REPEATED)
{
    resumed got;
    bool ran = false;
    cw_config cfg = order_config(7, &got);
    cwc_run_ok(&cfg, abort_unstarted_root, &ran);
    ck_assert_msg(!ran, "an aborted task's function ran");
    model want;
    model_begin(&want, 7);
    model_one(&want, 0);
    model_one(&want, 1); /* its turn: process_task, then it ends without running */
    model_one(&want, 0);
    same_resumptions(7, &got, &want, "DET-004 (an event for its turn)");
}

/* ---- Step 4: the root's end ends its batch at once ------------------------------------ */

typedef struct root_tally {
    bool root_done; /* the root is about to return */
    int ran_after;  /* tasks resumed after that */
} root_tally;

static void *count_if_after_root(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    root_tally *t = arg;
    t->ran_after += t->root_done;
    return NULL;
}

/* Eight tasks queued, then the root yields: it and they make one batch,
 * and it returns at its turn there. */
static void *root_in_a_batch(cw_ctx *ctx, void *arg)
{
    root_tally *t = arg;
    for (int i = 0; i < 8; i++)
        cw_handle_release(cw_spawn(cw_child(ctx, "b"), count_if_after_root, arg));
    cw_yield(ctx);
    t->root_done = true;
    return NULL;
}

CWC_CASE(det_root_end_ends_its_batch, "deterministic", "DET-003 RUN-001 RUN-008",
         CW_CAP_DETERMINISTIC | CWC_REPEATED)
{
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        root_tally t = {false, 0};
        cw_config cfg = cwc_config();
        cfg.seed = seed;
        cwc_run_ok(&cfg, root_in_a_batch, &t);
        ck_assert_msg(t.ran_after == 0,
                      "seed %llu: %d task(s) of the root's batch were resumed after the root "
                      "ended (step 4 stops the iteration at once)",
                      (unsigned long long)seed, t.ran_after);
    }
}

/* ---- Step 4: a panic that ends the run ends its batch at once -------------------------- */

typedef struct batch_tally {
    int panicked;  /* tasks of the batch that panicked */
    int ran_after; /* tasks of the batch resumed after that */
} batch_tally;

static void *panic_if_first(cw_ctx *ctx, void *arg)
{
    batch_tally *t = arg;
    if (t->panicked++ == 0)
        cw_panic(ctx, "the first of its batch");
    t->ran_after++;
    return NULL;
}

static void *one_batch_root(cw_ctx *ctx, void *arg)
{
    cw_handle *h[8];
    for (int i = 0; i < 8; i++) /* all queued while the root runs: one batch */
        h[i] = cw_spawn(cw_child(ctx, "b"), panic_if_first, arg);
    for (int i = 0; i < 8; i++) {
        cw_join(h[i], NULL);
        cw_handle_release(h[i]);
    }
    return NULL;
}

CWC_CASE(det_panic_ends_its_batch, "deterministic", "DET-003 PAN-001 RUN-008",
         CW_CAP_DETERMINISTIC | CWC_REPEATED)
{
    for (uint64_t seed = 1; seed <= SEEDS; seed++) {
        batch_tally t = {0, 0};
        cw_config cfg = cwc_config();
        cfg.seed = seed;
        cw_run_result res;
        ck_assert_int_eq(cwc_run(&cfg, one_batch_root, &t, &res), CW_ERR_PANICKED);
        ck_assert_msg(t.panicked == 1 && t.ran_after == 0,
                      "seed %llu: after the panic that ended the run, %d more task(s) of its "
                      "batch were resumed (step 4 stops the iteration at once)",
                      (unsigned long long)seed, t.panicked - 1);
    }
}
