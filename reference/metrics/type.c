/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * type.c - metric types: checking what a caller gives cw_register, keeping
 * a copy, and comparing two of them.
 *
 * The type decides whether two registrations of one key may share a
 * metric, so it is everything that shapes the output: the kind, the bucket
 * bounds and the label names with their order.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

const char *cw_mtype_check(const cw_metric_type *t)
{
    if (!t || t->kind < CW_METRIC_COUNTER || t->kind > CW_METRIC_HISTOGRAM)
        return "metric kind must be a cw_metric_kind";
    if (t->kind != CW_METRIC_HISTOGRAM && t->nbuckets)
        return "only a histogram has buckets";
    if (t->nbuckets && !t->buckets)
        return "histogram buckets are missing";
    for (size_t i = 0; i < t->nbuckets; i++) {
        if (!isfinite(t->buckets[i]))
            return "histogram buckets must be finite";
        if (i && !(t->buckets[i] > t->buckets[i - 1]))
            return "histogram buckets must be strictly increasing";
    }
    if (t->nlabels && !t->labels)
        return "family label names are missing";
    for (size_t i = 0; i < t->nlabels; i++) {
        if (cw_label_check(t->labels[i]))
            return "family label names must match [a-zA-Z][a-zA-Z0-9_]*";
        for (size_t j = 0; j < i; j++)
            if (strcmp(t->labels[i], t->labels[j]) == 0)
                return "family label names must be distinct";
        if (t->kind == CW_METRIC_HISTOGRAM && strcmp(t->labels[i], "le") == 0)
            return "label name le is reserved for histogram buckets";
    }
    return NULL;
}

bool cw_mtype_copy(cw_mtype *to, const cw_metric_type *from)
{
    memset(to, 0, sizeof *to);
    to->kind = from->kind;
    to->buckets = calloc(from->nbuckets ? from->nbuckets : 1, sizeof *to->buckets);
    to->labels = calloc(from->nlabels ? from->nlabels : 1, sizeof *to->labels);
    if (!to->buckets || !to->labels) {
        cw_mtype_free(to);
        return false;
    }
    to->nbuckets = from->nbuckets;
    if (from->nbuckets)
        memcpy(to->buckets, from->buckets, from->nbuckets * sizeof *to->buckets);
    for (; to->nlabels < from->nlabels; to->nlabels++) {
        to->labels[to->nlabels] = cw_strdup(from->labels[to->nlabels]);
        if (!to->labels[to->nlabels]) {
            cw_mtype_free(to);
            return false;
        }
    }
    return true;
}

bool cw_mtype_equal(const cw_mtype *a, const cw_mtype *b)
{
    if (a->kind != b->kind || a->nbuckets != b->nbuckets || a->nlabels != b->nlabels)
        return false;
    for (size_t i = 0; i < a->nbuckets; i++)
        if (a->buckets[i] != b->buckets[i])
            return false;
    for (size_t i = 0; i < a->nlabels; i++)
        if (strcmp(a->labels[i], b->labels[i]) != 0)
            return false;
    return true;
}

void cw_mtype_free(cw_mtype *t)
{
    for (size_t i = 0; t->labels && i < t->nlabels; i++)
        free(t->labels[i]);
    free(t->labels);
    free(t->buckets);
    memset(t, 0, sizeof *t);
}

const char *cw_mtype_name(int kind)
{
    switch (kind) {
    case CW_METRIC_COUNTER:
        return "counter";
    case CW_METRIC_GAUGE:
        return "gauge";
    default:
        return "histogram";
    }
}
