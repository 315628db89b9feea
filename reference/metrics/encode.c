/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * encode.c - the registry as OpenMetrics text.
 *
 * For each name, in byte order: "# HELP <name> <help>." and
 * "# TYPE <name> <type>", then the samples of its metrics in attribute
 * order, each family's children in label-value order. A name with no
 * sample (a family with no child yet) writes nothing at all, header
 * included. The text ends with the one "# EOF" line.
 *
 * Labels are the context's attributes (sorted by key), then a family's
 * labels in their declared order, then `le` for histogram buckets.
 */
#include <math.h>
#include <stdlib.h>

#include "metrics/metrics.h"

/* What one sample line shares with the others of its series. */
typedef struct sample_ctx {
    cw_text *t;
    const cw_metric *reg_metric; /* the registered metric: name and attributes */
    char *const *values;         /* a child's label values, or NULL */
    bool *header_pending;
} sample_ctx;

static void put_header(cw_text *t, const cw_name *nm)
{
    cw_text_puts(t, "# HELP ");
    cw_text_puts(t, nm->name);
    cw_text_puts(t, " ");
    cw_text_escaped(t, nm->help);
    cw_text_puts(t, ".\n# TYPE ");
    cw_text_puts(t, nm->name);
    cw_text_puts(t, " ");
    cw_text_puts(t, cw_mtype_name(nm->kind));
    cw_text_puts(t, "\n");
}

static void put_label(cw_text *t, bool *first, const char *key, const char *value)
{
    cw_text_puts(t, *first ? "{" : ",");
    *first = false;
    cw_text_puts(t, key);
    cw_text_puts(t, "=\"");
    cw_text_escaped(t, value);
    cw_text_puts(t, "\"");
}

/* The start of a sample line: name, suffix and label block. `le` is the
 * bucket bound's text, or NULL. */
static void put_name(const sample_ctx *s, const char *suffix, const char *le)
{
    const cw_metric *m = s->reg_metric;
    if (*s->header_pending) {
        put_header(s->t, m->name);
        *s->header_pending = false;
    }
    cw_text_puts(s->t, m->name->name);
    cw_text_puts(s->t, suffix);
    bool first = true;
    for (size_t i = 0; i < m->nattrs; i++)
        put_label(s->t, &first, m->attrs[i].key, m->attrs[i].value);
    for (size_t i = 0; s->values && i < m->type->nlabels; i++)
        put_label(s->t, &first, m->type->labels[i], s->values[i]);
    if (le)
        put_label(s->t, &first, "le", le);
    if (!first)
        cw_text_puts(s->t, "}");
    cw_text_puts(s->t, " ");
}

/* OpenMetrics takes _sum and _count for counters: neither may go below
 * zero, nor sit beside a negative bucket [MET-008]. The bounds ascend, so
 * the first one says whether any is negative. */
static bool sum_is_a_counter(const cw_metric *series, double sum)
{
    const cw_mtype *type = series->type;
    bool negative_bound = type->nbuckets > 0 && type->buckets[0] < 0;
    return !negative_bound && !(sum < 0) && !isnan(sum);
}

static void put_histogram(const sample_ctx *s, const cw_metric *series)
{
    size_t nb = series->type->nbuckets;
    uint64_t *cumulative = calloc(nb + 1, sizeof *cumulative);
    if (!cumulative) {
        s->t->failed = true;
        return;
    }
    uint64_t count = cw_series_buckets(series, cumulative);
    double sum = cw_series_sum(series);
    if (sum_is_a_counter(series, sum)) {
        put_name(s, "_sum", NULL);
        cw_text_double(s->t, sum);
        cw_text_puts(s->t, "\n");
        put_name(s, "_count", NULL);
        cw_text_u64(s->t, count);
        cw_text_puts(s->t, "\n");
    }
    for (size_t i = 0; i <= nb; i++) {
        cw_text le = {0};
        if (i < nb)
            cw_text_double(&le, series->type->buckets[i]);
        if (le.failed)
            s->t->failed = true;
        put_name(s, "_bucket", i >= nb ? "+Inf" : le.failed ? "" : le.buf);
        cw_text_u64(s->t, cumulative[i]);
        cw_text_puts(s->t, "\n");
        free(le.buf);
    }
    free(cumulative);
}

static void put_series(const sample_ctx *s, const cw_metric *series)
{
    switch (series->type->kind) {
    case CW_METRIC_COUNTER:
        put_name(s, "_total", NULL);
        cw_text_u64(s->t, atomic_load_explicit(&series->count, memory_order_relaxed));
        cw_text_puts(s->t, "\n");
        break;
    case CW_METRIC_GAUGE:
        put_name(s, "", NULL);
        cw_text_i64(s->t, atomic_load_explicit(&series->gauge, memory_order_relaxed));
        cw_text_puts(s->t, "\n");
        break;
    default:
        put_histogram(s, series);
        break;
    }
}

static void put_metric(cw_text *t, const cw_metric *m, bool *header_pending)
{
    sample_ctx s = {t, m, NULL, header_pending};
    if (m->role == CW_ROLE_SERIES) {
        put_series(&s, m);
        return;
    }
    for (size_t i = 0; i < m->nchildren; i++) {
        s.values = m->children[i]->values;
        put_series(&s, m->children[i]);
    }
}

char *cw_registry_encode(cw_registry *reg)
{
    cw_text t = {0};
    cw_registry_lock(reg);
    if (reg->collect)
        reg->collect(reg->collect_arg);
    for (size_t i = 0; i < reg->nnames; i++) {
        const cw_name *nm = reg->names[i];
        bool header_pending = true;
        for (size_t j = 0; j < nm->nmetrics; j++)
            put_metric(&t, nm->metrics[j], &header_pending);
    }
    cw_registry_unlock(reg);
    cw_text_puts(&t, "# EOF\n");
    if (t.failed) {
        free(t.buf);
        return NULL;
    }
    return t.buf;
}
