/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* Spawning counts its tasks under a mutex, but the lock was left out of
 * the path: each spawn unlocks a mutex its thread does not hold, which
 * POSIX leaves undefined (ABI-005); glibc then lets two workers update
 * the count at once, a race a run shows only now and then. */
#define CWM_BASE "native"
#include "mutant.h"

#include <pthread.h>

static pthread_mutex_t count_lock = PTHREAD_MUTEX_INITIALIZER;
static unsigned long spawned;

static cw_handle *counted_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    spawned++;
    pthread_mutex_unlock(&count_lock);
    return cwm_base->spawn(ctx, fn, arg);
}

static void mutate(void)
{
    cwm.spawn = counted_spawn;
}
