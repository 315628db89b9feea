/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * locks.c - the suite's mutex calls: every pthread_mutex_lock,
 * pthread_mutex_unlock and condition wait of the process, the backend's
 * included, checked against what POSIX defines (ABI-005).
 *
 * As allocator.c does for malloc, the functions below take the names of
 * the C library's, so the dynamic linker binds every call of the process
 * to them, and they pass through to the next definition. A mutex of the
 * default (normal) kind that a thread unlocks, or waits on with a
 * condition variable, without holding it is undefined behaviour: glibc
 * then lets another thread in while the first is still inside, and a
 * race follows that a run may show once in a thousand. The same mistake
 * is seen here on its first time, race or not: glibc records the thread
 * that holds such a mutex (its __owner), and that thread must be the
 * caller. Locking again a mutex the caller holds is a wait for itself
 * that never ends; it is reported too, rather than left to the case's
 * timeout. Mutexes of the other kinds (recursive, error-checking,
 * robust, priority-inheriting) define these calls, and pass unchecked.
 *
 * After a fork the child's one thread may release what the forking
 * thread held (pthread_atfork's child handlers do): the forking thread's
 * id is kept for that. A sanitizer that intercepts these calls itself
 * (ThreadSanitizer) would lose track of its locks under these
 * definitions: such a build leaves them out, as it leaves out the
 * allocator; so does a C library other than glibc, whose mutex records
 * no holder.
 */
#include <dlfcn.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <unistd.h>

#include "harness/instrumented.h"
#include "harness/misuse.h"

#if defined(__GLIBC__) && !CWC_TSAN

/* glibc's kinds (the low bits of __kind) whose holder a call must be. */
enum { KIND_MASK = 0x7f, KIND_NORMAL = 0, KIND_ADAPTIVE = 3, KIND_ELISION = 256 };

static _Atomic unsigned forks; /* forks this process descends from, counted in the child */
static _Atomic pid_t forker;   /* in a child: the thread of the parent that forked */
static pid_t forking;          /* in the parent: the thread forking now */
static _Thread_local pid_t my_tid;
static _Thread_local unsigned my_forks;

static pid_t self(void)
{
    unsigned f = atomic_load_explicit(&forks, memory_order_relaxed);
    if (my_tid == 0 || my_forks != f) {
        my_tid = gettid();
        my_forks = f;
    }
    return my_tid;
}

static void before_fork(void)
{
    forking = self();
}

static void in_child(void)
{
    atomic_store(&forker, forking);
    atomic_fetch_add(&forks, 1);
}

/* Before main, so that no fork comes before it: a thread's id kept from
 * before a fork the handlers did not see would be the parent's. */
__attribute__((constructor)) static void watch_forks(void)
{
    if (pthread_atfork(before_fork, NULL, in_child) != 0)
        cwc_misuse("pthread_atfork failed: the check of mutexes cannot follow forks");
}

bool cwc_locks_watch(void)
{
    return true;
}

/* Whether POSIX leaves a non-holder's unlock of `m` undefined. Lock
 * elision (off unless a tunable asks for it) records no holder. */
static bool checked(const pthread_mutex_t *m)
{
    int kind = __atomic_load_n(&m->__data.__kind, __ATOMIC_RELAXED);
    int k = kind & KIND_MASK;
    return (k == KIND_NORMAL || k == KIND_ADAPTIVE) && !(kind & KIND_ELISION);
}

static pid_t holder(const pthread_mutex_t *m)
{
    return __atomic_load_n(&m->__data.__owner, __ATOMIC_RELAXED);
}

static bool held_here(const pthread_mutex_t *m)
{
    pid_t h = holder(m);
    return h == self() || (h != 0 && h == atomic_load_explicit(&forker, memory_order_relaxed));
}

static void require_held(const pthread_mutex_t *m, const char *call)
{
    if (checked(m) && !held_here(m))
        cwc_misuse("ABI-005: %s on mutex %p, which the calling thread (%d) does not hold (%s): "
                   "POSIX leaves that undefined, and glibc lets another thread in at once",
                   call, (const void *)m, (int)self(),
                   holder(m) ? "another thread holds it" : "nobody holds it");
}

/* The next definition of `name`, found once. */
static void *next(void *_Atomic *slot, const char *name)
{
    void *f = atomic_load_explicit(slot, memory_order_acquire);
    if (!f) {
        f = dlsym(RTLD_NEXT, name);
        if (!f)
            cwc_misuse("the C library has no %s", name);
        atomic_store_explicit(slot, f, memory_order_release);
    }
    return f;
}

#define NEXT(name)                                                                                 \
    static void *_Atomic slot;                                                                     \
    __typeof__(&(name)) call;                                                                      \
    *(void **)&call = next(&slot, #name)

int pthread_mutex_lock(pthread_mutex_t *m)
{
    NEXT(pthread_mutex_lock);
    if (checked(m) && holder(m) == self())
        cwc_misuse("ABI-005: pthread_mutex_lock on mutex %p, which the calling thread (%d) "
                   "already holds: it would wait for itself for ever",
                   (void *)m, (int)self());
    return call(m);
}

int pthread_mutex_unlock(pthread_mutex_t *m)
{
    NEXT(pthread_mutex_unlock);
    require_held(m, "pthread_mutex_unlock");
    return call(m);
}

int pthread_cond_wait(pthread_cond_t *c, pthread_mutex_t *m)
{
    NEXT(pthread_cond_wait);
    require_held(m, "pthread_cond_wait");
    return call(c, m);
}

int pthread_cond_timedwait(pthread_cond_t *c, pthread_mutex_t *m, const struct timespec *t)
{
    NEXT(pthread_cond_timedwait);
    require_held(m, "pthread_cond_timedwait");
    return call(c, m, t);
}

int pthread_cond_clockwait(pthread_cond_t *c, pthread_mutex_t *m, clockid_t clock,
                           const struct timespec *t)
{
    NEXT(pthread_cond_clockwait);
    require_held(m, "pthread_cond_clockwait");
    return call(c, m, clock, t);
}

#else

bool cwc_locks_watch(void)
{
    return false;
}

#endif
