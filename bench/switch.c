/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Cost of a coroutine switch: round trips between two coroutines, with
 * cw_coro_switch and with swapcontext(3) for comparison.  A round trip is
 * two switches, A to B and back.
 *
 * usage: switch [round-trips]	(default 10,000,000)
 */
#include "core/coro.h"

#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <ucontext.h>

static long rounds = 10000000;

static double now_ns(void)
{
    struct timespec ts;

    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void need_stack(cw_stack *s)
{
    if (cw_stack_alloc(s, 64 * 1024) != 0) {
        perror("bench switch: cw_stack_alloc");
        exit(1);
    }
}

/* ---- cw_coro_switch -------------------------------------------------- */

static cw_coro bare_main, bare_a, bare_b;
static int bare_done;
static double bare_ns;

static void bare_ping(void *arg)
{
    double t0, t1;

    (void)arg;
    t0 = now_ns();
    for (long i = 0; i < rounds; i++)
        cw_coro_switch(&bare_a, &bare_b);
    t1 = now_ns();
    bare_ns = (t1 - t0) / rounds;
    bare_done = 1;
    cw_coro_switch(&bare_a, &bare_b); /* lets b finish */
    cw_coro_exit_switch(&bare_a, &bare_main);
}

static void bare_pong(void *arg)
{
    (void)arg;
    while (!bare_done)
        cw_coro_switch(&bare_b, &bare_a);
    cw_coro_exit_switch(&bare_b, &bare_a);
}

static double bench_bare(void)
{
    cw_stack sa, sb;

    need_stack(&sa);
    need_stack(&sb);
    cw_coro_init(&bare_a, &sa, bare_ping, NULL);
    cw_coro_init(&bare_b, &sb, bare_pong, NULL);
    cw_coro_switch(&bare_main, &bare_a);
    cw_stack_free(&sa);
    cw_stack_free(&sb);
    return bare_ns;
}

/* ---- swapcontext ----------------------------------------------------- */

static ucontext_t uc_main, uc_a, uc_b;
static int uc_done;
static double uc_ns;

static void uc_ping(void)
{
    double t0, t1;

    t0 = now_ns();
    for (long i = 0; i < rounds; i++)
        swapcontext(&uc_a, &uc_b);
    t1 = now_ns();
    uc_ns = (t1 - t0) / rounds;
    uc_done = 1;
    swapcontext(&uc_a, &uc_b);
    setcontext(&uc_main);
}

static void uc_pong(void)
{
    while (!uc_done)
        swapcontext(&uc_b, &uc_a);
    setcontext(&uc_a);
}

static void uc_prepare(ucontext_t *uc, cw_stack *s, void (*fn)(void))
{
    need_stack(s);
    getcontext(uc);
    uc->uc_stack.ss_sp = s->lo;
    uc->uc_stack.ss_size = s->size;
    uc->uc_link = NULL;
    makecontext(uc, fn, 0);
}

static double bench_swapcontext(void)
{
    cw_stack sa, sb;

    uc_prepare(&uc_a, &sa, uc_ping);
    uc_prepare(&uc_b, &sb, uc_pong);
    swapcontext(&uc_main, &uc_a);
    cw_stack_free(&sa);
    cw_stack_free(&sb);
    return uc_ns;
}

int main(int argc, char **argv)
{
    double bare, uc;

    if (argc > 1)
        rounds = strtol(argv[1], NULL, 10);
    if (rounds <= 0) {
        fprintf(stderr, "usage: %s [round-trips]\n", argv[0]);
        return 2;
    }
    printf("bench switch: n=%ld round trips (2 switches each)\n", rounds);
    bare = bench_bare();
    uc = bench_swapcontext();
    printf("bench switch: bare_ns=%.2f swapcontext_ns=%.2f ratio=%.1f\n", bare, uc, uc / bare);
    return 0;
}
