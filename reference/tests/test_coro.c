/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Unit tests for task stacks and the coroutine switch (core/coro.h).
 */
#include "core/coro.h"

#include <check.h>
#include <errno.h>
#include <fenv.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))

/* Start `co` on a fresh stack of `size` bytes, failing the test if the
 * stack cannot be had. */
static void start(cw_coro *co, cw_stack *st, size_t size, cw_coro_entry entry, void *arg)
{
    ck_assert_int_eq(cw_stack_alloc(st, size), 0);
    cw_coro_init(co, st, entry, arg);
}

/* ---- stacks ---------------------------------------------------------- */

START_TEST(test_stack_alloc)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    cw_stack s;

    ck_assert_int_eq(cw_stack_alloc(&s, 1), 0);
    ck_assert_uint_ge(s.size, CW_STACK_MIN);
    ck_assert_uint_eq(s.size % page, 0);
    ck_assert_ptr_eq(s.lo, (char *)s.map + page);
    ck_assert_uint_eq(s.map_size, s.size + page);
    memset(s.lo, 0xa5, s.size);
    cw_stack_free(&s);
    ck_assert_ptr_null(s.map);
    cw_stack_free(&s);

    ck_assert_int_eq(cw_stack_alloc(&s, 100000), 0);
    ck_assert_uint_eq(s.size, (100000 + page - 1) / page * page);
    cw_stack_free(&s);

    errno = 0;
    ck_assert_int_eq(cw_stack_alloc(&s, SIZE_MAX / 2), -1);
    ck_assert_int_eq(errno, ENOMEM);
    ck_assert_ptr_null(s.map);
    cw_stack_free(&s);
    errno = 0;
    ck_assert_int_eq(cw_stack_alloc(&s, SIZE_MAX), -1);
    ck_assert_int_eq(errno, ENOMEM);
}
END_TEST

/* ---- ping-pong ------------------------------------------------------- */

#define PINGPONG 200000

struct pair {
    cw_coro main, co;
    cw_stack st;
    long value;
    long bad;
};

static void pingpong_body(void *arg)
{
    struct pair *p = arg;

    for (long i = 0; i < PINGPONG; i++) {
        if (p->value != 2 * i + 1)
            p->bad++;
        p->value++;
        cw_coro_switch(&p->co, &p->main);
    }
    cw_coro_exit_switch(&p->co, &p->main);
}

START_TEST(test_pingpong)
{
    struct pair p = {0};

    start(&p.co, &p.st, 0, pingpong_body, &p);
    for (long i = 0; i < PINGPONG; i++) {
        p.value++;
        cw_coro_switch(&p.main, &p.co);
        ck_assert_int_eq(p.value, 2 * i + 2);
    }
    cw_coro_switch(&p.main, &p.co); /* lets it finish */
    ck_assert_int_eq(p.bad, 0);
    cw_stack_free(&p.st);
}
END_TEST

/* ---- callee-saved registers ------------------------------------------ */

/*
 * One side keeps many values live across a switch, which puts them in
 * callee-saved registers; the other side fills those registers with junk
 * right before switching back.  If the switch failed to restore them, the
 * first side would read the junk.
 */
#if defined(__x86_64__)
#define CLOBBER_CALLEE_SAVED()                                                                     \
    __asm__ volatile("movq $-1, %%rbx\n\tmovq $-1, %%r12\n\tmovq $-1, %%r13\n\t"                   \
                     "movq $-1, %%r14\n\tmovq $-1, %%r15" ::                                       \
                         : "rbx", "r12", "r13", "r14", "r15")
#elif defined(__aarch64__)
#define CLOBBER_CALLEE_SAVED()                                                                     \
    __asm__ volatile("mov x19, #-1\n\tmov x20, #-1\n\tmov x21, #-1\n\tmov x22, #-1\n\t"            \
                     "mov x23, #-1\n\tmov x24, #-1\n\tmov x25, #-1\n\tmov x26, #-1\n\t"            \
                     "mov x27, #-1\n\tmov x28, #-1\n\t"                                            \
                     "movi d8, #0xffffffffffffffff\n\tmovi d9, #0xffffffffffffffff\n\t"            \
                     "movi d10, #0xffffffffffffffff\n\tmovi d11, #0xffffffffffffffff\n\t"          \
                     "movi d12, #0xffffffffffffffff\n\tmovi d13, #0xffffffffffffffff\n\t"          \
                     "movi d14, #0xffffffffffffffff\n\tmovi d15, #0xffffffffffffffff" ::           \
                         : "x19", "x20", "x21", "x22", "x23", "x24", "x25", "x26", "x27", "x28",   \
                           "d8", "d9", "d10", "d11", "d12", "d13", "d14", "d15")
#else
#define CLOBBER_CALLEE_SAVED() ((void)0)
#endif

static volatile long reg_in[10] = {3, 5, 7, 11, 13, 17, 19, 23, 29, 31};
static volatile double freg_in[10] = {0.5,  1.25,  2.125,  3.0625, 4.5,
                                      5.75, 6.875, 7.4375, 8.25,   9.125};

static NOINLINE void clobber_then_switch(cw_coro *from, cw_coro *to)
{
    CLOBBER_CALLEE_SAVED();
    cw_coro_switch(from, to);
}

/* Every value comes from a volatile read, so the compiler has to keep it
 * across the call instead of recomputing it afterwards. */
static NOINLINE int hold_then_switch(cw_coro *from, cw_coro *to, long k)
{
    long a0 = reg_in[0] * k, a1 = reg_in[1] * k, a2 = reg_in[2] * k;
    long a3 = reg_in[3] * k, a4 = reg_in[4] * k, a5 = reg_in[5] * k;
    long a6 = reg_in[6] * k, a7 = reg_in[7] * k, a8 = reg_in[8] * k;
    long a9 = reg_in[9] * k;
    double f0 = freg_in[0] * k, f1 = freg_in[1] * k, f2 = freg_in[2] * k;
    double f3 = freg_in[3] * k, f4 = freg_in[4] * k, f5 = freg_in[5] * k;
    double f6 = freg_in[6] * k, f7 = freg_in[7] * k, f8 = freg_in[8] * k;
    double f9 = freg_in[9] * k;

    cw_coro_switch(from, to);
    return a0 == reg_in[0] * k && a1 == reg_in[1] * k && a2 == reg_in[2] * k &&
           a3 == reg_in[3] * k && a4 == reg_in[4] * k && a5 == reg_in[5] * k &&
           a6 == reg_in[6] * k && a7 == reg_in[7] * k && a8 == reg_in[8] * k &&
           a9 == reg_in[9] * k && f0 == freg_in[0] * k && f1 == freg_in[1] * k &&
           f2 == freg_in[2] * k && f3 == freg_in[3] * k && f4 == freg_in[4] * k &&
           f5 == freg_in[5] * k && f6 == freg_in[6] * k && f7 == freg_in[7] * k &&
           f8 == freg_in[8] * k && f9 == freg_in[9] * k;
}

#define REG_ROUNDS 1000

static void registers_body(void *arg)
{
    struct pair *p = arg;

    for (long i = 0; i < REG_ROUNDS; i++) {
        if (!hold_then_switch(&p->co, &p->main, 1000 + i))
            p->bad++;
        clobber_then_switch(&p->co, &p->main);
    }
    cw_coro_exit_switch(&p->co, &p->main);
}

START_TEST(test_registers)
{
    struct pair p = {0};

    start(&p.co, &p.st, 0, registers_body, &p);
    for (long i = 0; i < REG_ROUNDS; i++) {
        clobber_then_switch(&p.main, &p.co);
        ck_assert(hold_then_switch(&p.main, &p.co, -7 - i));
    }
    cw_coro_switch(&p.main, &p.co);
    ck_assert_int_eq(p.bad, 0);
    cw_stack_free(&p.st);
}
END_TEST

/* ---- floating point -------------------------------------------------- */

#define FP_TERMS 1000

static volatile double fp_one = 1.0;

static double harmonic_term(int i)
{
    volatile double d = i;

    return fp_one / d;
}

/* Reference sum, computed without any switching. */
static NOINLINE double harmonic(int mode)
{
    int saved = fegetround();
    double sum = 0;

    fesetround(mode);
    for (int i = 1; i <= FP_TERMS; i++)
        sum += harmonic_term(i);
    fesetround(saved);
    return sum;
}

struct fp {
    struct pair p;
    double sum;
};

/* The rounding mode as the hardware holds it.  On x86_64 fegetround
 * reads only the x87 control word, so check the SSE one (MXCSR) too. */
static int rounding(void)
{
    int mode = fegetround();
#if defined(__x86_64__)
    static const int sse[4] = {FE_TONEAREST, FE_DOWNWARD, FE_UPWARD, FE_TOWARDZERO};
    unsigned mxcsr;

    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    if (sse[mxcsr >> 13 & 3] != mode)
        return -1;
#endif
    return mode;
}

/*
 * Sums upward while main sums to nearest, switching after every term: a
 * rounding mode that leaked across a switch would show in rounding() and
 * change both sums.  (Under valgrind, which computes everything to
 * nearest, the sums cannot tell, but rounding() still can.)
 */
static void fp_body(void *arg)
{
    struct fp *t = arg;
    double sum = 0;

    fesetround(FE_UPWARD);
    for (int i = 1; i <= FP_TERMS; i++) {
        sum += harmonic_term(i);
        cw_coro_switch(&t->p.co, &t->p.main);
        if (rounding() != FE_UPWARD)
            t->p.bad++;
    }
    t->sum = sum;
    cw_coro_exit_switch(&t->p.co, &t->p.main);
}

START_TEST(test_fp_state)
{
    struct fp t = {0};
    double up = harmonic(FE_UPWARD), near = harmonic(FE_TONEAREST);
    double sum = 0;

    ck_assert_int_eq(rounding(), FE_TONEAREST);
    start(&t.p.co, &t.p.st, 0, fp_body, &t);
    for (int i = 1; i <= FP_TERMS; i++) {
        cw_coro_switch(&t.p.main, &t.p.co);
        ck_assert_int_eq(rounding(), FE_TONEAREST);
        sum += harmonic_term(i);
    }
    cw_coro_switch(&t.p.main, &t.p.co);
    ck_assert_int_eq(rounding(), FE_TONEAREST);
    ck_assert_int_eq(t.p.bad, 0);
    ck_assert(sum == near);
    ck_assert(t.sum == up);
    cw_stack_free(&t.p.st);
}
END_TEST

/* ---- many coroutines at once ----------------------------------------- */

#define MANY 1000
#define MANY_ROUNDS 5
#define MANY_STACK (32 * 1024)

struct slot {
    cw_coro co;
    cw_stack st;
    cw_coro *main;
    int id;
    int runs;
    int bad;
    int done;
};

/* Each keeps a pattern derived from its id on its own stack across all of
 * its switches; stacks that overlapped or were swapped would garble it. */
static void many_body(void *arg)
{
    struct slot *s = arg;
    volatile unsigned char mark[512];

    for (int i = 0; i < (int)sizeof mark; i++)
        mark[i] = (unsigned char)(s->id * 7 + i);
    for (int r = 0; r < MANY_ROUNDS; r++) {
        s->runs++;
        cw_coro_switch(&s->co, s->main);
        for (int i = 0; i < (int)sizeof mark; i++)
            if (mark[i] != (unsigned char)(s->id * 7 + i))
                s->bad++;
    }
    s->done = 1;
    cw_coro_exit_switch(&s->co, s->main);
}

START_TEST(test_many)
{
    struct slot *slots = calloc(MANY, sizeof *slots);
    cw_coro main_ctx = {0};

    ck_assert_ptr_nonnull(slots);
    for (int i = 0; i < MANY; i++) {
        slots[i].main = &main_ctx;
        slots[i].id = i;
        start(&slots[i].co, &slots[i].st, MANY_STACK, many_body, &slots[i]);
    }
    for (int r = 0; r <= MANY_ROUNDS; r++)
        for (int i = 0; i < MANY; i++)
            cw_coro_switch(&main_ctx, &slots[i].co);
    for (int i = 0; i < MANY; i++) {
        ck_assert_int_eq(slots[i].runs, MANY_ROUNDS);
        ck_assert_int_eq(slots[i].bad, 0);
        ck_assert_int_eq(slots[i].done, 1);
        cw_stack_free(&slots[i].st);
    }
    free(slots);
}
END_TEST

/* ---- deep recursion and the guard page ------------------------------- */

#define DEEP_STACK (256 * 1024)
/* Room left for what runs below the deepest frame: sanitizer runtimes
 * called from instrumented code use the same stack. */
#define DEEP_MARGIN (8 * 1024)

struct deep {
    struct pair p;
    char *top;
    size_t target;
    size_t reached;
};

static NOINLINE size_t recurse(struct deep *d, unsigned depth)
{
    volatile unsigned char buf[256];
    size_t used = (size_t)(d->top - (char *)__builtin_frame_address(0));
    size_t r = used;

    for (unsigned i = 0; i < sizeof buf; i++)
        buf[i] = (unsigned char)(depth + i);
    if (used < d->target)
        r = recurse(d, depth + 1);
    for (unsigned i = 0; i < sizeof buf; i++)
        if (buf[i] != (unsigned char)(depth + i))
            d->p.bad++;
    return r;
}

static void deep_body(void *arg)
{
    struct deep *d = arg;

    d->reached = recurse(d, 0);
    cw_coro_exit_switch(&d->p.co, &d->p.main);
}

START_TEST(test_deep_recursion)
{
    struct deep d = {0};

    start(&d.p.co, &d.p.st, DEEP_STACK, deep_body, &d);
    d.top = (char *)d.p.st.lo + d.p.st.size;
    d.target = d.p.st.size - DEEP_MARGIN;
    cw_coro_switch(&d.p.main, &d.p.co);
    ck_assert_uint_ge(d.reached, d.target);
    ck_assert_uint_lt(d.reached, d.p.st.size);
    ck_assert_int_eq(d.p.bad, 0);
    cw_stack_free(&d.p.st);
}
END_TEST

/*
 * Runs away until it hits the guard page; the process must die of SIGSEGV
 * rather than scribble below the stack.  Not under ASan or TSan: they
 * catch the fault themselves and exit with a report instead of dying of
 * the signal.
 */
#if !CW_CORO_ASAN && !CW_CORO_TSAN
#define TEST_GUARD_PAGE 1
START_TEST(test_guard_page)
{
    struct deep d = {0};

    start(&d.p.co, &d.p.st, DEEP_STACK, deep_body, &d);
    d.top = (char *)d.p.st.lo + d.p.st.size;
    d.target = SIZE_MAX;
    cw_coro_switch(&d.p.main, &d.p.co);
    ck_abort_msg("overflowed the stack without a fault");
}
END_TEST
#endif

/* ---- nesting, chains, reuse ------------------------------------------ */

struct nest {
    cw_coro main, a, b;
    cw_stack sa, sb;
    char log[16];
    int n;
};

static void nest_a(void *arg)
{
    struct nest *t = arg;

    t->log[t->n++] = 'a';
    cw_coro_switch(&t->a, &t->b); /* starts b */
    t->log[t->n++] = 'A';
    cw_coro_exit_switch(&t->a, &t->main);
}

static void nest_b(void *arg)
{
    struct nest *t = arg;

    t->log[t->n++] = 'b';
    cw_coro_switch(&t->b, &t->main); /* not back to a */
    t->log[t->n++] = 'B';
    cw_coro_exit_switch(&t->b, &t->a);
}

START_TEST(test_nested)
{
    struct nest t = {0};

    start(&t.a, &t.sa, 0, nest_a, &t);
    start(&t.b, &t.sb, 0, nest_b, &t);
    t.log[t.n++] = 'm';
    cw_coro_switch(&t.main, &t.a);
    t.log[t.n++] = 'M';
    cw_coro_switch(&t.main, &t.b);
    t.log[t.n++] = '.';
    ck_assert_str_eq(t.log, "mabMBA.");
    cw_stack_free(&t.sa);
    cw_stack_free(&t.sb);
}
END_TEST

#define CHAIN 100

struct link {
    cw_coro co;
    cw_stack st;
    cw_coro *next;
    int *count;
};

/* Each link starts the next with its final switch, so every coroutine
 * but the first is entered straight from one that is dying. */
static void chain_body(void *arg)
{
    struct link *l = arg;

    ++*l->count;
    cw_coro_exit_switch(&l->co, l->next);
}

START_TEST(test_chain)
{
    struct link links[CHAIN] = {0};
    cw_coro main_ctx = {0};
    int count = 0;

    for (int i = 0; i < CHAIN; i++) {
        links[i].next = i + 1 < CHAIN ? &links[i + 1].co : &main_ctx;
        links[i].count = &count;
        start(&links[i].co, &links[i].st, 0, chain_body, &links[i]);
    }
    cw_coro_switch(&main_ctx, &links[0].co);
    ck_assert_int_eq(count, CHAIN);
    for (int i = 0; i < CHAIN; i++)
        cw_stack_free(&links[i].st);
}
END_TEST

#define REUSE 1000

struct reuse {
    cw_coro main, co;
    int runs;
};

static void reuse_body(void *arg)
{
    struct reuse *r = arg;
    volatile char scratch[1024];

    memset((char *)scratch, r->runs & 0xff, sizeof scratch);
    r->runs++;
    cw_coro_exit_switch(&r->co, &r->main);
}

/* One stack and one cw_coro serve many coroutines in turn. */
START_TEST(test_reuse)
{
    struct reuse r = {0};
    cw_stack st;

    ck_assert_int_eq(cw_stack_alloc(&st, 0), 0);
    for (int i = 0; i < REUSE; i++) {
        cw_coro_init(&r.co, &st, reuse_body, &r);
        cw_coro_switch(&r.main, &r.co);
    }
    ck_assert_int_eq(r.runs, REUSE);
    cw_stack_free(&st);
}
END_TEST

/* ---- moving between threads ------------------------------------------ */

static _Thread_local int thread_tag;

/* Not inlined: the address of a thread-local must be computed afresh
 * after a switch that may have moved us. */
static NOINLINE int current_tag(void)
{
    return thread_tag;
}

struct move {
    cw_coro co;
    cw_stack st;
    cw_coro *home;
    int tag;
    int seen[2];
    long data;
};

static void move_body(void *arg)
{
    struct move *m = arg;

    m->seen[0] = current_tag();
    m->data = 42;
    cw_coro_switch(&m->co, m->home);
    m->seen[1] = current_tag();
    m->data++;
    cw_coro_exit_switch(&m->co, m->home);
}

static void *move_thread(void *arg)
{
    struct move *m = arg;
    cw_coro home = {0};

    thread_tag = m->tag;
    m->home = &home;
    cw_coro_switch(&home, &m->co);
    return NULL;
}

START_TEST(test_move_threads)
{
    struct move m = {0};
    pthread_t t;

    start(&m.co, &m.st, 0, move_body, &m);
    thread_tag = 3;
    m.tag = 1;
    ck_assert_int_eq(pthread_create(&t, NULL, move_thread, &m), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(m.data, 42);
    m.tag = 2;
    ck_assert_int_eq(pthread_create(&t, NULL, move_thread, &m), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    ck_assert_int_eq(m.seen[0], 1);
    ck_assert_int_eq(m.seen[1], 2);
    ck_assert_int_eq(m.data, 43);
    ck_assert_int_eq(current_tag(), 3);
    cw_stack_free(&m.st);
}
END_TEST

/* ---- misuse ---------------------------------------------------------- */

static void returning_body(void *arg)
{
    (void)arg;
}

START_TEST(test_return_aborts)
{
    struct pair p = {0};

    start(&p.co, &p.st, 0, returning_body, &p);
    cw_coro_switch(&p.main, &p.co);
    ck_abort_msg("returned from a coroutine's entry function");
}
END_TEST

int main(void)
{
    Suite *s = suite_create("coro");
    TCase *tc = tcase_create("core");
    SRunner *sr;
    int failed;

    /* Generous: valgrind and the sanitizers slow switching down a lot. */
    tcase_set_timeout(tc, 300);
    tcase_add_test(tc, test_stack_alloc);
    tcase_add_test(tc, test_pingpong);
    tcase_add_test(tc, test_registers);
    tcase_add_test(tc, test_fp_state);
    tcase_add_test(tc, test_many);
    tcase_add_test(tc, test_deep_recursion);
#ifdef TEST_GUARD_PAGE
    tcase_add_test_raise_signal(tc, test_guard_page, SIGSEGV);
#endif
    tcase_add_test(tc, test_nested);
    tcase_add_test(tc, test_chain);
    tcase_add_test(tc, test_reuse);
    tcase_add_test(tc, test_move_threads);
    tcase_add_test_raise_signal(tc, test_return_aborts, SIGABRT);
    suite_add_tcase(s, tc);

    sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
