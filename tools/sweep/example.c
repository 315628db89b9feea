/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * example.c - a simulation test with a bug only some seeds find, the
 * example cw-sweep runs (make sweep-check, make sweep-demo).
 *
 * Three tasks each wait a random while, then increment a shared counter
 * with a read, a yield and a write: the yield stands for any call that
 * suspends between the two (a storage read, a message). The increments
 * are lost only when two tasks wake within the same millisecond of
 * virtual time, so the test passes under most seeds and fails under a few,
 * and a failing seed fails again every time it is replayed.
 *
 *     CW_SEED=42 sweep-example      exit 0 when the count is right, 1 if not
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "cwrt/cwrt.h"

enum { TASKS = 3, SPREAD_MS = 1000 };

static void *increment(cw_ctx *ctx, void *arg)
{
    int *counter = arg;
    cw_sleep(ctx, (cw_duration)(cw_random_u64(ctx) % SPREAD_MS) * CW_MSEC);
    int seen = *counter;
    cw_yield(ctx); /* the bug: nothing keeps another task out meanwhile */
    *counter = seen + 1;
    return NULL;
}

static void *root(cw_ctx *ctx, void *arg)
{
    int *counter = arg;
    cw_handle *h[TASKS];
    for (int i = 0; i < TASKS; i++)
        h[i] = cw_spawn(cw_child(ctx, "incrementer"), increment, counter);
    for (int i = 0; i < TASKS; i++) {
        if (!h[i] || cw_join(h[i], NULL) != CW_OK)
            return NULL;
        cw_handle_release(h[i]);
    }
    return counter;
}

int main(void)
{
    const char *s = getenv("CW_SEED");
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.seed = s ? strtoull(s, NULL, 0) : 0;
    int counter = 0;
    cw_run_result res;
    if (cw_start(cw_backend_deterministic(), &cfg, root, &counter, &res) != CW_OK) {
        fprintf(stderr, "seed %" PRIu64 ": run failed: %s\n", cfg.seed, res.message);
        return 2;
    }
    if (counter != TASKS) {
        fprintf(stderr, "seed %" PRIu64 ": counter %d after %d increments (digest %s)\n", cfg.seed,
                counter, TASKS, res.digest);
        return 1;
    }
    return 0;
}
