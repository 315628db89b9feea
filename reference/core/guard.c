/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * guard.c - the locks objects are under: the runtime's, or a stripe.
 *
 * One lock for a whole run is simple and was the first design, but tasks
 * on two workers that serve two different connections then queue behind
 * each other on every recv and send, for state neither touches. A run
 * therefore also has CW_STRIPES locks, and an object that only its own
 * users touch (a TCP connection's halves and its socket) is put under one
 * of them, in turn. Stripes are never freed before the run ends, so a
 * select may take the lock of an object that is closed while it waits.
 *
 * Deadlock is ruled out by one order: the runtime's lock, then stripes by
 * increasing index. A lockset is that order made into a value.
 */
#include "core/internal.h"

int cw_rt_stripe_next(cw_rt *rt)
{
    return (int)(rt->next_stripe++ % CW_STRIPES);
}

int cw_guard_rt(const cw_wait *w)
{
    (void)w;
    return CW_GUARD_RT;
}

int cw_guard_none(const cw_wait *w)
{
    (void)w;
    return CW_GUARD_NONE;
}

void cw_guard_lock(cw_rt *rt, int guard)
{
    if (guard == CW_GUARD_RT)
        cw_rt_lock(rt);
    else if (guard >= 0 && rt->threaded)
        pthread_mutex_lock(&rt->stripes[guard]);
}

void cw_guard_unlock(cw_rt *rt, int guard)
{
    if (guard == CW_GUARD_RT)
        cw_rt_unlock(rt);
    else if (guard >= 0 && rt->threaded)
        pthread_mutex_unlock(&rt->stripes[guard]);
}

void cw_lockset_add(cw_lockset *set, int guard)
{
    if (guard == CW_GUARD_RT)
        set->rt = true;
    else if (guard >= 0)
        set->stripes |= (uint64_t)1 << guard;
}

cw_lockset cw_lockset_with_rt(int guard)
{
    cw_lockset set = {true, 0};
    cw_lockset_add(&set, guard);
    return set;
}

void cw_lockset_lock(cw_rt *rt, const cw_lockset *set)
{
    if (set->rt)
        cw_rt_lock(rt);
    for (uint64_t left = set->stripes; left; left &= left - 1)
        cw_guard_lock(rt, __builtin_ctzll(left));
}

void cw_lockset_unlock(cw_rt *rt, const cw_lockset *set)
{
    for (uint64_t left = set->stripes; left; left &= left - 1)
        cw_guard_unlock(rt, __builtin_ctzll(left));
    if (set->rt)
        cw_rt_unlock(rt);
}

void cw_rt_unlock_in_try(cw_rt *rt)
{
    cw_task *t = rt->sched->current(rt);
    t->lock_releases++;
    cw_lockset_unlock(rt, &t->held);
}

void cw_rt_relock_in_try(cw_rt *rt)
{
    cw_lockset_lock(rt, &rt->sched->current(rt)->held);
}
