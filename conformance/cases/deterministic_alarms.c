/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * deterministic_alarms.c - many alarms at once on a deterministic backend
 * (DET-005): with every task asleep the clock jumps to the earliest alarm,
 * whatever order the alarms were armed in, so each sleeper wakes exactly
 * at its own deadline.
 */
#include "cases/util.h"

#define DET CW_CAP_DETERMINISTIC
#define SLEEPERS 61

typedef struct sleeper {
    cw_time deadline, woke;
} sleeper;

static void *sleep_until_deadline(cw_ctx *ctx, void *arg)
{
    sleeper *s = arg;
    ck_assert_int_eq(cw_sleep_until(ctx, s->deadline), CW_OK);
    s->woke = cw_current(ctx);
    return NULL;
}

/* Deadlines 1 s apart, armed in an order that is neither rising nor
 * falling (k * 23 mod 61 visits every k once), so a heap that misplaces
 * an element is bound to pop a later alarm before an earlier one. */
static void *alarms_root(cw_ctx *ctx, void *arg)
{
    sleeper *s = arg;
    cw_time start = cw_current(ctx);
    cw_handle *h[SLEEPERS];
    for (int i = 0; i < SLEEPERS; i++) {
        s[i].deadline = start + (cw_time)(1 + (i * 23) % SLEEPERS) * CW_SEC;
        h[i] = cw_spawn(cw_child(ctx, "sleeper"), sleep_until_deadline, &s[i]);
    }
    for (int i = 0; i < SLEEPERS; i++) {
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    return NULL;
}

CWC_CASE(det_alarms_wake_at_their_deadlines, "deterministic", "DET-005 CLK-002 RUN-008",
         DET | CWC_REPEATED)
{
    sleeper s[SLEEPERS];
    cwc_run_ok(NULL, alarms_root, s);
    for (int i = 0; i < SLEEPERS; i++)
        ck_assert_msg(s[i].woke == s[i].deadline, "sleeper %d: deadline %llu, woke at %llu", i,
                      (unsigned long long)s[i].deadline, (unsigned long long)s[i].woke);
}
