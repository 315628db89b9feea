/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Machine-independent half of the coroutine switch: starting a coroutine,
 * and keeping the sanitizers informed.  The register shuffling itself is
 * in coro_x86_64.S, coro_aarch64.S or coro_ucontext.c.
 */
#include "core/coro.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if CW_CORO_ASAN
#include <sanitizer/asan_interface.h>
#include <sanitizer/common_interface_defs.h>
#endif
#if CW_CORO_TSAN
#include <sanitizer/tsan_interface.h>
#endif

/*
 * What a new coroutine needs to know when it first runs.  It lives at the
 * very top of the coroutine's own stack, so cw_coro does not have to carry
 * entry and arg for the rest of the coroutine's life.
 */
struct boot {
    cw_coro *self;
    cw_coro_entry entry;
    void *arg;
};

#if !CW_CORO_USE_UCONTEXT
CW_CORO_HIDDEN void cw__coro_trampoline(void);

#if defined(__x86_64__)
/*
 * The frame cw__coro_jump pops (see coro_x86_64.S), arranged so that its
 * `ret` lands in the trampoline with rbx = fn, r12 = arg and rsp 16-byte
 * aligned.  The FPU control state starts as the creator's, just as a new
 * thread inherits it.
 */
static void *make(void *top, void (*fn)(void *), void *arg)
{
    uint64_t *sp = (uint64_t *)((uintptr_t)top & ~(uintptr_t)15);
    uint32_t mxcsr;
    uint16_t fpucw;

    __asm__ volatile("stmxcsr %0" : "=m"(mxcsr));
    __asm__ volatile("fnstcw %0" : "=m"(fpucw));
    sp -= 2; /* rsp after the ret; never read */
    sp[-1] = (uintptr_t)cw__coro_trampoline;
    sp[-2] = 0;              /* rbp */
    sp[-3] = (uintptr_t)fn;  /* rbx */
    sp[-4] = (uintptr_t)arg; /* r12 */
    sp[-5] = 0;              /* r13 */
    sp[-6] = 0;              /* r14 */
    sp[-7] = 0;              /* r15 */
    sp[-8] = mxcsr | (uint64_t)fpucw << 32;
    return sp - 8;
}
#elif defined(__aarch64__)
/*
 * The frame cw__coro_jump pops (see coro_aarch64.S), arranged so that its
 * `ret` lands in the trampoline with x19 = arg, x20 = fn, a zero frame
 * pointer ending the frame chain, and FPCR inherited from the creator.
 */
static void *make(void *top, void (*fn)(void *), void *arg)
{
    uint64_t *sp = (uint64_t *)((uintptr_t)top & ~(uintptr_t)15);
    uint64_t fpcr;

    __asm__ volatile("mrs %0, fpcr" : "=r"(fpcr));
    sp -= 22;
    for (int i = 0; i < 22; i++)
        sp[i] = 0;
    sp[0] = (uintptr_t)arg;                  /* x19 */
    sp[1] = (uintptr_t)fn;                   /* x20 */
    sp[11] = (uintptr_t)cw__coro_trampoline; /* x30 */
    sp[20] = fpcr;
    return sp;
}
#endif
#endif

/*
 * Sanitizer bookkeeping around cw__coro_jump.  `depart` runs on the old
 * stack just before the jump, `land` on the new one just after; `fake` is
 * ASan's saved fake stack of the context being suspended, or NULL when it
 * will never come back.
 *
 * Both must be inlined into their callers.  TSan records function entry
 * and exit on the current fiber's shadow call stack, and `depart` changes
 * the current fiber half way: as a function of its own it would enter on
 * one fiber and exit on the other, corrupting both shadow stacks.
 */
#if defined(__GNUC__)
#define ALWAYS_INLINE inline __attribute__((always_inline))
#else
#define ALWAYS_INLINE inline
#endif

static ALWAYS_INLINE void depart(cw_coro *from, cw_coro *to, void **fake)
{
#if CW_CORO_ASAN
    to->asan_from = fake ? from : NULL;
    __sanitizer_start_switch_fiber(fake, to->asan_lo, to->asan_size);
#endif
#if CW_CORO_TSAN
    /* Asking TSan rather than trusting from->tsan_fiber keeps a struct
     * that saved one thread's own stack right when another thread later
     * saves its stack there. */
    void *cur = __tsan_get_current_fiber();

    if (!to->tsan_fiber)
        to->tsan_fiber = __tsan_create_fiber(0);
    if (fake) {
        from->tsan_fiber = cur;
    } else {
        from->tsan_fiber = NULL;
        to->tsan_dead = cur;
    }
    /* Flags 0: the switch orders everything before it in `from` before
     * everything after it in `to`, as a real handover does. */
    __tsan_switch_to_fiber(to->tsan_fiber, 0);
#endif
    (void)from;
    (void)to;
    (void)fake;
}

static ALWAYS_INLINE void land(cw_coro *self, void *fake)
{
#if CW_CORO_ASAN
    /* ASan tells us the bounds of the stack we came from; that is the
     * only way to learn them for a thread's original stack, which the
     * context we came from may be. */
    cw_coro *from = self->asan_from;
    const void *lo;
    size_t size;

    __sanitizer_finish_switch_fiber(fake, &lo, &size);
    if (from) {
        from->asan_lo = lo;
        from->asan_size = size;
    }
#endif
#if CW_CORO_TSAN
    if (self->tsan_dead) {
        __tsan_destroy_fiber(self->tsan_dead);
        self->tsan_dead = NULL;
    }
#endif
    (void)self;
    (void)fake;
}

static _Noreturn void boot(void *p)
{
    struct boot *b = p;

    /* First thing, before anything else uses the stack: no fake stack
     * has been saved for a context that never ran. */
    land(b->self, NULL);
    b->entry(b->arg);
    fputs("cwrt: a coroutine returned from its entry function;"
          " it must finish with cw_coro_exit_switch\n",
          stderr);
    abort();
}

void cw_coro_init(cw_coro *c, cw_stack *s, cw_coro_entry entry, void *arg)
{
    char *lo = s->lo;
    char *top = lo + s->size;
    struct boot *b;

#if CW_CORO_ASAN
    /* A coroutine that died on this stack left its frames poisoned;
     * start from a clean slate. */
    __asan_unpoison_memory_region(lo, s->size);
#endif
    b = (struct boot *)(((uintptr_t)top - sizeof *b) & ~(uintptr_t)15);
    b->self = c;
    b->entry = entry;
    b->arg = arg;
    *c = (cw_coro){0};
#if CW_CORO_ASAN
    c->asan_lo = lo;
    c->asan_size = s->size;
#endif
#if CW_CORO_USE_UCONTEXT
    c->sp = cw__coro_make(lo, b, boot, b);
#else
    c->sp = make(b, boot, b);
#endif
}

void cw_coro_switch(cw_coro *from, cw_coro *to)
{
#if CW_CORO_ASAN || CW_CORO_TSAN
    void *fake = NULL;

    depart(from, to, &fake);
    cw__coro_jump(&from->sp, to->sp);
    land(from, fake);
#else
    /* Compiles to a tail jump: no frame of its own. */
    cw__coro_jump(&from->sp, to->sp);
#endif
}

_Noreturn void cw_coro_exit_switch(cw_coro *from, cw_coro *to)
{
    depart(from, to, NULL);
    cw__coro_jump(&from->sp, to->sp);
    /* Only reachable if someone resumed a finished coroutine. */
    fputs("cwrt: a finished coroutine was resumed\n", stderr);
    abort();
}
