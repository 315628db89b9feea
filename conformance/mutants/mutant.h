/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * mutant.h - what every deliberately wrong backend of this folder shares.
 *
 * A mutant is the reference backend named by CWM_BASE (defined before this
 * header is included) with a few entries replaced through a derived table
 * (cwrt/derive.h), so that every object of its runs reaches the replaced
 * entries. The mutant's file defines mutate(), which replaces entries of
 * `cwm` or of its nested tables, and the replacements call the reference
 * through `cwm_base` and the cwm_base_* tables.
 */
#ifndef CWM_MUTANT_H
#define CWM_MUTANT_H

#include <stdatomic.h>
#include <string.h>

#include "cwrt/cwrt.h"

#ifndef CWM_BASE
#error "define CWM_BASE (\"deterministic\" or \"native\") before including mutant.h"
#endif
#ifndef CWM_NAME
#define CWM_NAME "mutant"
#endif

const cw_backend *cw_backend_entry(void);

static cw_backend cwm;             /* the mutant's table */
static const cw_backend *cwm_base; /* the reference table it wraps */
static const cw_buffer_ops *cwm_base_buffers;
static const cw_metric_ops *cwm_base_metrics;
static const cw_storage_ops *cwm_base_storage;
static const cw_network_ops *cwm_base_network;
static cw_buffer_ops cwm_buffers;
static cw_metric_ops cwm_metrics;
static cw_storage_ops cwm_storage;
static cw_network_ops cwm_network;

/* Defined by each mutant: replace its entries in cwm and cwm_*. */
static void mutate(void);

/* The ops of the waits of one kind, learnt from the first wait of that
 * kind a replaced constructor makes: lets a replaced select recognise the
 * kind of the wait that completed. */
typedef _Atomic(const void *) cwm_ops_seen;

static inline bool cwm_is(const cw_wait *w, cwm_ops_seen *kind)
{
    const void *ops = atomic_load_explicit(kind, memory_order_relaxed);
    return ops && w->ops == ops;
}

static inline void cwm_learn(const cw_wait *w, cwm_ops_seen *kind)
{
    atomic_store_explicit(kind, w->ops, memory_order_relaxed);
}

/* Objects a mutant remembers (handles, streams, contexts): when the set
 * is full, what does not fit is forgotten, which only makes the mutant
 * wrong less often. Cases run one per process, so a set never outlives
 * its case. */
enum { CWM_SET_MAX = 4096 };
typedef struct cwm_set {
    const void *items[CWM_SET_MAX];
    size_t n;
} cwm_set;

static inline bool cwm_set_has(const cwm_set *s, const void *p)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i] == p)
            return true;
    return false;
}

static inline void cwm_set_add(cwm_set *s, const void *p)
{
    if (s->n < CWM_SET_MAX)
        s->items[s->n++] = p;
}

/* Remove one copy of `p`, if there is one. */
static inline void cwm_set_remove(cwm_set *s, const void *p)
{
    for (size_t i = 0; i < s->n; i++)
        if (s->items[i] == p) {
            s->items[i] = s->items[--s->n];
            return;
        }
}

const cw_backend *cw_backend_entry(void)
{
    if (cwm_base)
        return &cwm;
    const cw_backend *base = cw_backend_by_name(CWM_BASE);
    if (!base || cw_backend_derive(base, &cwm) != CW_OK)
        return NULL;
    cwm_base = base;
    cwm_base_buffers = base->buffers, cwm_buffers = *base->buffers, cwm.buffers = &cwm_buffers;
    cwm_base_metrics = base->metrics, cwm_metrics = *base->metrics, cwm.metrics = &cwm_metrics;
    cwm_base_storage = base->storage, cwm_storage = *base->storage, cwm.storage = &cwm_storage;
    cwm_base_network = base->network, cwm_network = *base->network, cwm.network = &cwm_network;
    cwm.name = CWM_NAME;
    mutate();
    return &cwm;
}

#endif
