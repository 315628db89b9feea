/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Portable context switch on top of getcontext/makecontext/swapcontext.
 *
 * Used where no assembly backend exists, or when CW_CORO_UCONTEXT is
 * defined (handy to rule the assembly out when chasing a bug).  It is much
 * slower: swapcontext saves the whole FPU environment and makes a system
 * call to swap the signal mask, every time.
 *
 * A suspended context is a ucontext_t stored on its own stack: in the
 * frame of cw__coro_jump for one that switched away, at the top of the
 * stack for one that has not started.  cw_coro.sp points at it, so the
 * cw_coro layout is the same as with the assembly backends.
 */
#include "core/coro.h"

#if CW_CORO_USE_UCONTEXT

#include <stdint.h>
#include <stdlib.h>
#include <ucontext.h>

/* makecontext passes only int arguments, so pointers travel in halves. */
static uintptr_t join(unsigned hi, unsigned lo)
{
    return (uintptr_t)((uint64_t)hi << 32 | lo);
}

static void start(unsigned fn_hi, unsigned fn_lo, unsigned arg_hi, unsigned arg_lo)
{
    void (*fn)(void *) = (void (*)(void *))join(fn_hi, fn_lo);

    fn((void *)join(arg_hi, arg_lo));
    /* With no uc_link a return would end the thread; never allow it. */
    abort();
}

void *cw__coro_make(void *lo, void *top, void (*fn)(void *), void *arg)
{
    ucontext_t *uc;
    uint64_t f = (uintptr_t)fn;
    uint64_t a = (uintptr_t)arg;

    uc = (ucontext_t *)(((uintptr_t)top - sizeof *uc) & ~(uintptr_t)15);
    if (getcontext(uc) != 0)
        abort();
    uc->uc_link = NULL;
    uc->uc_stack.ss_sp = lo;
    uc->uc_stack.ss_size = (size_t)((char *)uc - (char *)lo);
    makecontext(uc, (void (*)(void))start, 4, (unsigned)(f >> 32), (unsigned)f, (unsigned)(a >> 32),
                (unsigned)a);
    return uc;
}

void cw__coro_jump(void **save, void *to)
{
    ucontext_t here;

    /* A context saved here runs on a stack we did not describe to
     * makecontext.  Say so: ASan's swapcontext hook reads uc_stack of
     * the context being resumed to reset that stack's shadow. */
    here.uc_stack.ss_sp = NULL;
    here.uc_stack.ss_size = 0;
    *save = &here;
    if (swapcontext(&here, to) != 0)
        abort();
}

#endif
