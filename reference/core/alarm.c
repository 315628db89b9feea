/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * alarm.c - a binary min-heap of sleeping waits, for every scheduler.
 *
 * Ordered by deadline, then by arming order, so that alarms due at the same
 * instant fire first-armed first: the order is part of the specified
 * schedule. A wait records its heap position (plus one, zero meaning "not
 * armed") in its `state` word, so a sleep that loses a select is removed in
 * O(log n) and leaves nothing behind.
 *
 * Arming a task's alarm may need memory, and fails cleanly without it
 * (the sleep then ends with CW_ERR_NOMEM). An alarm with no task has
 * nobody to report to, so its place is reserved beforehand: the heap's
 * capacity always covers every task alarm armed plus every reservation.
 *
 * An alarm usually wakes the task that sleeps on it. An alarm with no task
 * calls the fire function of the cw_alarm_ops its wait's ops point to
 * instead: that is how the deterministic network's bytes in flight arrive
 * on the virtual clock with no task having to wait for them.
 */
#include <stdlib.h>

#include "core/internal.h"

/* A sleeping wait's words (cw_waitv): its deadline, its heap_pos, its seq,
 * and its task (NULL: its ops are a cw_alarm_ops). */
static bool before(const cw_wait *x, const cw_wait *y)
{
    const cw_waitv *a = cw_waitv_of_const(x), *b = cw_waitv_of_const(y);
    return a->deadline < b->deadline || (a->deadline == b->deadline && a->seq < b->seq);
}

static void place(cw_alarms *a, size_t i, cw_wait *w)
{
    a->heap[i] = w;
    cw_waitv_of(w)->heap_pos = i + 1;
}

static void sift_up(cw_alarms *a, size_t i)
{
    cw_wait *w = a->heap[i];
    while (i > 0) {
        size_t parent = (i - 1) / 2;
        if (!before(w, a->heap[parent]))
            break;
        place(a, i, a->heap[parent]);
        i = parent;
    }
    place(a, i, w);
}

static void sift_down(cw_alarms *a, size_t i)
{
    cw_wait *w = a->heap[i];
    for (;;) {
        size_t child = 2 * i + 1;
        if (child >= a->len)
            break;
        if (child + 1 < a->len && before(a->heap[child + 1], a->heap[child]))
            child++;
        if (!before(a->heap[child], w))
            break;
        place(a, i, a->heap[child]);
        i = child;
    }
    place(a, i, w);
}

bool cw_alarms_reserve(cw_alarms *a)
{
    if (!cw_grow(&a->heap, &a->cap, a->with_task + a->reserved + 1, sizeof *a->heap, 64))
        return false;
    a->reserved++;
    return true;
}

void cw_alarms_unreserve(cw_alarms *a)
{
    a->reserved--;
}

bool cw_alarms_push(cw_alarms *a, cw_wait *w, cw_task *t)
{
    if (t && !cw_grow(&a->heap, &a->cap, a->with_task + a->reserved + 1, sizeof *a->heap, 64))
        return false;
    a->with_task += t != NULL;
    cw_waitv_of(w)->seq = (uintptr_t)a->seq++;
    cw_waitv_of(w)->task = t;
    a->heap[a->len] = w;
    sift_up(a, a->len++);
    return true;
}

void cw_alarms_remove(cw_alarms *a, cw_wait *w)
{
    cw_waitv *v = cw_waitv_of(w);
    if (v->heap_pos == 0)
        return;
    size_t i = (size_t)v->heap_pos - 1;
    v->heap_pos = 0;
    a->with_task -= v->task != NULL;
    cw_wait *last = a->heap[--a->len];
    if (i == a->len)
        return;
    place(a, i, last);
    sift_down(a, i);
    sift_up(a, (size_t)cw_waitv_of(last)->heap_pos - 1);
}

cw_wait *cw_alarms_peek(const cw_alarms *a)
{
    return a->len ? a->heap[0] : NULL;
}

cw_wait *cw_alarms_pop(cw_alarms *a)
{
    cw_wait *w = cw_alarms_peek(a);
    if (w)
        cw_alarms_remove(a, w);
    return w;
}

void cw_alarm_fire(cw_rt *rt, cw_wait *w)
{
    cw_task *t = cw_wait_task(w);
    if (t) {
        rt->sched->wake(t);
        return;
    }
    const cw_alarm_ops *ops = w->ops;
    ops->fire(w);
}

void cw_alarms_clear(cw_alarms *a)
{
    for (size_t i = 0; i < a->len; i++)
        cw_waitv_of(a->heap[i])->heap_pos = 0;
    a->len = a->with_task = 0;
}

void cw_alarms_free(cw_alarms *a)
{
    free(a->heap);
    a->heap = NULL;
    a->len = a->cap = a->with_task = a->reserved = 0;
}
