/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * wrap.c - a backend that is one of the reference's with one entry
 * replaced: it counts the tasks spawned, and prints the count when the
 * process exits if CWRT_WRAP_REPORT is set. The way to change one
 * behaviour of the reference without copying it (cwrt/derive.h).
 *
 *   cc -shared -fPIC -o wrap.so wrap.c libcwrt.a -lcrypto -lpthread -ldl
 *   cw-conformance --backend ./wrap.so
 *
 * CWRT_PLUGIN_BACKEND picks the reference backend ("native" by default).
 * A plain copy of the table would not do: the reference's objects would go
 * on naming its own table, and the replaced entry would never be called.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>

#include "cwrt/cwrt.h"

const cw_backend *cw_backend_entry(void);

static cw_backend wrapped;         /* ours: it lives as long as the process */
static const cw_backend *original; /* the table the replaced entry calls on */
static atomic_ulong spawned;

static cw_handle *counting_spawn(cw_ctx *ctx, cw_task_fn fn, void *arg)
{
    atomic_fetch_add(&spawned, 1);
    return original->spawn(ctx, fn, arg);
}

static void report(void)
{
    fprintf(stderr, "wrap: %lu tasks spawned\n", (unsigned long)atomic_load(&spawned));
}

const cw_backend *cw_backend_entry(void)
{
    if (original)
        return &wrapped;
    const char *name = getenv("CWRT_PLUGIN_BACKEND");
    const cw_backend *base = cw_backend_by_name(name ? name : "native");
    if (!base || cw_backend_derive(base, &wrapped) != CW_OK)
        return NULL;
    wrapped.spawn = counting_spawn;
    wrapped.name = "wrapped";
    original = base;
    if (getenv("CWRT_WRAP_REPORT"))
        atexit(report);
    return &wrapped;
}
