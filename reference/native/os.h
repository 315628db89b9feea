/*
 * os.h - the system calls of the native backend whose failure a test must
 * be able to provoke: the backend calls them through this table, which
 * holds the real calls unless a test in reference/tests/ swaps one for a
 * failing stand-in before a run. Thread creation is the first; the I/O
 * fault layer adds the rest here.
 */
#ifndef CW_NATIVE_OS_H
#define CW_NATIVE_OS_H

#include <pthread.h>

typedef struct cw_os_calls {
    int (*thread_create)(pthread_t *thread, const pthread_attr_t *attr, void *(*fn)(void *),
                         void *arg);
} cw_os_calls;

/* Read by every run; written only by tests, between runs. */
extern cw_os_calls cw_os;

#endif
