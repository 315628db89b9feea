/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * object.c - the run's list of live objects.
 *
 * Contexts, handles, channels, oneshots and signals are linked here while
 * they live. A program may leave any of them behind; the end of the run walks
 * the list and frees them [RUN-003]. Wakers are not here: they outlive runs.
 */
#include "skeleton.h"

void sk_obj_init(sk_obj *o, sk_rt *rt, void (*destroy)(sk_obj *o))
{
    o->base.backend = &sk_backend;
    o->rt = rt;
    o->destroy = destroy;
    o->prev = &rt->objects;
    o->next = rt->objects.next;
    rt->objects.next->prev = o;
    rt->objects.next = o;
}

void sk_obj_unlink(sk_obj *o)
{
    o->prev->next = o->next;
    o->next->prev = o->prev;
    o->prev = o->next = o;
}

/* Called once every task has ended, so no destroy wakes anybody. */
void sk_obj_destroy_all(sk_rt *rt)
{
    while (rt->objects.next != &rt->objects)
        rt->objects.next->destroy(rt->objects.next);
}
