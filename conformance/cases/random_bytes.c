/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * random_bytes.c - a deterministic run whose random stream comes from the
 * caller's bytes first (11-deterministic.md, DET-017): what a fuzzer uses
 * to decide the schedule and the faults.
 */
#include <string.h>

#include "cases/util.h"

#define DET CW_CAP_DETERMINISTIC
#define RECOVER (CW_CAP_DETERMINISTIC | CW_CAP_RECOVER)

#define DRAWS 5

/* The root alone draws: nothing else is scheduled, so nothing else draws. */
static void *draws_root(cw_ctx *ctx, void *arg)
{
    uint64_t *out = arg;
    for (int i = 0; i < DRAWS; i++)
        out[i] = cw_random_u64(ctx);
    return NULL;
}

static uint64_t le64(const uint8_t *p, size_t n)
{
    uint64_t v = 0;
    for (size_t i = 0; i < n && i < 8; i++)
        v |= (uint64_t)p[i] << (8 * i);
    return v;
}

CWC_CASE(random_bytes_come_first, "deterministic", "DET-017 DET-012 RUN-008", DET | CWC_REPEATED)
{
    /* Each draw's first (lowest) byte even, 2, 10 and 18: a draw whose low
     * bits are not all the caller's shows. */
    static const uint8_t bytes[21] = {2,  3,  4,  5,  6,  7,  8,  9,  10, 11, 12,
                                      13, 14, 15, 16, 17, 18, 19, 20, 21, 22};
    uint64_t plain[DRAWS], fed[DRAWS];
    cw_config cfg = cwc_config();
    cwc_run_ok(&cfg, draws_root, plain);
    cfg.random_bytes = bytes;
    cfg.random_len = sizeof bytes;
    cwc_run_ok(&cfg, draws_root, fed);
    ck_assert_uint_eq(fed[0], le64(bytes, 8));
    ck_assert_uint_eq(fed[1], le64(bytes + 8, 8));
    ck_assert_uint_eq(fed[2], le64(bytes + 16, 5)); /* the last, zero-padded */
    /* Then the seed's stream from its start. */
    ck_assert_uint_eq(fed[3], plain[0]);
    ck_assert_uint_eq(fed[4], plain[1]);
    /* An empty buffer is no buffer. */
    cfg.random_len = 0;
    cwc_run_ok(&cfg, draws_root, fed);
    ck_assert_uint_eq(fed[0], plain[0]);
}

/* Tasks that race: which runs first is the scheduler's draw. */
static void *racers_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *h[6];
    for (int i = 0; i < 6; i++)
        h[i] = cw_spawn(cw_child(ctx, "racer"), cwc_return_42, NULL);
    for (int i = 0; i < 6; i++) {
        cw_yield(ctx);
        ck_assert_int_eq(cw_join(h[i], NULL), CW_OK);
        cw_handle_release(h[i]);
    }
    return NULL;
}

CWC_CASE(random_bytes_decide_the_schedule, "deterministic", "DET-017 RUN-008", DET | CWC_REPEATED)
{
    static uint8_t a[64], b[64];
    for (size_t i = 0; i < sizeof a; i++) {
        a[i] = (uint8_t)(i * 37 + 1);
        b[i] = (uint8_t)(i * 91 + 7);
    }
    cw_config cfg = cwc_config();
    cw_run_result ra, ra2, rb;
    cfg.random_bytes = a;
    cfg.random_len = sizeof a;
    ck_assert_int_eq(cwc_run(&cfg, racers_root, NULL, &ra), CW_OK);
    ck_assert_int_eq(cwc_run(&cfg, racers_root, NULL, &ra2), CW_OK);
    ck_assert_str_eq(ra.digest, ra2.digest);
    cfg.random_bytes = b;
    ck_assert_int_eq(cwc_run(&cfg, racers_root, NULL, &rb), CW_OK);
    ck_assert_str_ne(ra.digest, rb.digest);
    /* The seed no longer matters while the bytes last. */
    cfg.random_bytes = a;
    cfg.seed += 1;
    ck_assert_int_eq(cwc_run(&cfg, racers_root, NULL, &rb), CW_OK);
    ck_assert_str_eq(ra.digest, rb.digest);
}

static void *two_draws_root(cw_ctx *ctx, void *arg)
{
    uint64_t *out = arg;
    out[0] = cw_random_u64(ctx);
    out[1] = cw_random_u64(ctx);
    return NULL;
}

CWC_CASE(random_bytes_continue_after_recovery, "recover", "DET-017 DET-009 RUN-008",
         RECOVER | CWC_REPEATED)
{
    static uint8_t bytes[40];
    for (size_t i = 0; i < sizeof bytes; i++)
        bytes[i] = (uint8_t)(255 - i);
    cw_config cfg = cwc_config();
    cfg.random_bytes = bytes;
    cfg.random_len = sizeof bytes;
    uint64_t first[2], then[2];
    cw_checkpoint *cp = NULL;
    cw_run_result res;
    ck_assert_int_eq(cw_start_checkpoint(cwc_backend, &cfg, two_draws_root, first, &res, &cp),
                     CW_OK);
    ck_assert_int_eq(cw_recover(cp, two_draws_root, then, &res, NULL), CW_OK);
    ck_assert_uint_eq(first[1], le64(bytes + 8, 8));
    ck_assert_uint_eq(then[0], le64(bytes + 16, 8));
    ck_assert_uint_eq(then[1], le64(bytes + 24, 8));
}
