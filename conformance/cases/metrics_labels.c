/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * metrics_labels.c - label values at the edges of UTF-8 (MET-009): every
 * well-formed sequence of RFC 3629 passes unchanged, and each byte that
 * does not begin one is written as U+FFFD, whatever byte follows; and
 * series of one name ordered by all their attributes (MET-010).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cases/metrics.h"

#define R "\xef\xbf\xbd" /* U+FFFD */

static const struct {
    const char *in, *out;
} vectors[] = {
    /* The first and last of each well-formed range. */
    {"\xc2\x80", "\xc2\x80"},
    {"\xdf\xbf", "\xdf\xbf"},
    {"\xe0\xa0\x80", "\xe0\xa0\x80"},
    {"\xe0\xbf\xbf", "\xe0\xbf\xbf"},
    {"\xe1\x80\x80", "\xe1\x80\x80"},
    {"\xec\xbf\xbf", "\xec\xbf\xbf"},
    {"\xed\x80\x80", "\xed\x80\x80"},
    {"\xed\x9f\xbf", "\xed\x9f\xbf"},
    {"\xee\x80\x80", "\xee\x80\x80"},
    {"\xef\xbf\xbf", "\xef\xbf\xbf"},
    {"\xf0\x90\x80\x80", "\xf0\x90\x80\x80"},
    {"\xf0\xbf\xbf\xbf", "\xf0\xbf\xbf\xbf"},
    {"\xf1\x80\x80\x80", "\xf1\x80\x80\x80"},
    {"\xf3\xbf\xbf\xbf", "\xf3\xbf\xbf\xbf"},
    {"\xf4\x80\x80\x80", "\xf4\x80\x80\x80"},
    {"\xf4\x8f\xbf\xbf", "\xf4\x8f\xbf\xbf"},
    /* Just outside them: overlong forms, surrogates, above U+10FFFF, bad
     * continuation bytes, lone continuations, and sequences cut short. */
    {"\xc0\x80", R R},
    {"\xc1\xbf", R R},
    {"\xc2\x7f", R "\x7f"},
    {"\xc2\xc0", R R},
    {"\xdf\xc0", R R},
    {"\xe0\x9f\xbf", R R R},
    {"\xe0\xa0\xc0", R R R},
    {"\xe1\x7f\x80", R "\x7f" R},
    {"\xe1\x80\x7f", R R "\x7f"},
    {"\xed\xa0\x80", R R R},
    {"\xef\xc0\x80", R R R},
    {"\xf0\x8f\xbf\xbf", R R R R},
    {"\xf1\x80\x80\xc0", R R R R},
    {"\xf1\x80\xc0\x80", R R R R},
    {"\xf1\xc0\x80\x80", R R R R},
    {"\xf1\x80\x7f\x80", R R "\x7f" R},
    {"\xf1\x7f\x80\x80", R "\x7f" R R},
    {"\xf4\x90\x80\x80", R R R R},
    {"\xf5\x80\x80\x80", R R R R},
    {"\xff", R},
    {"\x80", R},
    {"\xbf", R},
    {"\x80\x80\x80\x80", R R R R}, /* continuations never lead, whatever follows */
    {"\xc1\xbf\xbf\xbf", R R R R},
    {"\xef\xbf\xbf\xbf", "\xef\xbf\xbf" R},
    {"a\xe1\x80", "a" R R},
};

/* The text between `k="` and the next `"` on the line of `name`. */
static char *label_value(const char *text, const char *name)
{
    const char *line = strstr(text, name);
    ck_assert_msg(line != NULL, "no %s in:\n%s", name, text);
    const char *v = strstr(line, "k=\"");
    ck_assert_ptr_nonnull(v);
    v += 3;
    const char *end = strchr(v, '"');
    ck_assert_ptr_nonnull(end);
    return strndup(v, (size_t)(end - v));
}

static void *utf8_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    for (size_t i = 0; i < sizeof vectors / sizeof vectors[0]; i++) {
        char label[32], name[48];
        snprintf(label, sizeof label, "v%zu", i);
        cw_ctx *c = cw_with_attribute(cw_child(ctx, label), "k", vectors[i].in);
        cw_counter_inc(cw_counter(c, "hits", "hits"));
        char *text = cwc_encode(ctx);
        snprintf(name, sizeof name, "%s_hits_total{", label);
        char *got = label_value(text, name);
        ck_assert_msg(strcmp(got, vectors[i].out) == 0, "vector %zu: escaped wrongly", i);
        free(got);
        free(text);
        cw_ctx_release(c);
    }
    return NULL;
}

CWC_CASE(metrics_label_utf8_edges, "metrics", "MET-009 RUN-008", CWC_NEEDS_METRICS | CWC_REPEATED)
{
    cwc_run_ok(NULL, utf8_root, NULL);
}

/* Two metrics of one name whose attributes agree on the first pair and
 * differ on the second: two series, in the order of that second pair. */
static void *second_pair_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *hi = cw_with_attribute(cw_with_attribute(cw_child(ctx, "svc"), "a", "1"), "b", "2");
    cw_ctx *lo = cw_with_attribute(cw_with_attribute(cw_child(ctx, "svc"), "a", "1"), "b", "1");
    cw_counter_add(cw_counter(hi, "calls", "calls"), 2);
    cw_counter_add(cw_counter(lo, "calls", "calls"), 1);
    char *text = cwc_encode(ctx);
    const char *one = strstr(text, "svc_calls_total{a=\"1\",b=\"1\"} 1\n");
    const char *two = strstr(text, "svc_calls_total{a=\"1\",b=\"2\"} 2\n");
    ck_assert_msg(one && two && one < two, "two series in attribute order expected:\n%s", text);
    free(text);
    cw_ctx_release(hi);
    cw_ctx_release(lo);
    return NULL;
}

CWC_CASE(metrics_order_by_every_attribute, "metrics", "MET-010 RUN-008",
         CWC_NEEDS_METRICS | CWC_REPEATED)
{
    cwc_run_ok(NULL, second_pair_root, NULL);
}
