/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * alloc_fail.c - the allocator the allocation sweep links the reference
 * with: every malloc, calloc, realloc and posix_memalign of reference/ is
 * routed here at link time (ld --wrap), counted, and the N-th (or the N-th
 * and every later one) fails as libc fails when memory is exhausted.
 *
 * Wrapping at the link rather than through a function the reference
 * calls catches every allocation, including one a later change adds with
 * a plain malloc. Allocations inside shared libraries (libc's own, libcrypto,
 * Check) are not routed and never fail.
 */
#include <errno.h>
#include <execinfo.h>
#include <stdlib.h>
#include <unistd.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tests/alloc_fail.h"

void *__real_malloc(size_t size);
void *__real_calloc(size_t n, size_t size);
void *__real_realloc(void *p, size_t size);
int __real_posix_memalign(void **out, size_t alignment, size_t size);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t n, size_t size);
void *__wrap_realloc(void *p, size_t size);
int __wrap_posix_memalign(void **out, size_t alignment, size_t size);

static atomic_long count;
static atomic_long fail_at; /* 0: none fails */
static atomic_bool persist;
static atomic_long failed;
static atomic_ulong first_site; /* where the first refused allocation was asked for */

void cw_alloc_fail_arm(long n, bool and_after)
{
    void *warm[1];
    backtrace(warm, 1); /* loads what backtrace needs before anything fails */
    atomic_store(&count, 0);
    atomic_store(&failed, 0);
    atomic_store(&first_site, 0);
    atomic_store(&persist, and_after);
    atomic_store(&fail_at, n);
}

long cw_alloc_count(void)
{
    return atomic_load(&count);
}

long cw_alloc_failed(void)
{
    return atomic_load(&failed);
}

unsigned long cw_alloc_failed_site(void)
{
    return atomic_load(&first_site);
}

/* With CW_SWEEP_TRACE set, the first refused allocation prints where it
 * was asked for (resolve the addresses with addr2line -f -e BINARY). */
static void trace(void)
{
    static atomic_bool traced;
    if (!getenv("CW_SWEEP_TRACE") || atomic_exchange(&traced, true))
        return;
    void *frames[16];
    int n = backtrace(frames, 16);
    backtrace_symbols_fd(frames, n, STDERR_FILENO);
}

/* The refused allocation's place: its callers three deep, hashed, so
 * that an allocation inside a helper (cw_grow, cw_strdup) counts once per
 * place that uses the helper. */
static unsigned long site_of(void)
{
    void *frames[6];
    int n = backtrace(frames, 6);
    unsigned long h = 1469598103934665603ul;
    for (int i = 2; i < n; i++) /* past fails() and the wrapper */
        h = (h ^ (unsigned long)(uintptr_t)frames[i]) * 1099511628211ul;
    return h ? h : 1;
}

static bool fails(void)
{
    long n = atomic_fetch_add(&count, 1) + 1;
    long at = atomic_load(&fail_at);
    if (at == 0 || n < at || (n > at && !atomic_load(&persist)))
        return false;
    if (atomic_fetch_add(&failed, 1) == 0)
        atomic_store(&first_site, site_of());
    trace();
    return true;
}

void *__wrap_malloc(size_t size)
{
    if (fails()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_malloc(size);
}

void *__wrap_calloc(size_t n, size_t size)
{
    if (fails()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_calloc(n, size);
}

void *__wrap_realloc(void *p, size_t size)
{
    if (fails()) {
        errno = ENOMEM;
        return NULL;
    }
    return __real_realloc(p, size);
}

int __wrap_posix_memalign(void **out, size_t alignment, size_t size)
{
    if (fails())
        return ENOMEM;
    return __real_posix_memalign(out, alignment, size);
}
