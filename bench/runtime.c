/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * runtime.c - the cost of a task switch: a yield round trip between two
 * tasks on the deterministic backend (with and without the audit digest)
 * and on the native one, next to the bare coroutine switch of the same
 * mechanism and swapcontext(3), measured in the same run. The audit's
 * floor is the SHA-256 its specified bytes cost: one round trip resumes two
 * tasks, so two events of about 100 bytes, two 64-byte blocks each.
 *
 * usage: runtime
 */
#define OPENSSL_SUPPRESS_DEPRECATED
#include <openssl/sha.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <ucontext.h>

#include "core/coro.h"
#include "cwrt/cwrt.h"

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* ---- yield round trip -------------------------------------------------------- */

enum { YIELD_ROUNDS = 1000000, SWITCH_ROUNDS = 10000000 };

static void *yielder(cw_ctx *ctx, void *arg)
{
    long n = (long)(intptr_t)arg;
    for (long i = 0; i < n; i++)
        cw_yield(ctx);
    return NULL;
}

/* Two tasks yielding to each other: with two ready tasks, each iteration
 * resumes both, so one iteration is one round trip. */
static void *yield_root(cw_ctx *ctx, void *arg)
{
    cw_handle *a = cw_spawn(cw_child(ctx, "a"), yielder, arg);
    cw_handle *b = cw_spawn(cw_child(ctx, "b"), yielder, arg);
    cw_join(a, NULL);
    cw_join(b, NULL);
    cw_handle_release(a);
    cw_handle_release(b);
    return NULL;
}

static cw_coro main_coro, ping_coro;
static ucontext_t main_uc, ping_uc;

static void ping(void *arg)
{
    (void)arg;
    for (;;)
        cw_coro_switch(&ping_coro, &main_coro);
}

static void uc_ping(void)
{
    for (;;)
        swapcontext(&ping_uc, &main_uc);
}

static double bare_switch_ns(void)
{
    cw_stack s;
    if (cw_stack_alloc(&s, 64 * 1024) != 0)
        abort();
    cw_coro_init(&ping_coro, &s, ping, NULL);
    double t0 = now_ns();
    for (long i = 0; i < SWITCH_ROUNDS; i++)
        cw_coro_switch(&main_coro, &ping_coro);
    return (now_ns() - t0) / SWITCH_ROUNDS;
}

static double swapcontext_ns(void)
{
    static char stack[64 * 1024];
    getcontext(&ping_uc);
    ping_uc.uc_stack.ss_sp = stack;
    ping_uc.uc_stack.ss_size = sizeof stack;
    ping_uc.uc_link = NULL;
    makecontext(&ping_uc, uc_ping, 0);
    long rounds = SWITCH_ROUNDS / 10;
    double t0 = now_ns();
    for (long i = 0; i < rounds; i++)
        swapcontext(&main_uc, &ping_uc);
    return (now_ns() - t0) / (double)rounds;
}

static double yield_round_trip_ns(const cw_backend *b, bool audit)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.audit = audit;
    cfg.worker_threads = 1; /* native: the two tasks take turns on one worker */
    cw_run_result res;
    double t0 = now_ns();
    if (cw_start(b, &cfg, yield_root, (void *)(intptr_t)YIELD_ROUNDS, &res) != CW_OK)
        abort();
    return (now_ns() - t0) / YIELD_ROUNDS;
}

/* Two SHA-256 digests of one resumption event's bytes (the chained
 * digest, the label "process_task", a 16-byte id and a task label, each
 * length-prefixed): the hashing no audited round trip can avoid. */
static double audit_floor_ns(void)
{
    uint8_t msg[8 + 32 + 8 + 12 + 8 + 16 + 8 + 1] = {0}, digest[32] = {0};
    long rounds = SWITCH_ROUNDS / 10;
    double t0 = now_ns();
    for (long i = 0; i < rounds; i++) {
        for (int e = 0; e < 2; e++) {
            SHA256_CTX sha; /* SHA256() would fetch the digest each time */
            memcpy(msg + 8, digest, sizeof digest);
            SHA256_Init(&sha);
            SHA256_Update(&sha, msg, sizeof msg);
            SHA256_Final(digest, &sha);
        }
    }
    double ns = (now_ns() - t0) / (double)rounds;
    volatile uint8_t sink = digest[0]; /* keeps the digests live */
    (void)sink;
    return ns;
}

static void bench_yield(void)
{
    double audited = yield_round_trip_ns(cw_backend_deterministic(), true);
    double plain = yield_round_trip_ns(cw_backend_deterministic(), false);
    double native = yield_round_trip_ns(cw_backend_native(), false);
    double bare = bare_switch_ns();
    double uc = swapcontext_ns();
    double floor = audit_floor_ns();
    printf("bench yield: det_audit_ns=%.1f det_no_audit_ns=%.1f native_1_worker_ns=%.1f "
           "bare_switch_ns=%.1f swapcontext_ns=%.1f audit_sha256_floor_ns=%.1f (round trips)\n",
           audited, plain, native, bare, uc, floor);
    printf("bench yield audit: (det_audit-det_no_audit)/sha256_floor=%.2f "
           "(det_no_audit+sha256_floor)/bare=%.2f\n",
           (audited - plain) / floor, (plain + floor) / bare);
    printf("bench yield ratios: det_audit/bare=%.2f det_no_audit/bare=%.2f "
           "swapcontext/det_audit=%.2f swapcontext/det_no_audit=%.2f swapcontext/bare=%.2f\n",
           audited / bare, plain / bare, uc / audited, uc / plain, uc / bare);
}

int main(void)
{
    bench_yield();
    return 0;
}
