/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * metrics.h - private to the reference's metrics: the registry of a run,
 * the values of its series, families, and the OpenMetrics encoder.
 *
 * A registry holds *names*, each with the metrics registered under it: one
 * per set of context attributes. A metric is either a single series (a
 * counter, gauge or histogram) or a family whose children are series
 * labelled by values. Everything is kept sorted (names by byte order,
 * metrics of a name by attributes, children by label values), so encoding
 * walks the registry in output order and two encodes of the same state
 * give the same bytes.
 *
 * Threads: values are atomics, so counting takes no lock. Everything else
 * (the sorted arrays, handle counts, children) is guarded by the
 * registry's one lock, taken after the runtime lock where both are held
 * and never while calling out of the registry except to read pool stats.
 */
#ifndef CW_METRICS_INTERNAL_H
#define CW_METRICS_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>

#include "core/ext.h"

typedef struct cw_registry cw_registry;
typedef struct cw_name cw_name;

/* A type as the registry keeps it: cw_metric_type with its own copies. */
typedef struct cw_mtype {
    int kind;
    double *buckets;
    size_t nbuckets;
    char **labels;
    size_t nlabels;
} cw_mtype;

enum cw_metric_role {
    CW_ROLE_SERIES = 1, /* a registered single series */
    CW_ROLE_FAMILY = 2, /* a registered family */
    CW_ROLE_CHILD = 3,  /* one series of a family */
};

struct cw_metric {
    cw_object hdr;
    int role;             /* enum cw_metric_role */
    const cw_mtype *type; /* the registered metric's; shared by its children */
    cw_registry *reg;

    /* The value of a series (SERIES and CHILD). */
    atomic_uint_fast64_t count; /* counter total, or histogram observations */
    atomic_int_fast64_t gauge;
    atomic_uint_fast64_t sum_bits; /* histogram sum, as the bits of a double */
    atomic_uint_fast64_t *buckets; /* histogram: one per bound, then +Inf; not cumulative */

    /* A registered metric (SERIES and FAMILY). */
    cw_name *name;       /* the name it is registered under */
    cw_attribute *attrs; /* the context's attributes, sorted by key */
    size_t nattrs;
    size_t handles;    /* cw_register calls and clones not yet released */
    cw_mtype own_type; /* what `type` points at */

    /* A family: its children, sorted by label values. */
    cw_metric **children;
    size_t nchildren, cap_children;

    /* A child: its label values, one per label name. */
    char **values;
};

/* Every metric registered under one full name shares its HELP and TYPE. */
struct cw_name {
    char *name;
    char *help; /* as registered, without the '.' the output adds */
    int kind;
    cw_metric **metrics; /* sorted by attributes */
    size_t nmetrics, cap;
};

/* Run before every encode, under the registry lock: brings metrics that
 * mirror other counters (the buffer pools') up to date. */
typedef void (*cw_collect_fn)(void *arg);

struct cw_registry {
    pthread_mutex_t lock;
    const cw_backend *backend;
    cw_name **names; /* sorted by name */
    size_t nnames, cap;
    cw_collect_fn collect;
    void *collect_arg;
    /* What registering or a family's child gives when memory is exhausted:
     * a metric of no kind, in no output, that counts nothing and reads 0
     * (MET-013) and has no handles to release [MET-019]. */
    cw_metric spent;
    cw_mtype spent_type;
};

/* ---- Types (type.c) ------------------------------------------------------- */

/* NULL when `t` is a valid type, else why not. */
const char *cw_mtype_check(const cw_metric_type *t);
/* False when memory is exhausted, with `to` left empty. */
bool cw_mtype_copy(cw_mtype *to, const cw_metric_type *from);
bool cw_mtype_equal(const cw_mtype *a, const cw_mtype *b);
void cw_mtype_free(cw_mtype *t);
/* "counter", "gauge" or "histogram". */
const char *cw_mtype_name(int kind);

/* ---- Series values (value.c) ------------------------------------------------ */

/* Give `m` the storage of a series of `type`, at zero; false when memory
 * is exhausted. */
bool cw_series_init(cw_metric *m, const cw_mtype *type);
void cw_series_free(cw_metric *m);
/* Histogram observations counted in buckets, read once each: the total and
 * the cumulative counts, so the +Inf bucket always equals the count. */
uint64_t cw_series_buckets(const cw_metric *m, uint64_t *cumulative);
double cw_series_sum(const cw_metric *m);
/* Set a counter to `v`: for mirrors of counters kept elsewhere. */
void cw_series_store(cw_metric *m, uint64_t v);

void cw_metric_counter_add(cw_metric *m, uint64_t n);
uint64_t cw_metric_counter_get(const cw_metric *m);
void cw_metric_gauge_set(cw_metric *m, int64_t v);
void cw_metric_gauge_add(cw_metric *m, int64_t delta);
int64_t cw_metric_gauge_get(const cw_metric *m);
void cw_metric_histogram_observe(cw_metric *m, double v);
uint64_t cw_metric_histogram_count(const cw_metric *m);
double cw_metric_histogram_sum(const cw_metric *m);

/* ---- Families (family.c) -------------------------------------------------- */

cw_metric *cw_metric_family_get(cw_metric *family, const char *const *values);
int cw_metric_family_remove(cw_metric *family, const char *const *values);
/* With the registry lock held: the child, made if missing; NULL when
 * memory for it is exhausted. */
cw_metric *cw_family_child(cw_metric *family, const char *const *values);
/* Free every child (the family is being unregistered). */
void cw_family_clear(cw_metric *family);

/* ---- The registry (registry.c) ------------------------------------------- */

/* NULL when memory is exhausted. */
cw_registry *cw_registry_new(const cw_backend *backend);
/* Free every metric still registered, and the registry. */
void cw_registry_free(cw_registry *reg);
void cw_registry_lock(cw_registry *reg);
void cw_registry_unlock(cw_registry *reg);
/* Register `full_name` with `attrs` (sorted by key): a handle on an
 * existing metric of that key and an equal type, or on a new one. On a
 * conflict, NULL with the reason written to why[0 .. whylen); when memory
 * is exhausted, NULL with why[0] NUL and nothing changed. Name and label
 * rules are the caller's to check. */
cw_metric *cw_registry_add(cw_registry *reg, const char *full_name, const char *help,
                           const cw_metric_type *type, const cw_attribute *attrs, size_t nattrs,
                           char *why, size_t whylen);
cw_metric *cw_metric_handle_clone(cw_metric *m);
void cw_metric_handle_release(cw_metric *m);

/* ---- Encoding (text.c, encode.c) ----------------------------------------- */

/* A growing NUL-terminated string: malloc'd, handed to the caller whole. */
typedef struct cw_text {
    char *buf;
    size_t len, cap;
    bool failed; /* memory ran out: later puts do nothing */
} cw_text;

void cw_text_put(cw_text *t, const char *s, size_t n);
void cw_text_puts(cw_text *t, const char *s);
/* `s` with '\\', '"' and newline escaped and bytes that are not UTF-8
 * replaced by U+FFFD, so any string is a valid OpenMetrics value. */
void cw_text_escaped(cw_text *t, const char *s);
void cw_text_u64(cw_text *t, uint64_t v);
void cw_text_i64(cw_text *t, int64_t v);
/* The shortest decimal that reads back as `v`, with ".0" on integers,
 * an exponent outside [1e-6, 1e21), and "+Inf", "-Inf", "NaN". */
void cw_text_double(cw_text *t, double v);

/* The whole registry as OpenMetrics text; the caller frees it. */
char *cw_registry_encode(cw_registry *reg);

/* ---- The runtime's own metrics (run_metrics.c) ----------------------------- */

/* The registry of a run and the handles the runtime keeps on it. */
typedef struct cw_rt_metrics {
    cw_registry *reg;
    cw_metric *tasks_spawned; /* counter family {name, kind, execution} */
    cw_metric *tasks_running; /* gauge family, same labels */
    cw_metric *pool_created[2], *pool_exhausted[2], *pool_oversized[2];
    char endpoint[64]; /* the HTTP address served, "" when none */
} cw_rt_metrics;

extern const cw_metric_ops cw_metric_entries;
/* Make the registry of a run and its own metrics, kept in the run's
 * CW_EXT_METRICS slot and freed with the run; the registry observes the
 * run's tasks. A backend calls it right after cw_rt_init. */
int cw_rt_metrics_open(cw_rt *rt); /* CW_ERR_NOMEM: the run cannot start */
/* The run's registry and the runtime's handles on it. */
static inline cw_rt_metrics *cw_metrics_of(const cw_rt *rt)
{
    return (cw_rt_metrics *)cw_ext_state(rt, CW_EXT_METRICS);
}

/* Register a metric of the runtime itself (no prefix, no audit). */
cw_metric *cw_rt_metric(cw_rt *rt, const char *name, const char *help, int kind,
                        const char *const *labels, size_t nlabels);
/* The series of runtime_task_polls for task `t` (made on first use); NULL
 * when memory is exhausted. */
cw_metric *cw_task_metrics_polls(cw_rt *rt, cw_metric *polls, const cw_task *t);

#endif
