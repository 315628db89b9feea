/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * panic.c - panics, cleanup handlers and fatal errors (spec/06-panics.md).
 *
 * A panic ends the calling task by unwinding it: its cleanup handlers run,
 * newest first, and it ends with CW_ERR_EXITED. Unless the run catches
 * panics (and never for the root task), the panic also ends the run, with
 * its message [PAN-001, RUN-004]. With no task to unwind (outside any task,
 * or inside a cleanup handler) nothing is left but to end the process.
 */
#include <stdio.h>
#include <stdlib.h>

#include "skeleton.h"

#ifdef SK_COVERAGE
void __gcov_dump(void);
#endif

_Noreturn void sk_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cwrt skeleton: fatal: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
#ifdef SK_COVERAGE
    __gcov_dump(); /* abort() skips the counters' write at exit */
#endif
    abort();
}

static _Noreturn void panic_task(const char *message)
{
    sk_task *t = sk_current();
    if (!t)
        sk_fatal("panic outside any task: %s", message);
    if (t->unwinding)
        sk_fatal("panic inside a cleanup handler: %s", message);
    if (!t->rt->cfg.catch_panics || t == t->rt->root)
        sk_rt_end(t->rt, CW_ERR_PANICKED, NULL, message);
    sk_unwind(t, CW_ERR_EXITED);
}

/* The panic is the calling task's, whichever context it names. */
void sk_vpanic(cw_ctx *ctx, const char *fmt, va_list ap)
{
    char message[512];
    (void)ctx;
    vsnprintf(message, sizeof message, fmt, ap);
    panic_task(message);
}

_Noreturn void sk_panic(const char *fmt, ...)
{
    char message[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    panic_task(message);
}

void sk_cleanup_push(cw_ctx *ctx, cw_cleanup *node)
{
    sk_task *t = sk_current_of(SK_CTX(ctx)->obj.rt, "cw_cleanup_push");
    node->prev = t->cleanups;
    t->cleanups = node;
}

/* Only the newest handler may be popped [PAN-004]. */
void sk_cleanup_pop(cw_ctx *ctx, cw_cleanup *node, bool execute)
{
    sk_task *t = sk_current_of(SK_CTX(ctx)->obj.rt, "cw_cleanup_pop");
    if (t->cleanups != node)
        sk_panic("cleanup handlers must be popped newest first");
    t->cleanups = node->prev;
    if (execute)
        node->fn(node->arg);
}

/* Each handler is unlinked before it runs, so it runs once. */
void sk_run_cleanups(sk_task *t)
{
    while (t->cleanups) {
        cw_cleanup *c = t->cleanups;
        t->cleanups = c->prev;
        c->fn(c->arg);
    }
}
