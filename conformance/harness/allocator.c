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
 * freed (cwc_heap_live), by the size each block was asked for. glibc's own
 * count (mallinfo2) cannot serve: it counts the blocks a thread's cache
 * holds for reuse as in use, and those grow for a while with any workload.
 * And it guards each block's end (below, "Guarded blocks"): a write past
 * it is seen when the block is freed.
 */
#include "harness/allocator.h"
#include "harness/instrumented.h"
#include "harness/misuse.h"

#include <dlfcn.h>
#include <errno.h>
#include <execinfo.h>
#include <link.h>
#include <malloc.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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

/* ---- Guarded blocks -------------------------------------------------------------------- */

#ifndef CWC_FOREIGN_ALLOCATOR
void *__libc_malloc(size_t size);
void *__libc_calloc(size_t n, size_t size);
void *__libc_realloc(void *p, size_t size);
void *__libc_memalign(size_t alignment, size_t size);
void __libc_free(void *p);

/* Every block handed out has a head of 16 bytes just before it, which
 * says how many bytes were asked for and how far before the head glibc's
 * block starts, and GUARD bytes of a known value just after its last
 * byte. A backend that writes past the end of a block (one byte too many
 * in a copy, a terminator with no room kept) changes them, and the free
 * that gives the block back sees it: a misuse (ABI-005) reported there,
 * where without the guard the write would land in the next block and show
 * much later or never. Both fields are sealed with the block's address,
 * so a pointer whose 16 bytes before do not unseal to a plausible head
 * was not handed out here (glibc's own, from before the allocator was
 * bound) and passes to glibc untouched. This is the replacement glibc's
 * manual describes ("Replacing malloc"): glibc calls malloc, free and the
 * others through these names, its own allocations included. */
typedef struct block_head {
    uint64_t size;   /* sealed: the bytes asked for */
    uint64_t offset; /* sealed: from glibc's block to the one handed out */
} block_head;

enum { HEAD = sizeof(block_head), GUARD = 16, GUARD_BYTE = 0xcb };
#define SIZE_MAX_ASKED ((size_t)1 << 47)
#define OFFSET_MAX ((size_t)1 << 22)

static uint64_t seal(const void *p, uint64_t v, uint64_t salt)
{
    return v ^ ((uint64_t)(uintptr_t)p * 0x9e3779b97f4a7c15u) ^ salt;
}

static block_head *head_of(void *p)
{
    return (block_head *)((char *)p - HEAD);
}

/* `p`'s size and offset, if this allocator handed it out. */
static bool ours(void *p, size_t *size, size_t *offset)
{
    block_head h;
    memcpy(&h, head_of(p), sizeof h);
    uint64_t n = seal(p, h.size, 0x5a17), off = seal(p, h.offset, 0x0ff5e7);
    if (n >= SIZE_MAX_ASKED || off < HEAD || off > OFFSET_MAX || (off & (off - 1)) != 0)
        return false;
    *size = (size_t)n;
    *offset = (size_t)off;
    return true;
}

/* Make glibc's block `q` (NULL: none) the one handed out, `offset` into it. */
static void *stamped(void *q, size_t size, size_t offset)
{
    if (!q)
        return NULL;
    void *p = (char *)q + offset;
    block_head h = {seal(p, size, 0x5a17), seal(p, offset, 0x0ff5e7)};
    memcpy(head_of(p), &h, sizeof h);
    memset((char *)p + size, GUARD_BYTE, GUARD);
    atomic_fetch_add_explicit(&live_bytes, (long long)size, memory_order_relaxed);
    return p;
}

static void check_guard(void *p, size_t size)
{
    const unsigned char *g = (const unsigned char *)p + size;
    for (int i = 0; i < GUARD; i++)
        if (g[i] != GUARD_BYTE)
            cwc_misuse("ABI-005: a %zu-byte block at %p was written past its end (byte %d "
                       "after its last changed to %#x): a heap overrun",
                       size, p, i, g[i]);
}

/* Give back `p`, one of ours of `size` bytes, `offset` into glibc's. */
static void release(void *p, size_t size, size_t offset)
{
    check_guard(p, size);
    atomic_fetch_sub_explicit(&live_bytes, (long long)size, memory_order_relaxed);
    memset(head_of(p), 0, HEAD); /* a second free finds no head: glibc's check then */
    __libc_free((char *)p - offset);
}

/* `size` plus what a guarded block adds, or false when that overflows. */
static bool padded(size_t size, size_t extra, size_t *out)
{
    if (size >= SIZE_MAX_ASKED)
        return false;
    *out = size + extra + GUARD;
    return true;
}

static void *aligned_block(size_t alignment, size_t size)
{
    size_t a = alignment < HEAD ? HEAD : alignment, total;
    while (a & (a - 1)) /* memalign takes any alignment, rounded up */
        a += a & -a;
    if (a > OFFSET_MAX || !padded(size, a, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return stamped(__libc_memalign(a, total), size, a);
}

/* ---- The allocation functions ---------------------------------------------------------- */

void *malloc(size_t size)
{
    size_t total;
    if (refused() || !padded(size, HEAD, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return stamped(__libc_malloc(total), size, HEAD);
}

void *calloc(size_t n, size_t size)
{
    size_t bytes, total;
    if (refused() || __builtin_mul_overflow(n, size, &bytes) || !padded(bytes, HEAD, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    return stamped(__libc_calloc(1, total), bytes, HEAD);
}

void free(void *p)
{
    size_t size, offset;
    if (!p)
        return;
    if (ours(p, &size, &offset))
        release(p, size, offset);
    else
        __libc_free(p);
}

/* A failed realloc keeps the old block as it was; realloc(p, 0) frees it
 * and returns NULL, as glibc's does. */
void *realloc(void *p, size_t size)
{
    size_t old, offset, total;
    if (!p)
        return malloc(size);
    if (!ours(p, &old, &offset)) { /* glibc's own: left to it */
        if (refused()) {
            errno = ENOMEM;
            return NULL;
        }
        return __libc_realloc(p, size);
    }
    if (size == 0) {
        release(p, old, offset);
        return NULL;
    }
    if (refused() || !padded(size, HEAD, &total)) {
        errno = ENOMEM;
        return NULL;
    }
    check_guard(p, old);
    if (offset != HEAD) { /* an aligned block: glibc's realloc would lose the alignment */
        void *q = malloc(size);
        if (q) {
            memcpy(q, p, old < size ? old : size);
            release(p, old, offset);
        }
        return q;
    }
    void *q = __libc_realloc((char *)p - HEAD, total);
    if (!q)
        return NULL;
    atomic_fetch_sub_explicit(&live_bytes, (long long)old, memory_order_relaxed);
    return stamped(q, size, HEAD);
}

void *reallocarray(void *p, size_t n, size_t size)
{
    size_t bytes;
    if (__builtin_mul_overflow(n, size, &bytes)) {
        errno = ENOMEM;
        return NULL;
    }
    return realloc(p, bytes);
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
    void *p = aligned_block(alignment, size);
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
    return aligned_block(alignment, size);
}

void *memalign(size_t alignment, size_t size)
{
    if (refused()) {
        errno = ENOMEM;
        return NULL;
    }
    return aligned_block(alignment, size);
}

void *valloc(size_t size)
{
    return memalign((size_t)sysconf(_SC_PAGESIZE), size);
}

void *pvalloc(size_t size)
{
    size_t page = (size_t)sysconf(_SC_PAGESIZE);
    return memalign(page, size ? (size + page - 1) / page * page : page);
}

/* The bytes a program may use: those it asked for (the guard follows). A
 * block glibc handed out before the allocator was bound is asked of glibc. */
size_t malloc_usable_size(void *p)
{
    static size_t (*_Atomic next)(void *);
    size_t size, offset;
    if (!p)
        return 0;
    if (ours(p, &size, &offset))
        return size;
    size_t (*call)(void *) = atomic_load(&next);
    if (!call) {
        *(void **)&call = dlsym(RTLD_NEXT, "malloc_usable_size");
        atomic_store(&next, call);
    }
    return call ? call(p) : 0;
}
#endif
