/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * stack.c - task stacks: mmap'd, with an inaccessible guard page below so
 * that an overflow faults instead of writing over a neighbour.
 *
 * Stacks are made when a task first runs, not at spawn, so tasks aborted
 * before they start cost no stack. A failure here ends the task with
 * CW_ERR_NOMEM (spec/04-tasks.md).
 */
#include <sys/mman.h>
#include <unistd.h>

#include "skeleton.h"

/* Valgrind takes a jump to another stack for a huge frame unless the stack
 * is registered; the macros do nothing outside valgrind. */
#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define SK_VALGRIND 1
#endif
#endif

static size_t page_size(void)
{
    long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? (size_t)p : 4096;
}

bool sk_stack_alloc(sk_task *t, size_t size, bool guard)
{
    size_t page = page_size();
    size_t usable = (size + page - 1) / page * page;
    size_t len = usable + (guard ? page : 0);
    void *base =
        mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
    if (base == MAP_FAILED)
        return false;
    if (guard && mprotect(base, page, PROT_NONE) != 0) {
        munmap(base, len);
        return false;
    }
    t->stack = base;
    t->stack_len = len;
#ifdef SK_VALGRIND
    t->stack_id = VALGRIND_STACK_REGISTER((char *)base, (char *)base + len);
#endif
    return true;
}

void sk_stack_free(sk_task *t)
{
    if (!t->stack)
        return;
#ifdef SK_VALGRIND
    VALGRIND_STACK_DEREGISTER(t->stack_id);
#endif
    munmap(t->stack, t->stack_len);
    t->stack = NULL;
}
