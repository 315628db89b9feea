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

static int compare_values(char *const *a, const char *const *b, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        int c = strcmp(a[i], b[i] ? b[i] : "");
        if (c)
            return c;
    }
    return 0;
}

/* The index of the child labelled `values`, or where it would go. */
static size_t find_child(const cw_metric *f, const char *const *values, bool *found)
{
    size_t lo = 0, hi = f->nchildren;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        int c = compare_values(f->children[mid]->values, values, f->type->nlabels);
        if (c == 0) {
            *found = true;
            return mid;
        }
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid;
    }
    *found = false;
    return lo;
}

static cw_metric *child_new(cw_metric *f, const char *const *values)
{
    cw_metric *c = cw_xcalloc(1, sizeof *c);
    c->hdr.backend = f->hdr.backend;
    c->role = CW_ROLE_CHILD;
    c->type = f->type;
    c->reg = f->reg;
    c->values = cw_xcalloc(f->type->nlabels, sizeof *c->values);
    for (size_t i = 0; i < f->type->nlabels; i++)
        c->values[i] = cw_xstrdup(values[i] ? values[i] : "");
    cw_series_init(c, f->type);
    return c;
}

static void child_free(cw_metric *c)
{
    for (size_t i = 0; i < c->type->nlabels; i++)
        free(c->values[i]);
    free(c->values);
    cw_series_free(c);
    free(c);
}

cw_metric *cw_family_child(cw_metric *f, const char *const *values)
{
    bool found;
    size_t at = find_child(f, values, &found);
    if (found)
        return f->children[at];
    if (f->nchildren == f->cap_children) {
        size_t cap = f->cap_children ? 2 * f->cap_children : 8;
        cw_metric **grown = realloc(f->children, cap * sizeof *grown);
        if (!grown)
            cw_fatal("out of memory adding a metric family child");
        f->children = grown;
        f->cap_children = cap;
    }
    memmove(&f->children[at + 1], &f->children[at], (f->nchildren - at) * sizeof *f->children);
    f->children[at] = child_new(f, values);
    f->nchildren++;
    return f->children[at];
}

void cw_family_clear(cw_metric *f)
{
    for (size_t i = 0; i < f->nchildren; i++)
        child_free(f->children[i]);
    free(f->children);
    f->children = NULL;
    f->nchildren = f->cap_children = 0;
}

cw_metric *cw_metric_family_get(cw_metric *f, const char *const *values)
{
    if (f->role != CW_ROLE_FAMILY || !values)
        return NULL;
    cw_registry_lock(f->reg);
    cw_metric *c = cw_family_child(f, values);
    cw_registry_unlock(f->reg);
    return c;
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
        f->nchildren--;
        memmove(&f->children[at], &f->children[at + 1], (f->nchildren - at) * sizeof *f->children);
    }
    cw_registry_unlock(f->reg);
    return found ? CW_OK : CW_ERR_INVALID;
}
