/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/panic.h - panics and cleanup handlers.
 *
 * A panic ends the calling task: its cleanup handlers run, newest first, and
 * it never returns. Abort unwinds a task the same way at its suspension
 * point. Rules: spec/06-panics.md.
 */
#ifndef CW_PANIC_H
#define CW_PANIC_H

#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

#include "cw/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A cleanup handler record. It lives in the caller's frame (see the macros),
 * so registering one never allocates. */
struct cw_cleanup {
    struct cw_cleanup *prev; /* backend: the handler registered before this one */
    void (*fn)(void *arg);
    void *arg;
};

/* The longest message cw_panic hands the `panic` entry, its NUL included:
 * the size of cw_run_result.message, so nothing the run reports is lost. */
#define CW_PANIC_MESSAGE_MAX 512

#if defined(__GNUC__)
__attribute__((format(printf, 2, 3)))
#endif
static inline _Noreturn void cw_panic(cw_ctx *ctx, const char *fmt, ...)
{
    const cw_backend *b = cw__backend_of(ctx);
    va_list ap;
    va_start(ap, fmt);
    if (!CW_BACKEND_HAS(b, panic))
        b->vpanic(ctx, fmt, ap); /* does not return */
    char message[CW_PANIC_MESSAGE_MAX];
    vsnprintf(message, sizeof message, fmt, ap);
    va_end(ap);
    b->panic(ctx, message);
    abort(); /* unreachable: neither entry returns */
}

static inline void cw_cleanup_push(cw_ctx *ctx, cw_cleanup *node, void (*fn)(void *), void *arg)
{
    node->prev = NULL;
    node->fn = fn;
    node->arg = arg;
    cw__backend_of(ctx)->cleanup_push(ctx, node);
}

/* Remove `node`, which must be the newest handler; run it when `execute`. */
static inline void cw_cleanup_pop(cw_ctx *ctx, cw_cleanup *node, bool execute)
{
    cw__backend_of(ctx)->cleanup_pop(ctx, node, execute);
}

/* The pthread_cleanup_push style pair: both in the same block. Pairs may
 * nest; the inner record then hides the outer one on purpose, so the shadow
 * warning is silenced for the span of the pair. */
#define CW_CLEANUP_PUSH(ctx, fn, arg)                                                              \
    do {                                                                                           \
        _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wshadow\"")             \
            cw_cleanup cw_cleanup_node_;                                                           \
        cw_cleanup_push((ctx), &cw_cleanup_node_, (fn), (arg))

#define CW_CLEANUP_POP(ctx, execute)                                                               \
    cw_cleanup_pop((ctx), &cw_cleanup_node_, (execute));                                          \
    _Pragma("GCC diagnostic pop")                                                                  \
    }                                                                                              \
    while (0)

#ifdef __cplusplus
}
#endif
#endif
