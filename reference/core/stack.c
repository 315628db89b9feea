/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Task stacks: private anonymous mappings with a guard page below, and
 * the cache of stacks kept for reuse.
 *
 * Each stack is its own mapping rather than a slice of a shared arena, so
 * freeing one returns its memory to the system at once and an overflow
 * can only ever hit its own guard page.
 */
#include "core/coro.h"

#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#define CW_HAVE_VALGRIND 1
#endif
#endif

#if CW_CORO_ASAN
#include <sanitizer/asan_interface.h>
#endif

/* Not a requirement, only a hint (the kernel may skip transparent huge
 * pages for it); harmless to do without where it is missing. */
#ifndef MAP_STACK
#define MAP_STACK 0
#endif

static size_t page_size(void)
{
    long n = sysconf(_SC_PAGESIZE);

    return n > 0 ? (size_t)n : 4096;
}

int cw_stack_alloc(cw_stack *s, size_t size)
{
    return cw_stack_map(s, size, 1);
}

int cw_stack_map(cw_stack *s, size_t size, int guard)
{
    size_t page = page_size();
    size_t below = guard ? page : 0;
    char *map;

    *s = (cw_stack){0};
    if (size < CW_STACK_MIN)
        size = CW_STACK_MIN;
    if (size > SIZE_MAX - 2 * page)
        goto fail;
    size = (size + page - 1) & ~(page - 1);

    /* Map everything writable and then revoke the guard page, rather
     * than the reverse, so that the guard is never charged as committed
     * memory. */
    map = mmap(NULL, size + below, PROT_READ | PROT_WRITE,
               MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE, -1, 0);
    if (map == MAP_FAILED)
        goto fail;
    if (below && mprotect(map, below, PROT_NONE) != 0) {
        munmap(map, size + below);
        goto fail;
    }
    s->map = map;
    s->map_size = size + below;
    s->lo = map + below;
    s->size = size;
#ifdef CW_HAVE_VALGRIND
    s->valgrind_id = VALGRIND_STACK_REGISTER(map + below, map + below + size - 1);
#endif
    return 0;
fail:
    /* Whatever the kernel said, the caller can only act on "no memory". */
    errno = ENOMEM;
    return -1;
}

void cw_stack_recycle(cw_stack *s)
{
#if CW_CORO_ASAN
    /* The last coroutine on this stack never returned from its frames, so
     * their redzones are still poisoned: clear them for the next one. */
    __asan_unpoison_memory_region(s->lo, s->size);
#else
    (void)s;
#endif
}

void cw_stack_free(cw_stack *s)
{
    if (!s->map)
        return;
#ifdef CW_HAVE_VALGRIND
    VALGRIND_STACK_DEREGISTER(s->valgrind_id);
#endif
#if CW_CORO_ASAN
    /* Frames of a coroutine that never returned stay poisoned in ASan's
     * shadow; clear it before the addresses can be mapped again for
     * something else. */
    __asan_unpoison_memory_region(s->lo, s->size);
#endif
    munmap(s->map, s->map_size);
    *s = (cw_stack){0};
}

int cw_stack_cache_init(cw_stack_cache *c, size_t cap)
{
    c->stacks = calloc(cap ? cap : 1, sizeof *c->stacks);
    c->n = 0;
    c->cap = c->stacks ? cap : 0;
    return c->stacks ? 0 : ENOMEM;
}

int cw_stack_cache_take(cw_stack_cache *c, cw_stack *s)
{
    if (!c->n)
        return 0;
    *s = c->stacks[--c->n];
    return 1;
}

void cw_stack_cache_put(cw_stack_cache *c, cw_stack *s)
{
    if (!s->map)
        return;
    if (c->n < c->cap) {
        cw_stack_recycle(s);
        c->stacks[c->n++] = *s;
        *s = (cw_stack){0};
    } else {
        cw_stack_free(s);
    }
}

void cw_stack_cache_free(cw_stack_cache *c)
{
    while (c->n)
        cw_stack_free(&c->stacks[--c->n]);
    free(c->stacks);
    c->stacks = NULL;
    c->cap = 0;
}
