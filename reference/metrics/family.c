/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * family.c - the children of a family: one series per set of label values,
 * made at zero on first use and kept sorted by those values.
 *
 * A sorted array serves both halves of the work: a lookup is a binary
 * search, and encoding walks the children in output order without sorting
 * them each time. Children are looked up far more often than they are made.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

/* The label values a child is looked up by. */
typedef struct child_key {
    const char *const *values; /* NULL stands for "" */
    size_t n;
} child_key;

static int compare_child(const void *key, const void *elem)
{
    const child_key *k = key;
    const cw_metric *c = *(cw_metric *const *)elem;
    for (size_t i = 0; i < k->n; i++) {
        int d = strcmp(k->values[i] ? k->values[i] : "", c->values[i]);
        if (d)
            return d;
    }
    return 0;
}

/* The index of the child labelled `values`, or where it would go. */
static size_t find_child(const cw_metric *f, const char *const *values, bool *found)
{
    child_key key = {values, f->type->nlabels};
    return cw_sorted_find(f->children, f->nchildren, sizeof *f->children, &key, compare_child,
                          found);
}

static void child_free(cw_metric *c)
{
    for (size_t i = 0; c->values && i < c->type->nlabels; i++)
        free(c->values[i]);
    free(c->values);
    cw_series_free(c);
    free(c);
}

/* NULL when memory is exhausted. */
static cw_metric *child_new(cw_metric *f, const char *const *values)
{
    cw_metric *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->hdr.backend = f->hdr.backend;
    c->role = CW_ROLE_CHILD;
    c->type = f->type;
    c->reg = f->reg;
    c->values = calloc(f->type->nlabels, sizeof *c->values);
    bool made = c->values != NULL;
    for (size_t i = 0; made && i < f->type->nlabels; i++)
        made = (c->values[i] = cw_strdup(values[i] ? values[i] : "")) != NULL;
    if (!made || !cw_series_init(c, f->type)) {
        child_free(c);
        return NULL;
    }
    return c;
}

cw_metric *cw_family_child(cw_metric *f, const char *const *values)
{
    bool found;
    size_t at = find_child(f, values, &found);
    if (found)
        return f->children[at];
    cw_metric *c = child_new(f, values);
    if (c && !cw_sorted_insert(&f->children, &f->nchildren, &f->cap_children, sizeof c, at, &c)) {
        child_free(c);
        return NULL;
    }
    return c;
}

void cw_family_clear(cw_metric *f)
{
    for (size_t i = 0; i < f->nchildren; i++)
        child_free(f->children[i]);
    free(f->children);
    f->children = NULL;
    f->nchildren = f->cap_children = 0;
}

/* A child that cannot be made is the registry's spent metric: the caller
 * may use it as any child, and it counts nothing [MET-019]. */
cw_metric *cw_metric_family_get(cw_metric *f, const char *const *values)
{
    if (f == &f->reg->spent)
        return f;
    if (f->role != CW_ROLE_FAMILY || !values)
        return NULL;
    cw_registry_lock(f->reg);
    cw_metric *c = cw_family_child(f, values);
    cw_registry_unlock(f->reg);
    return c ? c : &f->reg->spent;
}

int cw_metric_family_remove(cw_metric *f, const char *const *values)
{
    if (f->role != CW_ROLE_FAMILY || !values)
        return CW_ERR_INVALID;
    cw_registry_lock(f->reg);
    bool found;
    size_t at = find_child(f, values, &found);
    if (found) {
        child_free(f->children[at]);
        cw_sorted_remove(f->children, &f->nchildren, sizeof *f->children, at);
    }
    cw_registry_unlock(f->reg);
    return found ? CW_OK : CW_ERR_INVALID;
}
