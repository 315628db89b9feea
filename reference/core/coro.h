/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Stackful coroutines: task stacks and context switching.
 *
 * A task runs on its own stack so that it can block anywhere, at any call
 * depth, and be resumed later, possibly by another OS thread.  This header
 * is private to the runtime; nothing here is part of the public API.
 *
 * Two backends implement the switch.  On x86_64 and AArch64 a few lines of
 * assembly save only what the C ABI says a callee must preserve, which is
 * an order of magnitude cheaper than swapcontext(3): that one also saves
 * the signal mask with a system call on every switch.  Other machines, or
 * any build defining CW_CORO_UCONTEXT, use getcontext/makecontext/
 * swapcontext instead.  Both present exactly the interface below.
 *
 * Nothing here takes a lock or keeps global state.  Every call is safe
 * from any thread, provided that one coroutine is never running (or being
 * switched to) on two threads at once: that exclusion is the scheduler's
 * job, and it must publish a suspended coroutine to another thread with
 * release/acquire ordering like any other shared object.
 */
#ifndef CW_CORE_CORO_H
#define CW_CORE_CORO_H

#include <stddef.h>

/*
 * Sanitizers need to be told about every stack switch, and the struct
 * below grows fields for them.  The layout therefore depends on these
 * flags: every object that includes this header must be built with the
 * same sanitizer options (which any sane build does anyway).
 */
#if defined(__SANITIZE_ADDRESS__)
#define CW_CORO_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CW_CORO_ASAN 1
#endif
#endif
#ifndef CW_CORO_ASAN
#define CW_CORO_ASAN 0
#endif

#if defined(__SANITIZE_THREAD__)
#define CW_CORO_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CW_CORO_TSAN 1
#endif
#endif
#ifndef CW_CORO_TSAN
#define CW_CORO_TSAN 0
#endif

/* Keep these conditions in step with the guards of coro_*.S. */
#if !defined(CW_CORO_UCONTEXT) && !defined(__ILP32__) &&                                           \
    (defined(__x86_64__) || defined(__aarch64__))
#define CW_CORO_USE_UCONTEXT 0
#else
#define CW_CORO_USE_UCONTEXT 1
#endif

/*
 * Smallest stack handed out.  Below this, the first libc call that
 * formats a number or resolves a symbol lazily can already overflow.
 */
#define CW_STACK_MIN ((size_t)16 * 1024)

/*
 * A task stack: an anonymous mapping whose lowest page is PROT_NONE, so a
 * task that overflows dies with SIGSEGV instead of silently corrupting
 * whatever happens to be mapped below.
 *
 *   map, map_size  the whole mapping, guard page included (for munmap)
 *   lo, size       the usable part, [lo, lo + size); the stack grows down
 *                  from lo + size towards the guard page just below lo
 *   valgrind_id    handle from VALGRIND_STACK_REGISTER, which tells
 *                  valgrind that a jump of the stack pointer into this
 *                  range is a switch and not a wild write; meaningless
 *                  when not running under valgrind
 *
 * The caller owns the struct; the mapping belongs to it until
 * cw_stack_free.
 */
typedef struct cw_stack {
    void *map;
    size_t map_size;
    void *lo;
    size_t size;
    unsigned valgrind_id;
} cw_stack;

/*
 * Map a stack of at least `size` usable bytes: rounded up to whole pages,
 * and to CW_STACK_MIN.  The pages are committed lazily by the kernel, so a
 * generous size costs address space, not memory.  Returns 0, or -1 with
 * errno set to ENOMEM when the mapping fails; `*s` is then zeroed, so
 * cw_stack_free on it is harmless.
 */
int cw_stack_alloc(cw_stack *s, size_t size);
/* The same, with the guard page only when `guard` is non-zero. A guarded
 * stack is two kernel mappings (the guard's protection differs), and the
 * kernel limits a process's mappings (vm.max_map_count, 65530 by default):
 * runs of more than ~30,000 simultaneous tasks need unguarded stacks. */
int cw_stack_map(cw_stack *s, size_t size, int guard);

/*
 * Unmap the stack and zero `*s`.  Safe on a zeroed struct, and therefore
 * also when called twice.  No coroutine may be running on the stack, and
 * one that was suspended on it can never be resumed again.
 */
void cw_stack_free(cw_stack *s);
/* Make the stack of a coroutine that has ended ready for another one,
 * without giving it back to the system. */
void cw_stack_recycle(cw_stack *s);

/*
 * Stacks of ended coroutines, kept for the next ones: mapping and unmapping
 * a stack costs far more than a switch.  Not thread-safe: its owner guards
 * it (the core: with the runtime's lock).
 */
typedef struct cw_stack_cache {
    cw_stack *stacks;
    size_t n, cap;
} cw_stack_cache;

/* Room for `cap` stacks: 0, or ENOMEM with nothing allocated. */
int cw_stack_cache_init(cw_stack_cache *c, size_t cap);
/* Move a kept stack into `*s` and return 1, or return 0 when none is kept. */
int cw_stack_cache_take(cw_stack_cache *c, cw_stack *s);
/* Keep the stack of an ended coroutine, or free it when the cache is full
 * (a zeroed `*s` is left alone); `*s` is zeroed either way. */
void cw_stack_cache_put(cw_stack_cache *c, cw_stack *s);
/* Free every kept stack and the cache's own array. */
void cw_stack_cache_free(cw_stack_cache *c);

/*
 * A saved execution context.  The caller owns the struct and must keep it
 * at a fixed address from cw_coro_init (or from the switch that saves into
 * it) until the context has been resumed, or for a coroutine until it has
 * made its final switch: both sides of a switch read and write it.
 *
 * A zeroed cw_coro is a valid `from`: that is how a thread's original
 * stack, or any stack not prepared by cw_coro_init, is saved the first
 * time.  Never pass uninitialized memory, as sanitizer builds read fields
 * of `from`.
 */
typedef struct cw_coro cw_coro;
struct cw_coro {
    /* Stack pointer of the suspended context.  The registers themselves
     * are saved on its own stack, just below this address (with the
     * ucontext backend it points at a ucontext_t kept there instead). */
    void *sp;
#if CW_CORO_ASAN
    /* Bounds of this context's stack, which ASan has to be given when
     * something switches here.  Set by cw_coro_init for coroutines, and
     * learnt from ASan at each switch away for foreign stacks. */
    const void *asan_lo;
    size_t asan_size;
    /* The context that switched here, so that on landing we can record
     * the bounds of the stack it left; NULL when it has finished. */
    cw_coro *asan_from;
#endif
#if CW_CORO_TSAN
    /* TSan's own view of this context, created on the first switch to
     * a coroutine and freed after it has left for the last time.  It is
     * not tied to any OS thread, which is what lets a coroutine move. */
    void *tsan_fiber;
    /* Fiber of a coroutine that finished by switching here.  It cannot
     * free its own fiber while still running on it, so we do that once
     * we have landed. */
    void *tsan_dead;
#endif
};

/* Body of a coroutine.  Must never return; see cw_coro_init. */
typedef void (*cw_coro_entry)(void *arg);

/*
 * Prepare `c` to run entry(arg) on stack `s` the first time it is switched
 * to.  `s` must stay mapped until the coroutine has made its final switch.
 * The top of the stack holds a little bookkeeping: a few words, or about
 * a kilobyte (a ucontext_t) with the fallback backend.
 *
 * entry must never return: it ends by calling cw_coro_exit_switch, after
 * which the runtime may free the stack.  There is no caller frame to
 * return into, so a return aborts the process with a message rather than
 * jumping to garbage.
 *
 * `c` may be reused for a new coroutine once the previous one has made its
 * final switch (or was never started).  A coroutine that is abandoned
 * while suspended leaks its sanitizer bookkeeping but nothing else.
 */
void cw_coro_init(cw_coro *c, cw_stack *s, cw_coro_entry entry, void *arg);

/*
 * Save the running context into `from` and resume `to`.  Returns when
 * something later switches back to `from`, possibly on another thread.
 *
 * `to` must be a coroutine prepared by cw_coro_init and not yet started,
 * or a context suspended by an earlier cw_coro_switch; it must not be
 * `from` itself.  Preserved across the call: the callee-saved registers of
 * the platform ABI and the floating-point control state (x87 control word
 * and MXCSR, or FPCR), so each coroutine keeps its own rounding mode.
 *
 * Code that keeps the address of a thread-local variable across this call
 * will be wrong after a move to another thread; re-read such addresses
 * after every switch that might migrate.
 */
void cw_coro_switch(cw_coro *from, cw_coro *to);

/*
 * The final switch of a coroutine, made from inside it: like
 * cw_coro_switch, but `from` is never resumed.  It exists because ASan and
 * TSan keep per-fiber state (a fake stack, a shadow call stack) that only
 * a switch known to be the last one can release; the coroutine cannot do
 * it itself while still running on that state.  Once `to` is running,
 * nothing refers to `from` or its stack any more: the runtime may free
 * both, and reuse `from` with cw_coro_init.
 */
_Noreturn void cw_coro_exit_switch(cw_coro *from, cw_coro *to);

/*
 * Backend hooks, defined by coro_x86_64.S, coro_aarch64.S or
 * coro_ucontext.c and used only by coro.c.
 *
 * cw__coro_jump stores the current context's stack pointer in *save and
 * resumes the one whose saved stack pointer is `to`.  Hidden, so that
 * calls bind directly even inside a shared library: a detour through the
 * PLT would cost a visible share of a switch.
 */
#if defined(__GNUC__)
#define CW_CORO_HIDDEN __attribute__((visibility("hidden")))
#else
#define CW_CORO_HIDDEN
#endif
CW_CORO_HIDDEN void cw__coro_jump(void **save, void *to);
#if CW_CORO_USE_UCONTEXT
/* Build a context that calls fn(arg) on the stack [lo, top) and return
 * its saved stack pointer for cw__coro_jump. */
CW_CORO_HIDDEN void *cw__coro_make(void *lo, void *top, void (*fn)(void *), void *arg);
#endif

#endif
