/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * registry.c - the metrics of one run, by name and attributes, and the
 * handles that keep them registered.
 *
 * A metric's key is its full name and its context's attributes. The names
 * are a sorted array, and each name holds its metrics sorted by
 * attributes, so lookups are binary searches and encoding needs no sort.
 * A metric stays while it has handles: every cw_register of its key and
 * every clone adds one, every release takes one, and the last release
 * unregisters it.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

cw_registry *cw_registry_new(const cw_backend *backend)
{
    cw_registry *reg = calloc(1, sizeof *reg);
    if (!reg)
        return NULL;
    pthread_mutex_init(&reg->lock, NULL);
    reg->backend = backend;
    reg->spent_type.kind = -1; /* no kind: every value call does nothing */
    reg->spent.hdr.backend = backend;
    reg->spent.role = CW_ROLE_CHILD;
    reg->spent.type = &reg->spent_type;
    reg->spent.reg = reg;
    return reg;
}

void cw_registry_lock(cw_registry *reg)
{
    pthread_mutex_lock(&reg->lock);
}

void cw_registry_unlock(cw_registry *reg)
{
    pthread_mutex_unlock(&reg->lock);
}

/* ---- Names ---------------------------------------------------------------- */

static int compare_name(const void *key, const void *elem)
{
    return strcmp(key, (*(cw_name *const *)elem)->name);
}

static size_t find_name(const cw_registry *reg, const char *name, bool *found)
{
    return cw_sorted_find(reg->names, reg->nnames, sizeof *reg->names, name, compare_name, found);
}

static void name_free(cw_name *nm)
{
    free(nm->metrics);
    free(nm->help);
    free(nm->name);
    free(nm);
}

/* A name with no metrics yet, inserted at `at`; NULL when memory is
 * exhausted, with nothing inserted. */
static cw_name *name_new(cw_registry *reg, size_t at, const char *name, const char *help, int kind)
{
    cw_name *nm = calloc(1, sizeof *nm);
    if (!nm)
        return NULL;
    nm->name = cw_strdup(name);
    nm->help = cw_strdup(help);
    nm->kind = kind;
    if (!nm->name || !nm->help ||
        !cw_sorted_insert(&reg->names, &reg->nnames, &reg->cap, sizeof nm, at, &nm)) {
        name_free(nm);
        return NULL;
    }
    return nm;
}

/* ---- Metrics of a name ------------------------------------------------------ */

/* Attributes in order: key, then value, pair by pair; a prefix first. */
static int compare_attrs(const cw_attribute *a, size_t na, const cw_attribute *b, size_t nb)
{
    for (size_t i = 0; i < na && i < nb; i++) {
        int c = strcmp(a[i].key, b[i].key);
        if (c == 0)
            c = strcmp(a[i].value, b[i].value);
        if (c)
            return c;
    }
    return na < nb ? -1 : na > nb;
}

/* The attributes a metric is looked up by. */
typedef struct metric_key {
    const cw_attribute *attrs;
    size_t n;
} metric_key;

static int compare_metric(const void *key, const void *elem)
{
    const metric_key *k = key;
    const cw_metric *m = *(cw_metric *const *)elem;
    return compare_attrs(k->attrs, k->n, m->attrs, m->nattrs);
}

static size_t find_metric(const cw_name *nm, const cw_attribute *attrs, size_t nattrs, bool *found)
{
    metric_key key = {attrs, nattrs};
    return cw_sorted_find(nm->metrics, nm->nmetrics, sizeof *nm->metrics, &key, compare_metric,
                          found);
}

static void metric_free(cw_metric *m)
{
    cw_family_clear(m);
    cw_series_free(m);
    for (size_t i = 0; i < m->nattrs; i++) {
        free(m->attrs[i].key);
        free(m->attrs[i].value);
    }
    free(m->attrs);
    cw_mtype_free(&m->own_type);
    free(m);
}

static bool copy_attrs(cw_metric *m, const cw_attribute *attrs, size_t nattrs)
{
    m->attrs = calloc(nattrs ? nattrs : 1, sizeof *m->attrs);
    if (!m->attrs)
        return false;
    for (; m->nattrs < nattrs; m->nattrs++) {
        cw_attribute *a = &m->attrs[m->nattrs];
        a->key = cw_strdup(attrs[m->nattrs].key);
        a->value = cw_strdup(attrs[m->nattrs].value);
        if (!a->key || !a->value) {
            m->nattrs++; /* so that metric_free frees the one made */
            return false;
        }
    }
    return true;
}

/* A metric with one handle; NULL when memory is exhausted. */
static cw_metric *metric_new(cw_registry *reg, cw_name *nm, const cw_metric_type *type,
                             const cw_attribute *attrs, size_t nattrs)
{
    cw_metric *m = calloc(1, sizeof *m);
    if (!m)
        return NULL;
    m->hdr.backend = reg->backend;
    m->reg = reg;
    m->name = nm;
    m->type = &m->own_type;
    m->role = type->nlabels ? CW_ROLE_FAMILY : CW_ROLE_SERIES;
    m->handles = 1;
    if (!cw_mtype_copy(&m->own_type, type) || !copy_attrs(m, attrs, nattrs) ||
        (m->role == CW_ROLE_SERIES && !cw_series_init(m, m->type))) {
        metric_free(m);
        return NULL;
    }
    return m;
}

/* "[k1=v1, k2=v2]" for a conflict message. */
static void describe_attrs(const cw_attribute *attrs, size_t n, char *out, size_t len)
{
    size_t used = (size_t)snprintf(out, len, "[");
    for (size_t i = 0; i < n && used < len; i++)
        used += (size_t)snprintf(out + used, len - used, "%s%s=%s", i ? ", " : "", attrs[i].key,
                                 attrs[i].value);
    if (used < len)
        snprintf(out + used, len - used, "]");
}

/* With the lock held: a handle on the metric of this key, or NULL and why. */
static cw_metric *add_locked(cw_registry *reg, const char *full_name, const char *help,
                             const cw_metric_type *type, const cw_attribute *attrs, size_t nattrs,
                             char *why, size_t whylen)
{
    bool found;
    why[0] = '\0';
    size_t at = find_name(reg, full_name, &found);
    cw_name *nm = found ? reg->names[at] : name_new(reg, at, full_name, help, type->kind);
    if (!nm)
        return NULL;
    if (strcmp(nm->help, help) != 0) {
        snprintf(why, whylen, "metric family `%s` registered with inconsistent help text",
                 full_name);
        return NULL;
    }
    size_t mat = find_metric(nm, attrs, nattrs, &found);
    if (found) {
        cw_metric *m = nm->metrics[mat];
        cw_mtype wanted = {type->kind, (double *)type->buckets, type->nbuckets,
                           (char **)type->labels, type->nlabels};
        if (!cw_mtype_equal(m->type, &wanted)) {
            char desc[256];
            describe_attrs(attrs, nattrs, desc, sizeof desc);
            snprintf(why, whylen,
                     "duplicate metric `%s` with attributes %s registered with different type",
                     full_name, desc);
            return NULL;
        }
        m->handles++;
        return m;
    }
    if (nm->kind != type->kind) {
        snprintf(why, whylen, "metric family `%s` registered with inconsistent metric type",
                 full_name);
        return NULL;
    }
    cw_metric *m = metric_new(reg, nm, type, attrs, nattrs);
    if (!m || !cw_sorted_insert(&nm->metrics, &nm->nmetrics, &nm->cap, sizeof m, mat, &m)) {
        if (m)
            metric_free(m);
        if (nm->nmetrics == 0) { /* made for this metric: nothing else holds it */
            cw_sorted_remove(reg->names, &reg->nnames, sizeof *reg->names,
                             find_name(reg, full_name, &found));
            name_free(nm);
        }
        return NULL;
    }
    return m;
}

cw_metric *cw_registry_add(cw_registry *reg, const char *full_name, const char *help,
                           const cw_metric_type *type, const cw_attribute *attrs, size_t nattrs,
                           char *why, size_t whylen)
{
    cw_registry_lock(reg);
    cw_metric *m = add_locked(reg, full_name, help, type, attrs, nattrs, why, whylen);
    cw_registry_unlock(reg);
    return m;
}

cw_metric *cw_metric_handle_clone(cw_metric *m)
{
    if (m->role == CW_ROLE_CHILD)
        return NULL;
    cw_registry_lock(m->reg);
    m->handles++;
    cw_registry_unlock(m->reg);
    return m;
}

/* With the lock held: take `m` out of its name, and the name out of the
 * registry when it was the last. */
static void unlink_metric(cw_registry *reg, cw_metric *m)
{
    cw_name *nm = m->name;
    bool found;
    cw_sorted_remove(nm->metrics, &nm->nmetrics, sizeof *nm->metrics,
                     find_metric(nm, m->attrs, m->nattrs, &found));
    if (nm->nmetrics)
        return;
    cw_sorted_remove(reg->names, &reg->nnames, sizeof *reg->names,
                     find_name(reg, nm->name, &found));
    name_free(nm);
}

void cw_metric_handle_release(cw_metric *m)
{
    if (m->role == CW_ROLE_CHILD)
        return;
    cw_registry *reg = m->reg;
    cw_registry_lock(reg);
    bool last = --m->handles == 0;
    if (last)
        unlink_metric(reg, m);
    cw_registry_unlock(reg);
    if (last)
        metric_free(m);
}

void cw_registry_free(cw_registry *reg)
{
    for (size_t i = 0; i < reg->nnames; i++) {
        cw_name *nm = reg->names[i];
        for (size_t j = 0; j < nm->nmetrics; j++)
            metric_free(nm->metrics[j]);
        name_free(nm);
    }
    free(reg->names);
    pthread_mutex_destroy(&reg->lock);
    free(reg);
}
