/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * switch.c - the only place that switches between stacks.
 *
 * Three moves: the scheduler resumes a task, a task gives the thread back
 * to the scheduler, and a finished task leaves its stack for good. Under
 * AddressSanitizer and ThreadSanitizer each move is announced first, so
 * that they know which stack is live (without it ASan takes a task's stack
 * for a corrupted main stack, and TSan mixes up the tasks' histories).
 * Without sanitizers the announcements compile to nothing.
 */
#include "skeleton.h"

#if defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SK_ASAN 1
#endif
#if __has_feature(thread_sanitizer)
#define SK_TSAN 1
#endif
#endif
#if defined(__SANITIZE_ADDRESS__)
#define SK_ASAN 1
#endif
#if defined(__SANITIZE_THREAD__)
#define SK_TSAN 1
#endif

#ifdef SK_ASAN
void __sanitizer_start_switch_fiber(void **fake_stack_save, const void *bottom, size_t size);
void __sanitizer_finish_switch_fiber(void *fake_stack_save, const void **bottom_old,
                                     size_t *size_old);
#endif
#ifdef SK_TSAN
void *__tsan_get_current_fiber(void);
void *__tsan_create_fiber(unsigned flags);
void __tsan_destroy_fiber(void *fiber);
void __tsan_switch_to_fiber(void *fiber, unsigned flags);
#endif

/* Before a move: `save` NULL means the stack left is never resumed. Always
 * inlined: once TSan switched fibers, returning from an instrumented
 * function would be recorded on the other fiber's history. */
static inline __attribute__((always_inline)) void leaving(void **save, const void *bottom,
                                                          size_t size, void *fiber)
{
#ifdef SK_ASAN
    __sanitizer_start_switch_fiber(save, bottom, size);
#else
    (void)save, (void)bottom, (void)size;
#endif
#ifdef SK_TSAN
    __tsan_switch_to_fiber(fiber, 0);
#else
    (void)fiber;
#endif
}

/* After a move, on the stack arrived at. `from_bottom` and `from_size` get
 * the stack just left (the scheduler's, when a task arrives). */
static inline __attribute__((always_inline)) void arrived(void *save, const void **from_bottom,
                                                          size_t *from_size)
{
#ifdef SK_ASAN
    __sanitizer_finish_switch_fiber(save, from_bottom, from_size);
#else
    (void)save, (void)from_bottom, (void)from_size;
#endif
}

void sk_fiber_init(sk_rt *rt)
{
#ifdef SK_TSAN
    rt->sched_fiber = __tsan_get_current_fiber();
#else
    (void)rt;
#endif
}

void sk_fiber_new(sk_task *t)
{
#ifdef SK_TSAN
    t->fiber = __tsan_create_fiber(0);
#else
    (void)t;
#endif
}

void sk_fiber_free(sk_task *t)
{
#ifdef SK_TSAN
    if (t->fiber)
        __tsan_destroy_fiber(t->fiber);
#endif
    t->fiber = NULL;
}

void sk_switch_to_task(sk_rt *rt, sk_task *t)
{
    void *save = NULL;
    leaving(&save, t->stack, t->stack_len, t->fiber);
    swapcontext(&rt->sched, &t->uc);
    arrived(save, NULL, NULL);
}

void sk_switch_to_sched(sk_task *t)
{
    sk_rt *rt = t->rt;
    void *save = NULL;
    leaving(&save, rt->sched_bottom, rt->sched_size, rt->sched_fiber);
    swapcontext(&t->uc, &rt->sched);
    arrived(save, &rt->sched_bottom, &rt->sched_size);
}

/* The first thing a task's first frame does: learn the scheduler's stack. */
void sk_task_arrived(sk_task *t)
{
    arrived(NULL, &t->rt->sched_bottom, &t->rt->sched_size);
}

_Noreturn void sk_exit_to_sched(sk_task *t)
{
    sk_rt *rt = t->rt;
    leaving(NULL, rt->sched_bottom, rt->sched_size, rt->sched_fiber);
    setcontext(&rt->sched);
    sk_fatal("setcontext failed");
}
