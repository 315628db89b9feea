/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * entries.c - the metric entries of the reference's backends: registering
 * through a context (its label path, attributes and rules), encoding, and
 * the value functions.
 *
 * Registration checks everything a caller can get wrong before touching
 * the registry, and panics the calling task with the reason; the
 * registry's own conflicts (another type, other help) panic the same way
 * once its lock is released. On a backend with an audit digest, every
 * register and every encode is an event (spec/11-deterministic.md).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

enum { LOCAL_ATTRS = 31 };

static void audit_register(cw_ctx *ctx, const char *name, const char *help)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    if (!cw_audited(rt))
        return;
    const cw_attribute *attrs;
    size_t nattrs = cw_ctx_attributes(ctx, &attrs);
    /* Most contexts have a few attributes: their fields fit on the stack.
     * A heap array that cannot be had leaves the event without them
     * [MET-019]; the registration then finds no memory either. */
    cw_field local[2 + 2 * LOCAL_ATTRS];
    size_t n = 2 + 2 * nattrs;
    cw_field *fields = nattrs <= LOCAL_ATTRS ? local : malloc(n * sizeof *fields);
    if (!fields) {
        fields = local;
        n = 2;
        nattrs = 0;
    }
    fields[0] = (cw_field){name, strlen(name)};
    fields[1] = (cw_field){help, strlen(help)};
    for (size_t i = 0; i < nattrs; i++) {
        fields[2 + 2 * i] = (cw_field){attrs[i].key, strlen(attrs[i].key)};
        fields[3 + 2 * i] = (cw_field){attrs[i].value, strlen(attrs[i].value)};
    }
    cw_audit(rt, "register", fields, n);
    if (fields != local)
        free(fields);
}

/* The label names of a family and a histogram's `le` must not repeat a
 * context attribute: a label block names each label once. NULL or why. */
static const char *label_clash(const cw_ctx *ctx, const cw_metric_type *type)
{
    const cw_attribute *attrs;
    size_t nattrs = cw_ctx_attributes(ctx, &attrs);
    for (size_t i = 0; i < nattrs; i++) {
        const char *key = attrs[i].key;
        if (type->kind == CW_METRIC_HISTOGRAM && strcmp(key, "le") == 0)
            return "attribute le is reserved for histogram buckets";
        for (size_t j = 0; j < type->nlabels; j++)
            if (strcmp(key, type->labels[j]) == 0)
                return "a family label repeats a context attribute";
    }
    return NULL;
}

static cw_metric *core_register(cw_ctx *ctx, const char *name, const char *help,
                                const cw_metric_type *type)
{
    name = name ? name : "";
    help = help ? help : "";
    audit_register(ctx, name, help);
    const char *why = cw_label_check(name);
    if (why)
        cw_panic(ctx, "metric name: %s: %s", why, name);
    cw_registry *reg = cw_metrics_of(cw_ctx_rt(ctx))->reg;
    char *full = cw_label_join(cw_core_label(ctx), name);
    if (!full)
        return &reg->spent; /* [MET-019] */
    char reason[512];
    if (strncmp(full, "runtime", 7) == 0) {
        snprintf(reason, sizeof reason, "using runtime label is not allowed: %s", full);
    } else if ((why = cw_mtype_check(type)) != NULL || (why = label_clash(ctx, type)) != NULL) {
        snprintf(reason, sizeof reason, "metric `%s`: %s", full, why);
    } else {
        const cw_attribute *attrs;
        size_t nattrs = cw_ctx_attributes(ctx, &attrs);
        cw_metric *m = cw_registry_add(reg, full, help, type, attrs, nattrs, reason, sizeof reason);
        if (m || !reason[0]) { /* registered, or no memory to register [MET-019] */
            free(full);
            return m ? m : &reg->spent;
        }
    }
    free(full);
    cw_panic(ctx, "%s", reason);
}

static char *core_encode(cw_ctx *ctx)
{
    cw_rt *rt = cw_ctx_rt(ctx);
    cw_audit(rt, "encode", NULL, 0);
    return cw_registry_encode(cw_metrics_of(rt)->reg);
}

static int core_endpoint(cw_ctx *ctx, char *out, size_t len)
{
    const char *at = cw_metrics_of(cw_ctx_rt(ctx))->endpoint;
    if (!at[0])
        return CW_ERR_UNSUPPORTED;
    if (!out || strlen(at) >= len)
        return CW_ERR_INVALID;
    memcpy(out, at, strlen(at) + 1);
    return CW_OK;
}

const cw_metric_ops cw_metric_entries = {
    .size = sizeof(cw_metric_ops),

    .register_metric = core_register,
    .encode = core_encode,
    .endpoint = core_endpoint,

    .clone = cw_metric_handle_clone,
    .release = cw_metric_handle_release,

    .counter_add = cw_metric_counter_add,
    .counter_get = cw_metric_counter_get,
    .gauge_set = cw_metric_gauge_set,
    .gauge_add = cw_metric_gauge_add,
    .gauge_get = cw_metric_gauge_get,
    .histogram_observe = cw_metric_histogram_observe,
    .histogram_count = cw_metric_histogram_count,
    .histogram_sum = cw_metric_histogram_sum,

    .family_get = cw_metric_family_get,
    .family_remove = cw_metric_family_remove,
};
