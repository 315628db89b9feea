/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw/metrics.h - counters, gauges, histograms and families of them,
 * registered under a context's name and attributes, and encoded as
 * OpenMetrics text.
 *
 * A context's label path becomes the prefix of every metric registered
 * through it ("engine" + "votes" is "engine_votes") and its attributes
 * become labels ({epoch="5"}). cw_register returns a handle: the metric is
 * exposed for as long as any handle on it lives. Each run has its own
 * registry, and every handle is freed with the run at the latest.
 * Rules: spec/16-metrics.md.
 */
#ifndef CW_METRICS_H
#define CW_METRICS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cw/backend.h"
#include "cw/error.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cw_metric cw_metric; /* a registered metric, or one series of a family */

/* What a metric counts. A family's children are all of one kind. */
enum cw_metric_kind {
    CW_METRIC_COUNTER = 1,   /* an unsigned total that only goes up: <name>_total */
    CW_METRIC_GAUGE = 2,     /* a signed value that goes up and down */
    CW_METRIC_HISTOGRAM = 3, /* observations counted in buckets, with their sum */
};

/* The type of a metric, given to cw_register. Two registrations of one key
 * share a metric only when their types are equal: the same kind, the same
 * bucket bounds, and the same label names in the same order [MET-003]. */
typedef struct cw_metric_type {
    int kind;                  /* enum cw_metric_kind */
    const double *buckets;     /* histogram: upper bounds, finite, strictly increasing */
    size_t nbuckets;           /* may be 0: then only the +Inf bucket */
    const char *const *labels; /* a family: its label names, in output order */
    size_t nlabels;            /* 0: a single metric, not a family */
} cw_metric_type;

/* Bucket bounds in seconds, as the original interface's presets. Use them
 * as initializers: `static const double b[] = CW_BUCKETS_NETWORK;`. */
#define CW_BUCKETS_NETWORK {0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0, 2.0, 5.0, 10.0, 30.0, 60.0, 300.0}
#define CW_BUCKETS_LOCAL                                                                           \
    {3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 0.001, 0.003, 0.01, 0.03, 0.1, 0.3, 1.0}
#define CW_BUCKETS_CRYPTOGRAPHY                                                                    \
    {3e-6, 1e-5, 3e-5, 1e-4, 3e-4, 0.001, 0.002, 0.003, 0.005, 0.01, 0.015, 0.02, 0.025, 0.03,    \
     0.1, 0.2}

/* The metric entries of a backend, reached through cw_backend.metrics. Like
 * the main table it only grows at the end; `size` says how far this
 * backend's copy goes (CW_METRIC_OPS_HAS). */
struct cw_metric_ops {
    uint32_t size; /* sizeof(cw_metric_ops) the backend was built with */

    cw_metric *(*register_metric)(cw_ctx *ctx, const char *name, const char *help,
                                  const cw_metric_type *type);
    char *(*encode)(cw_ctx *ctx);
    int (*endpoint)(cw_ctx *ctx, char *out, size_t len);

    cw_metric *(*clone)(cw_metric *m);
    void (*release)(cw_metric *m);

    void (*counter_add)(cw_metric *m, uint64_t n);
    uint64_t (*counter_get)(const cw_metric *m);
    void (*gauge_set)(cw_metric *m, int64_t v);
    void (*gauge_add)(cw_metric *m, int64_t delta);
    int64_t (*gauge_get)(const cw_metric *m);
    void (*histogram_observe)(cw_metric *m, double v);
    uint64_t (*histogram_count)(const cw_metric *m);
    double (*histogram_sum)(const cw_metric *m);

    cw_metric *(*family_get)(cw_metric *family, const char *const *values);
    int (*family_remove)(cw_metric *family, const char *const *values);
};

#define CW_METRIC_OPS_HAS(ops, field)                                                              \
    ((ops)->size >= offsetof(cw_metric_ops, field) + sizeof((ops)->field) && (ops)->field != NULL)

/* The metric table of backend `b`, or NULL when it has none. */
static inline const cw_metric_ops *cw__metric_ops(const cw_backend *b)
{
    return CW_BACKEND_HAS(b, metrics) ? b->metrics : NULL;
}

static inline const cw_metric_ops *cw__metric_ops_of(const void *object)
{
    return cw__backend_of(object)->metrics;
}

/* ---- Registering and encoding: from a task of the context's run ----------- */

/* Register a metric of `type` named "<ctx label>_<name>" ("<name>" at the
 * root), labelled with the context's attributes [MET-001]. The caller owns
 * the handle (cw_metric_release); the metric is exposed while any handle on
 * it lives [MET-002]. A metric already registered under the same name and
 * attributes with an equal type is shared: the handle is another one on it
 * [MET-003]. Panics the caller on a bad name, label or bucket list, or on a
 * conflicting earlier registration [MET-004, MET-005]. NULL when the
 * backend has no metrics. */
static inline cw_metric *cw_register(cw_ctx *ctx, const char *name, const char *help,
                                     const cw_metric_type *type)
{
    const cw_metric_ops *ops = cw__metric_ops(cw__backend_of(ctx));
    return ops ? ops->register_metric(ctx, name, help, type) : NULL;
}

static inline cw_metric *cw_counter(cw_ctx *ctx, const char *name, const char *help)
{
    cw_metric_type t = {CW_METRIC_COUNTER, NULL, 0, NULL, 0};
    return cw_register(ctx, name, help, &t);
}

static inline cw_metric *cw_gauge(cw_ctx *ctx, const char *name, const char *help)
{
    cw_metric_type t = {CW_METRIC_GAUGE, NULL, 0, NULL, 0};
    return cw_register(ctx, name, help, &t);
}

static inline cw_metric *cw_histogram(cw_ctx *ctx, const char *name, const char *help,
                                      const double *buckets, size_t nbuckets)
{
    cw_metric_type t = {CW_METRIC_HISTOGRAM, buckets, nbuckets, NULL, 0};
    return cw_register(ctx, name, help, &t);
}

/* A family of counters or gauges with the label names labels[0 .. n). */
static inline cw_metric *cw_family(cw_ctx *ctx, const char *name, const char *help, int kind,
                                   const char *const *labels, size_t nlabels)
{
    cw_metric_type t = {kind, NULL, 0, labels, nlabels};
    return cw_register(ctx, name, help, &t);
}

/* Every metric of the run, whichever context is given, as OpenMetrics text
 * ending "# EOF\n" [MET-006]. The string is malloc'd: the caller frees it
 * with free(). NULL when the backend has no metrics. */
static inline char *cw_metrics_encode(cw_ctx *ctx)
{
    const cw_metric_ops *ops = cw__metric_ops(cw__backend_of(ctx));
    return ops ? ops->encode(ctx) : NULL;
}

/* The address the run serves /metrics on over HTTP ("127.0.0.1:9464"),
 * written to out[0 .. len) with a NUL [MET-017]. CW_ERR_UNSUPPORTED when
 * the run serves none, CW_ERR_INVALID when `len` is too short. */
static inline int cw_metrics_endpoint(cw_ctx *ctx, char *out, size_t len)
{
    const cw_metric_ops *ops = cw__metric_ops(cw__backend_of(ctx));
    if (!ops || !CW_METRIC_OPS_HAS(ops, endpoint))
        return CW_ERR_UNSUPPORTED;
    return ops->endpoint(ctx, out, len);
}

/* ---- Handles and values: any thread, while the run lives ------------------ */

/* Another handle on the same registered metric; each is released once.
 * NULL for a family's child, which has no handles of its own. */
static inline cw_metric *cw_metric_clone(cw_metric *m)
{
    return cw__metric_ops_of(m)->clone(m);
}

/* Give up a handle. The last one unregisters the metric: it leaves the
 * encoded output and its children become invalid [MET-002]. Does nothing
 * for a family's child. */
static inline void cw_metric_release(cw_metric *m)
{
    if (m)
        cw__metric_ops_of(m)->release(m);
}

/* Counters [MET-011]. On a metric of another kind these change nothing and
 * reads give 0 [MET-013]. */
static inline void cw_counter_add(cw_metric *m, uint64_t n)
{
    cw__metric_ops_of(m)->counter_add(m, n);
}

static inline void cw_counter_inc(cw_metric *m)
{
    cw_counter_add(m, 1);
}

static inline uint64_t cw_counter_get(const cw_metric *m)
{
    return cw__metric_ops_of(m)->counter_get(m);
}

/* Gauges [MET-011]. */
static inline void cw_gauge_set(cw_metric *m, int64_t v)
{
    cw__metric_ops_of(m)->gauge_set(m, v);
}

static inline void cw_gauge_add(cw_metric *m, int64_t delta)
{
    cw__metric_ops_of(m)->gauge_add(m, delta);
}

static inline void cw_gauge_inc(cw_metric *m)
{
    cw_gauge_add(m, 1);
}

static inline void cw_gauge_dec(cw_metric *m)
{
    cw_gauge_add(m, -1);
}

static inline int64_t cw_gauge_get(const cw_metric *m)
{
    return cw__metric_ops_of(m)->gauge_get(m);
}

/* Histograms: `v` is counted in the first bucket whose bound is >= v, and
 * added to the sum [MET-011]. */
static inline void cw_histogram_observe(cw_metric *m, double v)
{
    cw__metric_ops_of(m)->histogram_observe(m, v);
}

static inline uint64_t cw_histogram_count(const cw_metric *m)
{
    return cw__metric_ops_of(m)->histogram_count(m);
}

static inline double cw_histogram_sum(const cw_metric *m)
{
    return cw__metric_ops_of(m)->histogram_sum(m);
}

/* The child of `family` labelled values[0 .. nlabels), one string per label
 * name, made at zero on first use [MET-012]. Borrowed: valid until it is
 * removed or the family's last handle is released. NULL when `family` is
 * not a family or `values` is NULL. */
static inline cw_metric *cw_family_get(cw_metric *family, const char *const *values)
{
    return cw__metric_ops_of(family)->family_get(family, values);
}

/* Remove the child labelled `values`: its series leaves the output and the
 * pointer cw_family_get gave for it becomes invalid. CW_OK, or
 * CW_ERR_INVALID when there is no such child, `family` is not a family or
 * `values` is NULL [MET-013]. */
static inline int cw_family_remove(cw_metric *family, const char *const *values)
{
    return cw__metric_ops_of(family)->family_remove(family, values);
}

#ifdef __cplusplus
}
#endif
#endif
