/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * util.c - fatal errors, and the helpers every allocation of the core and
 * the subsystems goes through.
 *
 * A failed allocation is an error of the call that needed it: the caller
 * returns CW_ERR_NOMEM, or what its rule gives instead (a spent context,
 * handle, signal or metric), with nothing changed; the allocation sweep
 * (reference/tests/alloc_sweep.c) holds every path to that. No helper
 * here ends the process on exhausted memory: cw_fatal is only for the
 * cases 00-conventions.md lists.
 */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

void cw_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("cw: fatal: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    abort();
}

char *cw_strdup(const char *s)
{
    size_t len = strlen(s) + 1;
    char *p = malloc(len);
    if (p)
        memcpy(p, s, len);
    return p;
}

bool cw_grow_slow(void *items, size_t *cap, size_t need, size_t size, size_t first)
{
    size_t grown = *cap ? *cap : first ? first : 1;
    while (grown < need) {
        if (grown > SIZE_MAX / 2)
            return false;
        grown *= 2;
    }
    if (size == 0 || grown > SIZE_MAX / size)
        return false;
    void *old;
    memcpy(&old, items, sizeof old); /* items is a T **, whatever T is */
    void *p = realloc(old, grown * size);
    if (!p)
        return false;
    memcpy(items, &p, sizeof p);
    *cap = grown;
    return true;
}
