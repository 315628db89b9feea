/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * allocator.h - the suite's allocator: malloc, calloc, realloc,
 * posix_memalign, aligned_alloc and memalign of the whole process, the
 * backend under test's included (linked in or loaded as a shared object),
 * pass through to libc's until a case arms them to refuse one allocation
 * as libc refuses when memory is exhausted.
 *
 * An allocation is named by its *place*: where it was asked for, as the
 * hash of its innermost callers, so that one place means the same call in
 * every run of a workload, whichever thread makes it and however many
 * allocations came before it.
 */
#ifndef CWC_ALLOCATOR_H
#define CWC_ALLOCATOR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum { CWC_PLACES_MAX = 2048, CWC_PLACE_FRAMES = 4 };

/* The places of a recorded run, in the order they first asked; kept in
 * memory shared with the child processes that make the runs. */
typedef struct cwc_places {
    size_t n; /* places past CWC_PLACES_MAX are not noted */
    uint64_t id[CWC_PLACES_MAX];
    void *frames[CWC_PLACES_MAX][CWC_PLACE_FRAMES];
    bool refused; /* an armed refusal found its place */
} cwc_places;

/* Whether the process allocates through the suite's allocator: false in a
 * build under AddressSanitizer or ThreadSanitizer (whose allocators the
 * suite's would bypass, so it is left out) and under valgrind (which
 * replaces every allocator). */
bool cwc_allocator_live(void);

/* From now on, note every new place in `out` (shared memory the caller
 * owns). */
void cwc_allocator_record(cwc_places *out);

/* From now on, refuse the first allocation made at place `id`, and with
 * `and_after` every allocation after it too; `out->refused` says whether
 * it came. */
void cwc_allocator_refuse(cwc_places *out, uint64_t id, bool and_after);

/* Back to passing everything through. */
void cwc_allocator_off(void);

/* Bytes the process's allocations hold now (usable size of every block
 * handed out and not freed), counted while the allocator is live: a
 * difference of two readings is what was allocated and kept between them. */
long long cwc_heap_live(void);

/* Where the allocator is the suite's: from now on glibc fills memory it
 * hands out and memory given back with set bytes (mallopt M_PERTURB), so
 * that a backend reading memory it freed, or memory it never wrote, reads
 * a pattern rather than what happened to be there. */
void cwc_allocator_perturb(void);

#endif
