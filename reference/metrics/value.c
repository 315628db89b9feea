/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * value.c - the value of one series: a counter, a gauge or a histogram.
 *
 * Values are atomics updated without any lock, so counting from many
 * threads costs what the hardware charges for an atomic add. A histogram
 * keeps one counter per bucket (not cumulative, so an observation touches
 * one bucket) and its sum as the bits of a double, added to by
 * compare-and-swap. Relaxed ordering is enough: a value carries no data
 * that other memory depends on.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

bool cw_series_init(cw_metric *m, const cw_mtype *type)
{
    atomic_init(&m->count, 0);
    atomic_init(&m->gauge, 0);
    atomic_init(&m->sum_bits, 0); /* the bits of +0.0 */
    m->buckets = NULL;
    if (type->kind == CW_METRIC_HISTOGRAM) {
        m->buckets = calloc(type->nbuckets + 1, sizeof *m->buckets);
        if (!m->buckets)
            return false;
        for (size_t i = 0; i <= type->nbuckets; i++)
            atomic_init(&m->buckets[i], 0);
    }
    return true;
}

void cw_series_free(cw_metric *m)
{
    free(m->buckets);
    m->buckets = NULL;
}

static bool is_series(const cw_metric *m, int kind)
{
    return m->role != CW_ROLE_FAMILY && m->type->kind == kind;
}

static double bits_to_double(uint64_t bits)
{
    double d;
    memcpy(&d, &bits, sizeof d);
    return d;
}

static uint64_t double_to_bits(double d)
{
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    return bits;
}

uint64_t cw_series_buckets(const cw_metric *m, uint64_t *cumulative)
{
    uint64_t total = 0;
    for (size_t i = 0; i <= m->type->nbuckets; i++) {
        total += atomic_load_explicit(&m->buckets[i], memory_order_relaxed);
        cumulative[i] = total;
    }
    return total;
}

double cw_series_sum(const cw_metric *m)
{
    return bits_to_double(atomic_load_explicit(&m->sum_bits, memory_order_relaxed));
}

void cw_series_store(cw_metric *m, uint64_t v)
{
    atomic_store_explicit(&m->count, v, memory_order_relaxed);
}

void cw_metric_counter_add(cw_metric *m, uint64_t n)
{
    if (is_series(m, CW_METRIC_COUNTER))
        atomic_fetch_add_explicit(&m->count, n, memory_order_relaxed);
}

uint64_t cw_metric_counter_get(const cw_metric *m)
{
    if (!is_series(m, CW_METRIC_COUNTER))
        return 0;
    return atomic_load_explicit(&m->count, memory_order_relaxed);
}

void cw_metric_gauge_set(cw_metric *m, int64_t v)
{
    if (is_series(m, CW_METRIC_GAUGE))
        atomic_store_explicit(&m->gauge, v, memory_order_relaxed);
}

void cw_metric_gauge_add(cw_metric *m, int64_t delta)
{
    if (is_series(m, CW_METRIC_GAUGE))
        atomic_fetch_add_explicit(&m->gauge, delta, memory_order_relaxed);
}

int64_t cw_metric_gauge_get(const cw_metric *m)
{
    if (!is_series(m, CW_METRIC_GAUGE))
        return 0;
    return atomic_load_explicit(&m->gauge, memory_order_relaxed);
}

/* The first bucket whose bound is >= v; the +Inf bucket for larger values
 * and for NaN. Bounds are few, and a linear scan of them is what the
 * prefetcher likes best. */
static size_t bucket_of(const cw_mtype *t, double v)
{
    size_t i = 0;
    while (i < t->nbuckets && !(v <= t->buckets[i]))
        i++;
    return i;
}

void cw_metric_histogram_observe(cw_metric *m, double v)
{
    if (!is_series(m, CW_METRIC_HISTOGRAM))
        return;
    atomic_fetch_add_explicit(&m->buckets[bucket_of(m->type, v)], 1, memory_order_relaxed);
    uint64_t old = atomic_load_explicit(&m->sum_bits, memory_order_relaxed);
    while (!atomic_compare_exchange_weak_explicit(&m->sum_bits, &old,
                                                  double_to_bits(bits_to_double(old) + v),
                                                  memory_order_relaxed, memory_order_relaxed)) {
    }
}

uint64_t cw_metric_histogram_count(const cw_metric *m)
{
    if (!is_series(m, CW_METRIC_HISTOGRAM))
        return 0;
    uint64_t total = 0;
    for (size_t i = 0; i <= m->type->nbuckets; i++)
        total += atomic_load_explicit(&m->buckets[i], memory_order_relaxed);
    return total;
}

double cw_metric_histogram_sum(const cw_metric *m)
{
    return is_series(m, CW_METRIC_HISTOGRAM) ? cw_series_sum(m) : 0.0;
}
