/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * waitlist.c - the lists blocked tasks wait on.
 *
 * An armed cw_wait is linked through its own link[] fields: link[0] and
 * link[1] are the neighbours, link[2] the blocked task, link[3] the list.
 * The wait lives in the blocked task's frame until select disarms it.
 */
#include "skeleton.h"

void sk_waitlist_add(sk_waitlist *l, cw_wait *w, sk_task *t)
{
    w->link[0] = NULL;
    w->link[1] = l->head;
    w->link[2] = t;
    w->link[3] = l;
    if (l->head)
        l->head->link[0] = w;
    l->head = w;
}

void sk_waitlist_remove(cw_wait *w)
{
    cw_wait *prev = w->link[0], *next = w->link[1];
    sk_waitlist *l = w->link[3];
    if (!l)
        return; /* not armed */
    if (prev)
        prev->link[1] = next;
    else
        l->head = next;
    if (next)
        next->link[0] = prev;
    w->link[0] = w->link[1] = w->link[2] = w->link[3] = NULL;
}

/* Every waiter retries: the simplest rule that never loses a wake-up. */
void sk_waitlist_wake(sk_waitlist *l)
{
    for (cw_wait *w = l->head; w; w = w->link[1])
        sk_wake(w->link[2]);
}

sk_task *sk_wait_task(const cw_wait *w)
{
    return w->link[2];
}
