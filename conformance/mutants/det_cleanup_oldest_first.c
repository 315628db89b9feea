/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* When a task is unwound, its cleanup handlers run oldest first instead of
 * newest first; explicit pops still behave (PAN-004). The handlers' records
 * hold their functions in reverse order between calls. */
#define CWM_BASE "deterministic"
#include "mutant.h"

/* Reverse the (fn, arg) pairs along the chain that starts at `top`. */
static void reverse_payloads(cw_cleanup *top)
{
    size_t n = 0;
    for (cw_cleanup *c = top; c; c = c->prev)
        n++;
    for (size_t i = 0; i < n / 2; i++) {
        cw_cleanup *a = top, *b = top;
        for (size_t k = 0; k < i; k++)
            a = a->prev;
        for (size_t k = 0; k < n - 1 - i; k++)
            b = b->prev;
        void (*fn)(void *) = a->fn;
        void *arg = a->arg;
        a->fn = b->fn, a->arg = b->arg;
        b->fn = fn, b->arg = arg;
    }
}

static void reversing_push(cw_ctx *ctx, cw_cleanup *node)
{
    cwm_base->cleanup_push(ctx, node);
    reverse_payloads(node->prev); /* back to the natural order */
    reverse_payloads(node);
}

static void reversing_pop(cw_ctx *ctx, cw_cleanup *node, bool execute)
{
    cw_cleanup *below = node->prev;
    reverse_payloads(node);
    cwm_base->cleanup_pop(ctx, node, execute);
    reverse_payloads(below);
}

static void mutate(void)
{
    cwm.cleanup_push = reversing_push;
    cwm.cleanup_pop = reversing_pop;
}
