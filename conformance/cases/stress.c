/*
 * stress.c - many tasks spawning, sleeping, aborting and joining at once
 * (spec/04-tasks.md). On a parallel backend they do so across threads.
 */
#include <stdatomic.h>
#include <stdlib.h>

#include "cases/util.h"

enum { STRESS_TASKS = 10000, STRESS_CHILDREN = 4 };

struct stress {
    atomic_int started, finished, cleaned;
};

static void count_cleanup(void *arg)
{
    struct stress *s = arg;
    atomic_fetch_add(&s->cleaned, 1);
}

static void *stress_leaf(cw_ctx *ctx, void *arg)
{
    struct stress *s = arg;
    atomic_fetch_add(&s->started, 1);
    CW_CLEANUP_PUSH(ctx, count_cleanup, s);
    cw_sleep(ctx, (cw_duration)(cw_random_u64(ctx) % 3) * CW_MSEC);
    if (cw_random_u64(ctx) % 2)
        cw_yield(ctx);
    CW_CLEANUP_POP(ctx, true);
    atomic_fetch_add(&s->finished, 1);
    return (void *)(intptr_t)1;
}

/* A middle task spawns leaves, aborts some, joins all: each handle must
 * resolve exactly once, to OK or to CLOSED. */
static void *stress_middle(cw_ctx *ctx, void *arg)
{
    struct stress *s = arg;
    cw_handle *h[STRESS_CHILDREN];
    for (int i = 0; i < STRESS_CHILDREN; i++)
        h[i] = cw_spawn(cw_child(ctx, "leaf"), stress_leaf, s);
    if (cw_random_u64(ctx) % 2)
        cw_abort(h[0]);
    long ok = 0;
    for (int i = 0; i < STRESS_CHILDREN; i++) {
        void *v = NULL;
        int rc = cw_join(h[i], &v);
        ck_assert_msg(rc == CW_OK || rc == CW_ERR_CLOSED, "join gave %s", cw_strerror(rc));
        ck_assert(rc != CW_OK || v == (void *)(intptr_t)1);
        ok += rc == CW_OK;
        cw_handle_release(h[i]);
    }
    return (void *)(intptr_t)ok;
}

static void *stress_root(cw_ctx *ctx, void *arg)
{
    struct stress *s = arg;
    enum { MIDDLES = STRESS_TASKS / (STRESS_CHILDREN + 1) };
    cw_handle **h = calloc(MIDDLES, sizeof *h);
    ck_assert_ptr_nonnull(h);
    for (int i = 0; i < MIDDLES; i++)
        h[i] = cw_spawn(cw_child(ctx, "middle"), stress_middle, s);
    for (int i = 0; i < MIDDLES; i += 7) /* abort some middles and so their leaves */
        cw_abort(h[i]);
    for (int i = 0; i < MIDDLES; i++) {
        int rc = cw_join(h[i], NULL);
        ck_assert_msg(rc == CW_OK || rc == CW_ERR_CLOSED, "join gave %s", cw_strerror(rc));
        /* Joining again gives the same answer: resolved exactly once. */
        ck_assert_int_eq(cw_join(h[i], NULL), rc);
        cw_handle_release(h[i]);
    }
    free(h);
    return NULL;
}

CWC_CASE(stress_spawn_sleep_abort_join, "tasks", "TASK-002 TASK-005 TASK-008 RUN-003", 0)
{
    struct stress s;
    atomic_init(&s.started, 0);
    atomic_init(&s.finished, 0);
    atomic_init(&s.cleaned, 0);
    cwc_run_ok(NULL, stress_root, &s);
    /* Every leaf that started either finished or was unwound, and each ran
     * its cleanup exactly once: no task was leaked or run twice. */
    ck_assert_int_eq(atomic_load(&s.cleaned), atomic_load(&s.started));
    ck_assert_int_ge(atomic_load(&s.finished), 0);
    ck_assert_int_le(atomic_load(&s.finished), atomic_load(&s.started));
}
