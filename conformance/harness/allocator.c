/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * allocator.c - the suite's allocator (allocator.h).
 *
 * The functions below take the names of libc's, so the dynamic linker
 * binds every call in the process to them: the backend's, a shared object
 * it loads, and libc's own internal ones (strdup, fopen, pthread_create),
 * which glibc routes through the interposable malloc. They pass through to
 * glibc's exported __libc_* entries, the same allocator, so libc's free
 * releases what they return. Disarmed, an allocation costs two atomic
 * loads more than libc's.
 *
 * Under AddressSanitizer and ThreadSanitizer these definitions would take
 * the place of the sanitizer's own allocator (and its free would then see
 * foreign pointers), so such a build leaves them out and the cases that
 * need them run without refusals. Other C libraries have no __libc_* entry
 * points: there too the allocator is left out. The dynamic linker's own
 * allocations pass through always (locate_linker).
 *
 * Live, the allocator also keeps the count of bytes handed out and not yet
 * freed (cwc_heap_live), by each block's usable size: free is taken over
 * for that alone. glibc's own count (mallinfo2) cannot serve: it counts the
 * blocks a thread's cache holds for reuse as in use, and those grow for a
 * while with any workload.
 */
#include "harness/allocator.h"
#include "harness/instrumented.h"

#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

typedef enum mode { MODE_OFF, MODE_RECORD, MODE_REFUSE, MODE_REFUSE_ALL } mode;

static _Atomic(mode) current = MODE_OFF;
static cwc_places *places; /* where this run's places go; shared memory */
static uint64_t target;    /* MODE_REFUSE: the place to refuse */
static bool refuse_after;  /* and every allocation after it */
static atomic_flag places_lock = ATOMIC_FLAG_INIT;
static atomic_bool passed_through;   /* some allocation came here */
static _Thread_local bool in_lookup; /* backtrace may allocate: not a place */
/* Usable bytes handed out less those freed. Signed: a block the dynamic
 * linker made before the allocator was called may be freed through it. */
static atomic_llong live_bytes;

/* ---- Places ------------------------------------------------------------------------ */

/* Frames to skip: place_of, decide and the allocation function itself. */
enum { OWN_FRAMES = 3 };

/* The place of the allocation being made: its callers, hashed (FNV-1a
 * over the addresses). `frames` receives them. */
static __attribute__((noinline)) uint64_t place_of(void **frames)
{
    void *all[OWN_FRAMES + CWC_PLACE_FRAMES] = {0};
    int n = backtrace(all, OWN_FRAMES + CWC_PLACE_FRAMES);
    uint64_t h = 1469598103934665603u;
    for (int i = 0; i < CWC_PLACE_FRAMES; i++) {
        frames[i] = OWN_FRAMES + i < n ? all[OWN_FRAMES + i] : NULL;
        h = (h ^ (uint64_t)(uintptr_t)frames[i]) * 1099511628211u;
    }
    return h ? h : 1;
}

static void places_note(uint64_t id, void **frames)
{
    while (atomic_flag_test_and_set_explicit(&places_lock, memory_order_acquire))
        ;
    size_t i = 0;
    while (i < places->n && places->id[i] != id)
        i++;
    if (i == places->n && i < CWC_PLACES_MAX) {
        places->id[i] = id;
        memcpy(places->frames[i], frames, sizeof places->frames[i]);
        places->n++;
    }
    atomic_flag_clear_explicit(&places_lock, memory_order_release);
}

/* ---- The dynamic linker's own allocations ---------------------------------------------- */

/* The dynamic linker allocates a shared object's thread-local storage on a
 * thread's first use of it, and glibc ends the process when that fails,
 * whatever the object does: its allocations are never refused. */
static uintptr_t linker_lo, linker_hi;

static int find_interp(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char **interp = arg;
    for (int i = 0; i < info->dlpi_phnum; i++)
        if (!*interp && info->dlpi_phdr[i].p_type == PT_INTERP)
            *interp = (const char *)(info->dlpi_addr + info->dlpi_phdr[i].p_vaddr);
    return 0;
}

static int find_linker(struct dl_phdr_info *info, size_t size, void *arg)
{
    (void)size;
    const char *interp = arg;
    if (!info->dlpi_name || strcmp(info->dlpi_name, interp) != 0)
        return 0;
    for (int i = 0; i < info->dlpi_phnum; i++) {
        const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
        uintptr_t lo = info->dlpi_addr + ph->p_vaddr, hi = lo + ph->p_memsz;
        if (ph->p_type != PT_LOAD)
            continue;
        linker_lo = linker_lo && linker_lo < lo ? linker_lo : lo;
        linker_hi = linker_hi > hi ? linker_hi : hi;
    }
    return 1;
}

static void locate_linker(void)
{
    const char *interp = NULL;
    if (linker_hi)
        return;
    dl_iterate_phdr(find_interp, &interp);
    if (interp)
        dl_iterate_phdr(find_linker, (void *)interp);
}

static bool from_linker(void *const *frames)
{
    uintptr_t at = (uintptr_t)frames[0];
    return at >= linker_lo && at < linker_hi;
}

/* ---- The decision -------------------------------------------------------------------- */

/* Whether the allocation being made is refused. */
static __attribute__((noinline)) bool decide(void)
{
    mode m = atomic_load_explicit(&current, memory_order_acquire);
    if (m == MODE_OFF || in_lookup)
        return false;
    in_lookup = true;
    void *frames[CWC_PLACE_FRAMES];
    uint64_t id = place_of(frames);
    in_lookup = false;
    if (from_linker(frames))
        return false;
    if (m == MODE_REFUSE_ALL)
        return true;
    if (m == MODE_RECORD) {
        places_note(id, frames);
        return false;
    }
    if (id != target)
        return false;
    mode next = refuse_after ? MODE_REFUSE_ALL : MODE_OFF;
    /* Of two threads at the place at once, one refuses. */
    if (!atomic_compare_exchange_strong(&current, &m, next))
        return next == MODE_REFUSE_ALL && atomic_load(&current) == MODE_REFUSE_ALL;
    places->refused = true;
    return true;
}

static inline __attribute__((always_inline)) bool refused(void)
{
    if (!atomic_load_explicit(&passed_through, memory_order_relaxed))
        atomic_store_explicit(&passed_through, true, memory_order_relaxed);
    return decide();
}

/* ---- Arming ------------------------------------------------------------------------ */

bool cwc_allocator_live(void)
{
#ifdef CWC_FOREIGN_ALLOCATOR
    return false;
#else
    if (RUNNING_ON_VALGRIND)
        return false;
    void *(*volatile alloc)(size_t) = malloc; /* a call the compiler cannot drop */
    free(alloc(1));
    return atomic_load(&passed_through);
#endif
}

/* backtrace loads its unwinder on first use, which allocates: do that now. */
static void warm(void)
{
    void *frames[2];
    backtrace(frames, 2);
    locate_linker();
}

void cwc_allocator_record(cwc_places *out)
{
    warm();
    places = out;
    places->n = 0;
    places->refused = false;
    atomic_store(&current, MODE_RECORD);
}

void cwc_allocator_refuse(cwc_places *out, uint64_t id, bool and_after)
{
    warm();
    places = out;
    places->refused = false;
    target = id;
    refuse_after = and_after;
    atomic_store(&current, MODE_REFUSE);
}

void cwc_allocator_off(void)
{
    atomic_store(&current, MODE_OFF);
}

long long cwc_heap_live(void)
{
    return atomic_load_explicit(&live_bytes, memory_order_relaxed);
}

void cwc_allocator_perturb(void)
{
#ifndef CWC_FOREIGN_ALLOCATOR
    if (cwc_allocator_live())
        mallopt(M_PERTURB, 0xa5);
#endif
}

/* ---- The allocation functions ---------------------------------------------------------- */

#ifndef CWC_FOREIGN_ALLOCATOR
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void __libc_free(void *p);

/* `p`, just handed out (or NULL), added to the live count. */
static void *counted(void *p)
{
    if (p)
        atomic_fetch_add_explicit(&live_bytes, (long long)malloc_usable_size(p),
                                  memory_order_relaxed);
    return p;
}

static void uncount(void *p)
{
    if (p)
        atomic_fetch_sub_explicit(&live_bytes, (long long)malloc_usable_size(p),
                                  memory_order_relaxed);
}

void *malloc(size_t size)
{
    if (refused()) {
        errno = ENOMEM;
        return NULL;
    }
    return counted(__libc_malloc(size));
}

void *calloc(size_t n, size_t size)
{
    if (refused()) {
        errno = ENOMEM;
        return NULL;
    }
    return counted(__libc_calloc(n, size));
}

void free(void *p)
{
    uncount(p);
    __libc_free(p);
}

/* The old block leaves the count only once libc has let it go: a failed
 * realloc keeps it, realloc(p, 0) frees it (glibc) and returns NULL. */
void *realloc(void *p, size_t size)
{
    if (refused()) {
        errno = ENOMEM;
        return NULL;
    }
    long long old = p ? (long long)malloc_usable_size(p) : 0;
    void *q = __libc_realloc(p, size);
    if (q || size == 0)
        atomic_fetch_sub_explicit(&live_bytes, old, memory_order_relaxed);
    return counted(q);
}

static bool power_of_two(size_t x)
{
    return x && !(x & (x - 1));
}

int posix_memalign(void **out, size_t alignment, size_t size)
{
    if (!power_of_two(alignment) || alignment % sizeof(void *) != 0)
        return EINVAL;
    if (refused())
        return ENOMEM;
    void *p = counted(__libc_memalign(alignment, size));
    if (!p)
        return ENOMEM;
    *out = p;
    return 0;
}

void *aligned_alloc(size_t alignment, size_t size)
{
    if (!power_of_two(alignment)) {
        errno = EINVAL;
        return NULL;
    }
    if (refused()) {
        errno = ENOMEM;
        return NULL;
    }
    return counted(__libc_memalign(alignment, size));
}

void *memalign(size_t alignment, size_t size)
{
    if (refused()) {
        errno = ENOMEM;
        return NULL;
    }
    return counted(__libc_memalign(alignment, size));
}
#endif
