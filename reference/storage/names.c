/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * names.c - blob names: their hex spelling (file names and messages) and
 * the lists cw_storage_scan hands out.
 *
 * A list is plain memory owned by its caller, not an object of the run:
 * it may be released after the run ended, on any thread.
 */
#include <stdlib.h>
#include <string.h>

#include "storage/storage.h"

static const char digits[] = "0123456789abcdef";

void cw_hex_encode(const uint8_t *name, size_t len, char *hex)
{
    for (size_t i = 0; i < len; i++) {
        hex[2 * i] = digits[name[i] >> 4];
        hex[2 * i + 1] = digits[name[i] & 0xF];
    }
    hex[2 * len] = '\0';
}

static int nibble(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    return -1; /* uppercase too: a name has exactly one spelling */
}

bool cw_hex_decode(const char *hex, uint8_t *out, size_t *len)
{
    size_t n = strlen(hex);
    if (n == 0 || n % 2 != 0)
        return false;
    for (size_t i = 0; i < n; i += 2) {
        int hi = nibble(hex[i]), lo = nibble(hex[i + 1]);
        if (hi < 0 || lo < 0)
            return false;
        out[i / 2] = (uint8_t)(hi << 4 | lo);
    }
    *len = n / 2;
    return true;
}

/* The list as the caller sees it, and the room behind it. */
typedef struct names_impl {
    cw_blob_names pub;
    cw_blob_name *items;
    size_t cap;
} names_impl;

cw_blob_names *cw_names_new(cw_rt *rt)
{
    names_impl *l = calloc(1, sizeof *l);
    if (!l)
        return NULL;
    l->pub.hdr.backend = cw_rt_backend(rt);
    return &l->pub;
}

bool cw_names_add(cw_blob_names *pub, const uint8_t *name, size_t len)
{
    names_impl *l = (names_impl *)pub;
    uint8_t *copy = malloc(len ? len : 1);
    if (!copy || !cw_grow(&l->items, &l->cap, l->pub.count + 1, sizeof *l->items, 8)) {
        free(copy);
        return false;
    }
    if (len)
        memcpy(copy, name, len);
    l->items[l->pub.count].data = copy;
    l->items[l->pub.count].len = len;
    l->pub.count++;
    l->pub.names = l->items;
    return true;
}

static int name_cmp(const void *a, const void *b)
{
    const cw_blob_name *x = a, *y = b;
    size_t n = x->len < y->len ? x->len : y->len;
    int c = n ? memcmp(x->data, y->data, n) : 0;
    if (c != 0)
        return c;
    return (x->len > y->len) - (x->len < y->len);
}

void cw_names_sort(cw_blob_names *pub)
{
    names_impl *l = (names_impl *)pub;
    if (l->pub.count > 1)
        qsort(l->items, l->pub.count, sizeof *l->items, name_cmp);
}

void cw_names_release(cw_blob_names *pub)
{
    names_impl *l = (names_impl *)pub;
    for (size_t i = 0; i < l->pub.count; i++)
        free((void *)l->items[i].data);
    free(l->items);
    free(l);
}
