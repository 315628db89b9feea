/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * sorted.c - sorted arrays: one binary search, one insertion and one
 * removal, whatever the element and its order, for every layer that keeps
 * one (the metrics registry's names and families, the memory storage's
 * partitions and blobs, a trace's named tracks).
 */
#include <string.h>

#include "core/internal.h"

size_t cw_sorted_find(const void *base, size_t n, size_t size, const void *key,
                      int (*cmp)(const void *key, const void *elem), bool *found)
{
    const char *a = base;
    size_t lo = 0, hi = n;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = cmp(key, a + mid * size);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c > 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

bool cw_sorted_insert(void *items, size_t *n, size_t *cap, size_t size, size_t at, const void *elem)
{
    if (!cw_grow(items, cap, *n + 1, size, 8))
        return false;
    char *a;
    memcpy(&a, items, sizeof a);
    memmove(a + (at + 1) * size, a + at * size, (*n - at) * size);
    memcpy(a + at * size, elem, size);
    (*n)++;
    return true;
}

void cw_sorted_remove(void *base, size_t *n, size_t size, size_t at)
{
    char *a = base;
    (*n)--;
    memmove(a + at * size, a + (at + 1) * size, (*n - at) * size);
}
