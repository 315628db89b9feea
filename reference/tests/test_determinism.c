/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The determinism check (reference/cwrt/determinism.c): a program that is
 * a function of its seed passes; one that reads a global an earlier run
 * left behind is caught, and the report names the first event where the
 * two runs parted, with both sides of it.
 */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "cwrt/cwrt.h"

static void *worker(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (int i = 0; i < 3; i++)
        cw_yield(ctx);
    return NULL;
}

/* Spawns, yields and draws, the same way under the same seed. */
static void *steady(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h = cw_spawn(cw_child(ctx, "worker"), worker, NULL);
    uint8_t b[8];
    cw_random(ctx, b, sizeof b);
    cw_sleep(ctx, (cw_duration)(b[0] % 5) * CW_MSEC);
    cw_join(h, NULL);
    cw_handle_release(h);
    return NULL;
}

/* The same, but its draw is as long as the number of runs before it: a
 * global that outlives a run, as a cache or a counter in a program does. */
static int runs;

static void *leaky(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h = cw_spawn(cw_child(ctx, "worker"), worker, NULL);
    uint8_t b[8];
    cw_random(ctx, b, (size_t)(1 + runs++ % 8));
    cw_join(h, NULL);
    cw_handle_release(h);
    return NULL;
}

START_TEST(a_deterministic_program_passes)
{
    cw_divergence d;
    ck_assert_int_eq(cw_check_determinism(cw_backend_deterministic(), NULL, steady, NULL, &d),
                     CW_OK);
    ck_assert(!d.diverged);
    ck_assert_uint_gt(d.events[0], 5);
    ck_assert_uint_eq(d.events[0], d.events[1]);
    ck_assert_str_eq(d.digest[0], d.digest[1]);
}
END_TEST

START_TEST(the_first_difference_is_named)
{
    runs = 0;
    cw_divergence d;
    ck_assert_int_eq(cw_check_determinism(cw_backend_deterministic(), NULL, leaky, NULL, &d),
                     CW_OK);
    ck_assert(d.diverged);
    ck_assert_str_ne(d.digest[0], d.digest[1]);
    /* The draw's event carries its length: 1 byte, then 2. */
    ck_assert_str_eq(d.event[0], "rand [8] 0000000000000001");
    ck_assert_str_eq(d.event[1], "rand [8] 0000000000000002");
    ck_assert_uint_gt(d.index, 0); /* the events before it were the same */
    printf("divergence at event %llu (t=%llu ns):\n  first run:  %s\n  second run: %s\n",
           (unsigned long long)d.index, (unsigned long long)d.time[0], d.event[0], d.event[1]);
}
END_TEST

START_TEST(only_for_deterministic_audited_runs)
{
    cw_divergence d;
    ck_assert_int_eq(cw_check_determinism(cw_backend_native(), NULL, steady, NULL, &d),
                     CW_ERR_UNSUPPORTED);
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.audit = false;
    ck_assert_int_eq(cw_check_determinism(cw_backend_deterministic(), &cfg, steady, NULL, &d),
                     CW_ERR_UNSUPPORTED);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("determinism");
    TCase *tc = tcase_create("check");
    tcase_add_test(tc, a_deterministic_program_passes);
    tcase_add_test(tc, the_first_difference_is_named);
    tcase_add_test(tc, only_for_deterministic_audited_runs);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
