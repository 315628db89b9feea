/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * metrics_rules.c - the rules of spec/16-metrics.md one by one, on every
 * backend: naming, handles, conflicts, the exact text, values, families,
 * misuse, and the runtime's own metrics.
 */
#include <math.h>
#include <pthread.h>

#include <openssl/evp.h>

#include "cases/metrics.h"

/* Run `root` and require that it panics with a message holding `needle`. */
static void expect_panic(cw_task_fn root, void *arg, const char *needle)
{
    cw_run_result res;
    ck_assert_int_eq(cwc_run(NULL, root, arg, &res), CW_ERR_PANICKED);
    ck_assert_msg(strstr(res.message, needle), "message '%s' lacks '%s'", res.message, needle);
}

/* ---- MET-001, MET-010: names, and the same text from every context ----- */

static void *prefix_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *a = cw_child(ctx, "a");
    cw_ctx *ab = cw_with_attribute(cw_child(a, "b"), "k", "v");
    cw_counter(ctx, "top", "at the root");
    cw_gauge(ab, "depth", "two levels down");
    char *from_root = cwc_encode(ctx);
    char *from_child = cwc_encode(ab);
    CWC_HAS(from_root, "\ntop_total 0\n");
    CWC_HAS(from_root, "\na_b_depth{k=\"v\"} 0\n");
    ck_assert_str_eq(from_root, from_child);
    free(from_child);
    free(from_root);
    cw_ctx_release(ab);
    cw_ctx_release(a);
    return NULL;
}

CWC_CASE(metrics_rule_names_and_any_context, "metrics", "MET-001 MET-010 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, prefix_root, NULL);
}

/* ---- MET-002, MET-003: handles and shared keys -------------------------- */

static void *handles_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_metric *a = cw_counter(ctx, "shared", "one key");
    cw_metric *b = cw_counter(ctx, "shared", "one key"); /* the same key: the same metric */
    cw_counter_add(a, 1);
    cw_counter_add(b, 2);
    ck_assert_uint_eq(cw_counter_get(a), 3);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "\nshared_total 3\n");
    free(text);
    cw_metric *c = cw_metric_clone(b);
    cw_metric_release(a);
    cw_metric_release(b);
    text = cwc_encode(ctx);
    CWC_HAS(text, "\nshared_total 3\n"); /* the clone still holds it */
    free(text);
    cw_metric_release(c);
    text = cwc_encode(ctx);
    CWC_LACKS(text, "shared");
    free(text);
    cw_metric *fresh = cw_counter(ctx, "shared", "one key");
    ck_assert_uint_eq(cw_counter_get(fresh), 0);
    cw_metric_release(fresh);

    cw_ctx *x = cw_with_attribute(cw_child(ctx, "g"), "x", "1");
    cw_metric *g1 = cw_gauge(x, "level", "a gauge");
    cw_with_attribute(x, "x", "2");
    cw_metric *g2 = cw_gauge(x, "level", "a gauge"); /* other attributes: another metric */
    cw_gauge_set(g1, 5);
    cw_gauge_set(g2, -5);
    text = cwc_encode(ctx);
    CWC_HAS(text, "g_level{x=\"1\"} 5\ng_level{x=\"2\"} -5\n");
    free(text);
    cw_ctx_release(x);
    return NULL;
}

CWC_CASE(metrics_rule_handles_and_shared_keys, "metrics", "MET-002 MET-003 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, handles_root, NULL);
}

/* ---- MET-004: conflicts ---------------------------------------------- */

static const double one_two[] = {1.0, 2.0}, one_three[] = {1.0, 3.0}, half_two[] = {0.5, 2.0};
static const double one_two_three[] = {1.0, 2.0, 3.0};
static const char *const label_a[] = {"a"}, *const label_b[] = {"b"};
static const char *const label_a_b[] = {"a", "b"};

enum conflict {
    OTHER_KIND_SAME_KEY,
    OTHER_BUCKETS,
    OTHER_FIRST_BUCKET, /* a type differs by its first bucket alone */
    OTHER_LABELS,
    MORE_BUCKETS, /* the registered ones and one more: a type differs by its count alone */
    MORE_LABELS,
    OTHER_KIND_OTHER_ATTRIBUTES,
    OTHER_HELP,
    OTHER_KIND_SAME_ATTRIBUTES,
};

static void *conflict_root(cw_ctx *ctx, void *arg)
{
    cw_counter(ctx, "c", "help");
    cw_histogram(ctx, "h", "help", one_two, 2);
    cw_family(ctx, "f", "help", CW_METRIC_COUNTER, label_a, 1);
    cw_ctx *attr = cw_with_attribute(cw_child(ctx, "x"), "k", "v");
    cw_ctx *plain = cw_child(ctx, "x");
    cw_counter(attr, "n", "help");
    switch ((enum conflict)(intptr_t)arg) {
    case OTHER_KIND_SAME_KEY:
        cw_gauge(ctx, "c", "help");
        break;
    case OTHER_BUCKETS:
        cw_histogram(ctx, "h", "help", one_three, 2);
        break;
    case OTHER_FIRST_BUCKET:
        cw_histogram(ctx, "h", "help", half_two, 2);
        break;
    case OTHER_LABELS:
        cw_family(ctx, "f", "help", CW_METRIC_COUNTER, label_b, 1);
        break;
    case MORE_BUCKETS:
        cw_histogram(ctx, "h", "help", one_two_three, 3);
        break;
    case MORE_LABELS:
        cw_family(ctx, "f", "help", CW_METRIC_COUNTER, label_a_b, 2);
        break;
    case OTHER_KIND_OTHER_ATTRIBUTES:
        cw_gauge(plain, "n", "help");
        break;
    case OTHER_HELP:
        cw_counter(plain, "n", "other help");
        break;
    case OTHER_KIND_SAME_ATTRIBUTES: {
        cw_ctx *two = cw_with_attribute(cw_with_attribute(cw_child(ctx, "y"), "b", "2"), "a", "1");
        cw_counter(two, "n", "help");
        cw_gauge(two, "n", "help");
        break;
    }
    }
    return NULL;
}

/* A conflicting registration in a task of its own, under catch_panics: it
 * panics, and the metric it tried to make is not there. */
static void *conflict_leaves_nothing(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_counter(ctx, "kept", "help");
    cw_handle *h = cw_spawn(cw_child(ctx, "w"), conflict_root, (void *)(intptr_t)OTHER_HELP);
    ck_assert_int_eq(cw_join(h, NULL), CW_ERR_EXITED);
    cw_handle_release(h);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "w_x_n_total{k=\"v\"} 0");
    CWC_LACKS(text, "other help");
    ck_assert_uint_eq(cwc_count(text, "w_x_n_total"), 1);
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_conflicts_panic, "metrics", "MET-004 RUN-008", CWC_REPEATED)
{
    expect_panic(conflict_root, (void *)(intptr_t)OTHER_KIND_SAME_KEY,
                 "duplicate metric `c` with attributes [] registered with different type");
    expect_panic(conflict_root, (void *)(intptr_t)OTHER_BUCKETS, "registered with different type");
    expect_panic(conflict_root, (void *)(intptr_t)OTHER_FIRST_BUCKET,
                 "registered with different type");
    expect_panic(conflict_root, (void *)(intptr_t)OTHER_LABELS, "registered with different type");
    expect_panic(conflict_root, (void *)(intptr_t)MORE_BUCKETS, "registered with different type");
    expect_panic(conflict_root, (void *)(intptr_t)MORE_LABELS, "registered with different type");
    expect_panic(conflict_root, (void *)(intptr_t)OTHER_KIND_OTHER_ATTRIBUTES,
                 "metric family `x_n` registered with inconsistent metric type");
    expect_panic(conflict_root, (void *)(intptr_t)OTHER_HELP,
                 "metric family `x_n` registered with inconsistent help text");
    expect_panic(
        conflict_root, (void *)(intptr_t)OTHER_KIND_SAME_ATTRIBUTES,
        "duplicate metric `y_n` with attributes [a=1, b=2] registered with different type");
    cw_config cfg = cwc_config();
    cfg.catch_panics = true;
    cwc_run_ok(&cfg, conflict_leaves_nothing, NULL);
}

/* ---- MET-005: names, labels, buckets ------------------------------------ */

enum bad_registration {
    BAD_EMPTY_NAME,
    BAD_FIRST_CHAR,
    BAD_CHAR,
    BAD_RUNTIME_AT_ROOT,
    BAD_KIND,
    BAD_BUCKET_ORDER,
    BAD_BUCKET_NAN,
    BAD_LABEL_NAME,
    BAD_LABEL_TWICE,
    BAD_LABEL_IS_ATTRIBUTE,
    BAD_HISTOGRAM_LE_LABEL,
    BAD_HISTOGRAM_LE_ATTRIBUTE,
    BAD_BUCKETS_NOT_HISTOGRAM,
    BAD_BUCKETS_MISSING,
    BAD_LABELS_MISSING,
};

static void *bad_root(cw_ctx *ctx, void *arg)
{
    static const double unordered[] = {1.0, 1.0}, nan_bound[] = {NAN};
    static const char *const bad_label[] = {"1a"}, *const twice[] = {"a", "a"},
                             *const le[] = {"le"}, *const env[] = {"env"};
    cw_metric_type kind0 = {0, NULL, 0, NULL, 0};
    cw_metric_type hist_le = {CW_METRIC_HISTOGRAM, NULL, 0, le, 1};
    cw_metric_type counter_buckets = {CW_METRIC_COUNTER, one_two, 2, NULL, 0};
    cw_metric_type no_buckets = {CW_METRIC_HISTOGRAM, NULL, 2, NULL, 0};
    cw_metric_type no_labels = {CW_METRIC_GAUGE, NULL, 0, NULL, 1};
    cw_with_attribute(ctx, "env", "prod");
    switch ((enum bad_registration)(intptr_t)arg) {
    case BAD_EMPTY_NAME:
        cw_counter(ctx, "", "h");
        break;
    case BAD_FIRST_CHAR:
        cw_counter(ctx, "1x", "h");
        break;
    case BAD_CHAR:
        cw_counter(ctx, "a-b", "h");
        break;
    case BAD_RUNTIME_AT_ROOT:
        cw_counter(ctx, "runtime_x", "h");
        break;
    case BAD_KIND:
        cw_register(ctx, "k", "h", &kind0);
        break;
    case BAD_BUCKET_ORDER:
        cw_histogram(ctx, "k", "h", unordered, 2);
        break;
    case BAD_BUCKET_NAN:
        cw_histogram(ctx, "k", "h", nan_bound, 1);
        break;
    case BAD_LABEL_NAME:
        cw_family(ctx, "k", "h", CW_METRIC_GAUGE, bad_label, 1);
        break;
    case BAD_LABEL_TWICE:
        cw_family(ctx, "k", "h", CW_METRIC_GAUGE, twice, 2);
        break;
    case BAD_LABEL_IS_ATTRIBUTE:
        cw_family(ctx, "k", "h", CW_METRIC_GAUGE, env, 1);
        break;
    case BAD_HISTOGRAM_LE_LABEL:
        cw_register(ctx, "k", "h", &hist_le);
        break;
    case BAD_HISTOGRAM_LE_ATTRIBUTE:
        cw_with_attribute(ctx, "le", "1");
        cw_histogram(ctx, "k", "h", NULL, 0);
        break;
    case BAD_BUCKETS_NOT_HISTOGRAM:
        cw_register(ctx, "k", "h", &counter_buckets);
        break;
    case BAD_BUCKETS_MISSING:
        cw_register(ctx, "k", "h", &no_buckets);
        break;
    case BAD_LABELS_MISSING:
        cw_register(ctx, "k", "h", &no_labels);
        break;
    }
    return NULL;
}

static void *runtime_below_root_ok(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *a = cw_child(ctx, "a");
    cw_metric_release(cw_counter(a, "runtime", "allowed: a_runtime"));
    cw_ctx_release(a);
    /* At the root, only the whole word is reserved: "runtim" is not it. */
    cw_metric_release(cw_counter(ctx, "runtim_x", "allowed: runtim_x"));
    /* The ends of each range a label's characters come from [CTX-002]. */
    cw_ctx *edges = cw_child(ctx, "Az09_Za");
    cw_metric_release(cw_counter(edges, "Za_z9A0", "allowed: Az09_Za_Za_z9A0"));
    cw_ctx_release(edges);
    return NULL;
}

CWC_CASE(metrics_rule_names_labels_buckets, "metrics", "MET-005 CTX-002 RUN-008", CWC_REPEATED)
{
    static const struct {
        enum bad_registration which;
        const char *needle;
    } bad[] = {
        {BAD_EMPTY_NAME, "metric name: label must start with [a-zA-Z]: "},
        {BAD_FIRST_CHAR, "metric name: label must start with [a-zA-Z]: 1x"},
        {BAD_CHAR, "metric name: label must only contain [a-zA-Z0-9_]: a-b"},
        {BAD_RUNTIME_AT_ROOT, "using runtime label is not allowed: runtime_x"},
        {BAD_KIND, "metric `k`: metric kind must be a cw_metric_kind"},
        {BAD_BUCKET_ORDER, "metric `k`: histogram buckets must be strictly increasing"},
        {BAD_BUCKET_NAN, "metric `k`: histogram buckets must be finite"},
        {BAD_LABEL_NAME, "metric `k`: family label names must match [a-zA-Z][a-zA-Z0-9_]*"},
        {BAD_LABEL_TWICE, "metric `k`: family label names must be distinct"},
        {BAD_LABEL_IS_ATTRIBUTE, "metric `k`: a family label repeats a context attribute"},
        {BAD_HISTOGRAM_LE_LABEL, "metric `k`: label name le is reserved for histogram buckets"},
        {BAD_HISTOGRAM_LE_ATTRIBUTE, "metric `k`: attribute le is reserved for histogram buckets"},
        {BAD_BUCKETS_NOT_HISTOGRAM, "metric `k`: only a histogram has buckets"},
        {BAD_BUCKETS_MISSING, "metric `k`: histogram buckets are missing"},
        {BAD_LABELS_MISSING, "metric `k`: family label names are missing"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
        expect_panic(bad_root, (void *)(intptr_t)bad[i].which, bad[i].needle);
    cwc_run_ok(NULL, runtime_below_root_ok, NULL);
}

/* ---- MET-006, MET-007: the text and its headers ---------------------------- */

static void *headers_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_counter(ctx, "b", "second");
    cw_counter(ctx, "a", "first");
    cw_gauge(ctx, "B", "upper case sorts first");
    cw_histogram(ctx, "hist", "a histogram", NULL, 0);
    cw_family(ctx, "empty", "no children yet", CW_METRIC_COUNTER, label_a, 1);
    char *text = cwc_encode(ctx);
    const char *B = strstr(text, "# HELP B upper case sorts first.\n# TYPE B gauge\nB 0\n");
    const char *a = strstr(text, "# HELP a first.\n# TYPE a counter\na_total 0\n");
    const char *b = strstr(text, "# HELP b second.\n# TYPE b counter\nb_total 0\n");
    ck_assert_msg(B && a && b && B < a && a < b, "names out of order:\n%s", text);
    CWC_HAS(text, "# HELP hist a histogram.\n# TYPE hist histogram\n");
    CWC_LACKS(text, "empty"); /* a family without children writes nothing */
    ck_assert_uint_eq(cwc_count(text, "# HELP "), cwc_count(text, "# TYPE "));
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_text_and_headers, "metrics", "MET-006 MET-007 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, headers_root, NULL);
}

/* ---- MET-008: samples and numbers ------------------------------------- */

static void *samples_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const double bounds[] = {0.5, 1.0, 2.5};
    static const double odd[] = {1e-7, 0.000003, 250.5, 1000, 2.5e20, 1e21, 1.5e21};
    cw_metric *c = cw_counter(ctx, "c", "h");
    cw_counter_add(c, UINT64_C(18446744073709551615));
    cw_metric *g = cw_gauge(ctx, "g", "h");
    cw_gauge_set(g, INT64_MIN);
    cw_metric *h = cw_histogram(ctx, "h", "h", bounds, 3);
    cw_histogram_observe(h, 0.5); /* a bound is inclusive */
    cw_histogram_observe(h, 1.0);
    cw_histogram_observe(h, 3.0);
    cw_histogram_observe(h, 0.25);
    cw_metric *inf = cw_histogram(ctx, "inf_only", "h", NULL, 0);
    cw_histogram_observe(inf, 0.1);
    cw_histogram_observe(inf, 0.2);
    cw_histogram(ctx, "spelling", "h", odd, 7);
    cw_metric *big = cw_histogram(ctx, "big", "h", NULL, 0);
    cw_histogram_observe(big, 1e308);
    cw_histogram_observe(big, 1e308); /* the sum overflows to infinity */
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "\nc_total 18446744073709551615\n");
    CWC_HAS(text, "\ng -9223372036854775808\n");
    CWC_HAS(text, "\nh_sum 4.75\nh_count 4\nh_bucket{le=\"0.5\"} 2\nh_bucket{le=\"1.0\"} 3\n"
                  "h_bucket{le=\"2.5\"} 3\nh_bucket{le=\"+Inf\"} 4\n");
    CWC_HAS(text, "\nbig_sum +Inf\nbig_count 2\nbig_bucket{le=\"+Inf\"} 2\n");
    CWC_HAS(text, "\ninf_only_sum 0.30000000000000004\ninf_only_count 2\n"
                  "inf_only_bucket{le=\"+Inf\"} 2\n");
    CWC_HAS(text, "spelling_sum 0.0\nspelling_count 0\nspelling_bucket{le=\"1e-7\"} 0\n"
                  "spelling_bucket{le=\"0.000003\"} 0\nspelling_bucket{le=\"250.5\"} 0\n"
                  "spelling_bucket{le=\"1000.0\"} 0\n"
                  "spelling_bucket{le=\"250000000000000000000.0\"} 0\n"
                  "spelling_bucket{le=\"1e21\"} 0\nspelling_bucket{le=\"1.5e21\"} 0\n");
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_sample_lines, "metrics", "MET-008 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, samples_root, NULL);
}

/* Negative numbers keep their sign, in bounds and sums; a histogram whose
 * _sum would not be a counter writes its buckets alone. */
static void *negative_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const double below[] = {-2.5, -0.000003, 0.0, 1e21};
    static const double above[] = {1.0, 2.0};
    cw_metric *neg = cw_histogram(ctx, "neg", "h", below, 4);
    cw_histogram_observe(neg, -3.0);
    cw_histogram_observe(neg, -1.0);
    cw_histogram_observe(neg, 5.0);
    cw_metric *dip = cw_histogram(ctx, "dip", "h", above, 2);
    cw_histogram_observe(dip, -4.5);
    cw_metric *shallow = cw_histogram(ctx, "shallow", "h", above, 2); /* a sum above -1 */
    cw_histogram_observe(shallow, -0.5);
    cw_metric *nan = cw_histogram(ctx, "nan", "h", above, 2);
    cw_histogram_observe(nan, NAN);
    cw_metric *back = cw_histogram(ctx, "back", "h", above, 2);
    cw_histogram_observe(back, -4.5);
    cw_histogram_observe(back, 6.0);
    static const double slightly[] = {-0.5, 1.0}; /* a negative bound above -1 */
    cw_metric *slight = cw_histogram(ctx, "slight", "h", slightly, 2);
    cw_histogram_observe(slight, 2.0);
    static const double from_zero[] = {0.0, 1.0}; /* a bound of zero is not negative */
    cw_metric *zero = cw_histogram(ctx, "zero", "h", from_zero, 2);
    cw_histogram_observe(zero, 0.5);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "# TYPE neg histogram\nneg_bucket{le=\"-2.5\"} 1\n"
                  "neg_bucket{le=\"-0.000003\"} 2\nneg_bucket{le=\"0.0\"} 2\n"
                  "neg_bucket{le=\"1e21\"} 3\nneg_bucket{le=\"+Inf\"} 3\n");
    CWC_HAS(text, "# TYPE dip histogram\ndip_bucket{le=\"1.0\"} 1\n");
    CWC_HAS(text, "# TYPE shallow histogram\nshallow_bucket{le=\"1.0\"} 1\n");
    CWC_HAS(text, "# TYPE nan histogram\nnan_bucket{le=\"1.0\"} 0\n");
    CWC_HAS(text, "# TYPE back histogram\nback_sum 1.5\nback_count 2\n");
    CWC_HAS(text, "# TYPE slight histogram\nslight_bucket{le=\"-0.5\"} 0\n");
    CWC_HAS(text, "# TYPE zero histogram\nzero_sum 0.5\nzero_count 1\n");
    ck_assert(cw_histogram_sum(neg) == 1.0);
    ck_assert(cw_histogram_sum(dip) == -4.5);
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_negative_numbers, "metrics", "MET-008 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, negative_root, NULL);
}

/* A histogram whose one and only bound is negative has a negative bound
 * too: its buckets alone, even when what it observed sums above zero. */
static void *lone_negative_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const double lone[] = {-1.0};
    cw_metric *h = cw_histogram(ctx, "lone", "h", lone, 1);
    cw_histogram_observe(h, -2.0);
    cw_histogram_observe(h, 5.0);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "# TYPE lone histogram\nlone_bucket{le=\"-1.0\"} 1\n"
                  "lone_bucket{le=\"+Inf\"} 2\n");
    ck_assert_ptr_null(strstr(text, "lone_sum"));
    ck_assert_ptr_null(strstr(text, "lone_count"));
    ck_assert(cw_histogram_sum(h) == 3.0);
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_lone_negative_bound, "metrics", "MET-008 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, lone_negative_root, NULL);
}

/* Some doubles need all 17 significant digits to read back as themselves:
 * 1 + 2^-52 as a bound, 0.1 + 0.2 as a sum; and every digit counts, the
 * nines of 99.5 too [MET-008]. */
static void *all_digits_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const double bounds[] = {1.0000000000000002, 99.5};
    cw_metric *h = cw_histogram(ctx, "fine", "h", bounds, 2);
    cw_histogram_observe(h, 0.1);
    cw_histogram_observe(h, 0.2);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "fine_sum 0.30000000000000004\nfine_count 2\n");
    CWC_HAS(text, "fine_bucket{le=\"1.0000000000000002\"} 2\n");
    CWC_HAS(text, "fine_bucket{le=\"99.5\"} 2\n");
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_doubles_all_digits, "metrics", "MET-008 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, all_digits_root, NULL);
}

/* ---- MET-009: labels, their order and escaping ---------------------------- */

/* Quotes, backslashes, newlines, UTF-8, and a byte that is not UTF-8. */
static const char hostile[] = "a\"b\\c\nd \xc3\xa9\xe2\x9c\x93\xf0\x9f\x99\x82 \xff!";
static const char hostile_escaped[] =
    "a\\\"b\\\\c\\nd \xc3\xa9\xe2\x9c\x93\xf0\x9f\x99\x82 \xef\xbf\xbd!";
static const char hostile_decoded[] =
    "a\"b\\c\nd \xc3\xa9\xe2\x9c\x93\xf0\x9f\x99\x82 \xef\xbf\xbd!";

/* Tell the parser check what `label` must read back as. */
static void expect_label(const char *label, const char *value)
{
    const char *dir = getenv("CWC_METRICS_DIR");
    if (!dir || !*dir)
        return;
    char path[1024];
    snprintf(path, sizeof path, "%s/%s-%ld-hostile-0.expect", dir, cwc_backend->name,
             (long)getpid());
    FILE *f = fopen(path, "a");
    ck_assert_ptr_nonnull(f);
    fprintf(f, "%s ", label);
    for (const unsigned char *p = (const unsigned char *)value; *p; p++)
        fprintf(f, "%02x", *p);
    fputs("\n", f);
    ck_assert_int_eq(fclose(f), 0);
}

static void *labels_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const char *const labels[] = {"zeta", "alpha"};
    static const double bound[] = {1.0};
    cw_ctx *c = cw_child(ctx, "svc");
    cw_with_attribute(cw_with_attribute(c, "region", hostile), "env", "prod");
    cw_metric *f = cw_family(c, "calls", "help with \"quotes\", \\ and\nnewline", CW_METRIC_COUNTER,
                             labels, 2);
    const char *values[] = {hostile, "plain"};
    cw_counter_inc(cw_family_get(f, values));
    cw_metric_type ht = {CW_METRIC_HISTOGRAM, bound, 1, labels, 1};
    cw_metric *h = cw_register(c, "latency", "h", &ht);
    const char *zeta[] = {"z"};
    cw_histogram_observe(cw_family_get(h, zeta), 0.5);
    char *text = cw_metrics_encode(ctx);
    cwc_check_shape(text);
    cwc_keep_text(text, "hostile");
    expect_label("region", hostile_decoded);
    expect_label("zeta", hostile_decoded);
    char line[512];
    snprintf(line, sizeof line,
             "\nsvc_calls_total{env=\"prod\",region=\"%s\",zeta=\"%s\",alpha=\"plain\"} 1\n",
             hostile_escaped, hostile_escaped);
    CWC_HAS(text, line);
    CWC_HAS(text, "# HELP svc_calls help with \\\"quotes\\\", \\\\ and\\nnewline.\n");
    snprintf(line, sizeof line,
             "\nsvc_latency_bucket{env=\"prod\",region=\"%s\",zeta=\"z\",le=\"1.0\"} 1\n",
             hostile_escaped);
    CWC_HAS(text, line);
    free(text);
    cw_ctx_release(c);
    return NULL;
}

CWC_CASE(metrics_rule_labels_order_and_escaping, "metrics", "MET-009 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, labels_root, NULL);
}

/* ---- MET-010: series order ------------------------------------------------ */

static void register_with(cw_ctx *ctx, const char *k1, const char *v1, const char *k2,
                          const char *v2)
{
    cw_ctx *c = cw_child(ctx, "o");
    if (k1)
        cw_with_attribute(c, k1, v1);
    if (k2)
        cw_with_attribute(c, k2, v2);
    cw_counter(c, "n", "h");
    cw_ctx_release(c);
}

static void *order_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    register_with(ctx, "b", "0", NULL, NULL);
    register_with(ctx, "a", "2", NULL, NULL);
    register_with(ctx, "a", "10", NULL, NULL);
    register_with(ctx, NULL, NULL, NULL, NULL);
    register_with(ctx, "a", "1", "b", "1");
    cw_metric *f = cw_family(ctx, "fam", "h", CW_METRIC_GAUGE, label_a, 1);
    const char *v[][1] = {{"b"}, {"B"}, {"a"}, {""}};
    for (size_t i = 0; i < 4; i++)
        cw_family_get(f, v[i]);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "\no_n_total 0\no_n_total{a=\"1\",b=\"1\"} 0\no_n_total{a=\"10\"} 0\n"
                  "o_n_total{a=\"2\"} 0\no_n_total{b=\"0\"} 0\n");
    CWC_HAS(text, "\nfam{a=\"\"} 0\nfam{a=\"B\"} 0\nfam{a=\"a\"} 0\nfam{a=\"b\"} 0\n");
    char *again = cwc_encode(ctx);
    ck_assert_str_eq(text, again);
    free(again);
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_series_order, "metrics", "MET-010 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, order_root, NULL);
}

/* ---- MET-011: values, from many threads ------------------------------------ */

enum { THREADS = 4, ROUNDS_PER_THREAD = 20000 };

struct shared_metrics {
    cw_metric *counter, *gauge, *histogram;
};

static void *hammer(void *arg)
{
    struct shared_metrics *s = arg;
    for (int i = 0; i < ROUNDS_PER_THREAD; i++) {
        cw_counter_inc(s->counter);
        cw_gauge_add(s->gauge, i % 2 ? 3 : -1);
        cw_histogram_observe(s->histogram, 0.5);
    }
    return NULL;
}

static void *values_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const double bound[] = {1.0};
    struct shared_metrics s = {cw_counter(ctx, "c", "h"), cw_gauge(ctx, "g", "h"),
                               cw_histogram(ctx, "h", "h", bound, 1)};
    ck_assert(s.counter && s.gauge && s.histogram);
    cw_gauge_set(s.gauge, 7);
    ck_assert_int_eq(cw_gauge_get(s.gauge), 7);
    cw_gauge_inc(s.gauge);
    cw_gauge_dec(s.gauge);
    cw_gauge_dec(s.gauge);
    ck_assert_int_eq(cw_gauge_get(s.gauge), 6);
    pthread_t threads[THREADS];
    for (int i = 0; i < THREADS; i++)
        ck_assert_int_eq(pthread_create(&threads[i], NULL, hammer, &s), 0);
    for (int i = 0; i < THREADS; i++)
        pthread_join(threads[i], NULL);
    uint64_t n = (uint64_t)THREADS * ROUNDS_PER_THREAD;
    ck_assert_uint_eq(cw_counter_get(s.counter), n);
    ck_assert_int_eq(cw_gauge_get(s.gauge), 6 + (int64_t)n);
    ck_assert_uint_eq(cw_histogram_count(s.histogram), n);
    ck_assert(cw_histogram_sum(s.histogram) == 0.5 * (double)n);
    char *text = cwc_encode(ctx);
    char line[128];
    snprintf(line, sizeof line, "\nh_bucket{le=\"1.0\"} %llu\n", (unsigned long long)n);
    CWC_HAS(text, line);
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_values_from_threads, "metrics", "MET-011 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, values_root, NULL);
}

/* The count reads back every observation, whichever bucket took it: one
 * that counted only some buckets would miss those of the later ones and
 * of +Inf, which the case above never fills. */
static void *count_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const double bound[] = {1.0, 2.0};
    static const double seen[] = {5.0, 1.5, 0.5, 1.5, 3.0};
    cw_metric *h = cw_histogram(ctx, "spread", "h", bound, 2);
    ck_assert_ptr_nonnull(h);
    for (size_t i = 0; i < sizeof seen / sizeof seen[0]; i++)
        cw_histogram_observe(h, seen[i]);
    ck_assert_uint_eq(cw_histogram_count(h), 5);
    ck_assert(cw_histogram_sum(h) == 11.5);
    return NULL;
}

CWC_CASE(metrics_rule_histogram_count_every_bucket, "metrics", "MET-011 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, count_root, NULL);
}

/* ---- MET-012: family children ------------------------------------------------ */

static void *children_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const char *const two[] = {"method", "code"};
    static const double bound[] = {1.0};
    cw_metric *f = cw_family(ctx, "req", "h", CW_METRIC_GAUGE, two, 2);
    const char *get[] = {"GET", "200"}, *get_again[] = {"GET", "200"}, *put[] = {"PUT", "500"};
    cw_metric *a = cw_family_get(f, get);
    ck_assert_ptr_eq(cw_family_get(f, get_again), a);
    ck_assert_int_eq(cw_gauge_get(a), 0);
    cw_gauge_set(a, 4);
    cw_gauge_set(cw_family_get(f, put), 1);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "\nreq{method=\"GET\",code=\"200\"} 4\nreq{method=\"PUT\",code=\"500\"} 1\n");
    free(text);
    ck_assert_int_eq(cw_family_remove(f, get), CW_OK);
    ck_assert_int_eq(cw_family_remove(f, get), CW_ERR_INVALID);
    text = cwc_encode(ctx);
    CWC_LACKS(text, "GET");
    CWC_HAS(text, "req{method=\"PUT\",code=\"500\"} 1\n");
    free(text);
    cw_metric_type ht = {CW_METRIC_HISTOGRAM, bound, 1, two, 2};
    cw_metric *hf = cw_register(ctx, "lat", "h", &ht);
    cw_histogram_observe(cw_family_get(hf, put), 2.0);
    text = cwc_encode(ctx);
    CWC_HAS(text, "\nlat_sum{method=\"PUT\",code=\"500\"} 2.0\nlat_count{method=\"PUT\","
                  "code=\"500\"} 1\nlat_bucket{method=\"PUT\",code=\"500\",le=\"1.0\"} 0\n");
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_family_children, "metrics", "MET-012 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, children_root, NULL);
}

/* ---- MET-013: misuse changes nothing --------------------------------------- */

static void *misuse_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_metric *c = cw_counter(ctx, "c", "h");
    cw_metric *g = cw_gauge(ctx, "g", "h");
    cw_metric *f = cw_family(ctx, "f", "h", CW_METRIC_COUNTER, label_a, 1);
    const char *x[] = {"x"};
    cw_metric *child = cw_family_get(f, x);
    cw_gauge_set(c, 5);
    cw_histogram_observe(c, 1.0);
    cw_counter_add(g, 5);
    cw_counter_add(f, 5);
    ck_assert_int_eq(cw_gauge_get(c), 0);
    ck_assert_uint_eq(cw_counter_get(g), 0);
    ck_assert_uint_eq(cw_counter_get(f), 0);
    ck_assert_uint_eq(cw_histogram_count(c), 0);
    ck_assert_uint_eq(cw_counter_get(c), 0);
    ck_assert_int_eq(cw_gauge_get(g), 0);
    ck_assert_ptr_null(cw_family_get(c, x));
    ck_assert_ptr_null(cw_family_get(f, NULL));
    ck_assert_int_eq(cw_family_remove(c, x), CW_ERR_INVALID);
    ck_assert_int_eq(cw_family_remove(f, NULL), CW_ERR_INVALID);
    /* A histogram counts its observations, but is no counter. */
    cw_metric *h = cw_histogram(ctx, "hist", "h", NULL, 0);
    cw_histogram_observe(h, 1.0);
    ck_assert_uint_eq(cw_counter_get(h), 0);
    ck_assert_int_eq(cw_gauge_get(h), 0);
    ck_assert_ptr_null(cw_metric_clone(child));
    cw_metric_release(child); /* nothing: a child has no handles */
    cw_counter_inc(child);
    ck_assert_uint_eq(cw_counter_get(child), 1);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "\nc_total 0\n");
    CWC_HAS(text, "\ng 0\n");
    CWC_HAS(text, "\nf_total{a=\"x\"} 1\n");
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_misuse_changes_nothing, "metrics", "MET-013 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, misuse_root, NULL);
}

/* ---- MET-014: the runtime's task metrics ------------------------------------ */

static long series_value(const char *text, const char *series)
{
    const char *at = strstr(text, series);
    ck_assert_msg(at != NULL, "no series '%s' in:\n%s", series, text);
    return strtol(at + strlen(series), NULL, 10);
}

/* The value of a task series; -1 when it does not exist (yet). */
static long task_metric_or_none(cw_ctx *ctx, const char *family, const char *name, const char *kind,
                                const char *execution)
{
    char series[256];
    snprintf(series, sizeof series, "\n%s{name=\"%s\",kind=\"%s\",execution=\"%s\"} ", family, name,
             kind, execution);
    char *text = cwc_encode(ctx);
    long v = strstr(text, series) ? series_value(text, series) : -1;
    free(text);
    return v;
}

static long task_metric(cw_ctx *ctx, const char *family, const char *name, const char *kind,
                        const char *execution)
{
    long v = task_metric_or_none(ctx, family, name, kind, execution);
    ck_assert_msg(v >= 0, "no %s series for name=\"%s\"", family, name);
    return v;
}

#define RUNNING(ctx, name, exec) task_metric(ctx, "runtime_tasks_running", name, "Task", exec)
#define SPAWNED(ctx, name, exec) task_metric(ctx, "runtime_tasks_spawned_total", name, "Task", exec)

static void *spawn_pending(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *kid = cw_spawn(cw_child(ctx, "kid"), cwc_pending_task, NULL);
    cw_handle_release(kid);
    return cwc_pending_task(ctx, NULL);
}

static void *tasks_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_int_eq(task_metric(ctx, "runtime_tasks_running", "", "Root", "Shared"), 1);
    ck_assert_int_eq(task_metric(ctx, "runtime_tasks_spawned_total", "", "Root", "Shared"), 1);

    cw_handle *shared = cw_spawn(cw_child(ctx, "victim"), cwc_pending_task, NULL);
    cw_handle *blocking = cw_spawn(cw_shared(cw_child(ctx, "victim"), true), cwc_return_42, NULL);
    cw_handle *dedicated = cw_spawn(cw_dedicated(cw_child(ctx, "victim")), cwc_return_42, NULL);
    ck_assert_int_eq(RUNNING(ctx, "victim", "Shared"), 1);
    cw_abort(shared); /* down at the abort, not at the join */
    ck_assert_int_eq(RUNNING(ctx, "victim", "Shared"), 0);
    ck_assert_int_eq(cw_join(shared, NULL), CW_ERR_CLOSED);
    ck_assert_int_eq(cw_join(blocking, NULL), CW_OK);
    ck_assert_int_eq(cw_join(dedicated, NULL), CW_OK);
    ck_assert_int_eq(RUNNING(ctx, "victim", "Shared"), 0); /* exactly once */
    ck_assert_int_eq(RUNNING(ctx, "victim", "SharedBlocking"), 0);
    ck_assert_int_eq(RUNNING(ctx, "victim", "Dedicated"), 0);
    ck_assert_int_eq(SPAWNED(ctx, "victim", "SharedBlocking"), 1);
    ck_assert_int_eq(SPAWNED(ctx, "victim", "Dedicated"), 1);

    /* A cascade: the parent's abort reaches its pending child. */
    cw_handle *parent = cw_spawn(cw_child(ctx, "parent"), spawn_pending, NULL);
    while (task_metric_or_none(ctx, "runtime_tasks_running", "parent_kid", "Task", "Shared") < 1)
        cw_sleep(ctx, CW_MSEC);
    cw_abort(parent);
    ck_assert_int_eq(cw_join(parent, NULL), CW_ERR_CLOSED);
    ck_assert_int_eq(RUNNING(ctx, "parent_kid", "Shared"), 0);

    /* A refused spawn counts as spawned, never as running. */
    cw_ctx *sup = cw_child(ctx, "sup");
    cw_ctx *late = cw_child(sup, "late");
    ck_assert_int_eq(cw_join(cw_spawn(sup, cwc_return_42, NULL), NULL), CW_OK);
    cw_handle *refused = cw_spawn(late, cwc_return_42, NULL);
    ck_assert_int_eq(cw_join(refused, NULL), CW_ERR_CLOSED);
    ck_assert_int_eq(SPAWNED(ctx, "sup_late", "Shared"), 1);
    ck_assert_int_eq(RUNNING(ctx, "sup_late", "Shared"), 0);
    cw_handle *handles[] = {refused, parent, dedicated, blocking, shared};
    for (size_t i = 0; i < sizeof handles / sizeof *handles; i++)
        cw_handle_release(handles[i]);
    return NULL;
}

CWC_CASE(metrics_rule_task_metrics, "metrics", "MET-014 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, tasks_root, NULL);
}

/* ---- MET-015: the deterministic scheduler's counters ---------------------------- */

static void *yield_twice(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_yield(ctx);
    cw_yield(ctx);
    return NULL;
}

static void *scheduler_root(cw_ctx *ctx, void *arg)
{
    long *iterations = arg;
    cw_handle *h = cw_spawn(cw_child(ctx, "spinner"), yield_twice, NULL);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
    char *text = cwc_encode(ctx);
    ck_assert_int_eq(series_value(text, "\nruntime_task_polls_total{name=\"spinner\",kind=\"Task\","
                                        "execution=\"Shared\"} "),
                     3);
    ck_assert_int_eq(series_value(text, "\nruntime_task_polls_total{name=\"\",kind=\"Root\","
                                        "execution=\"Shared\"} "),
                     2);
    *iterations = series_value(text, "\nruntime_iterations_total ");
    free(text);
    return NULL;
}

static void *refused_polls_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    /* A refused spawn has its running series (MET-014), never a polls one. */
    cw_ctx *sup = cw_child(ctx, "sup");
    cw_ctx *late = cw_child(sup, "late");
    ck_assert_int_eq(cw_join(cw_spawn(sup, cwc_return_42, NULL), NULL), CW_OK);
    cw_handle *refused = cw_spawn(late, cwc_return_42, NULL);
    ck_assert_int_eq(cw_join(refused, NULL), CW_ERR_CLOSED);
    cw_handle_release(refused);
    char *text = cwc_encode(ctx);
    CWC_HAS(text,
            "\nruntime_tasks_running{name=\"sup_late\",kind=\"Task\",execution=\"Shared\"} 0\n");
    CWC_LACKS(text, "runtime_task_polls_total{name=\"sup_late\"");
    free(text);
    return NULL;
}

CWC_CASE(metrics_rule_scheduler_counters, "metrics", "MET-015 MET-014 RUN-008", DET | CWC_REPEATED)
{
    cwc_run_ok(NULL, refused_polls_root, NULL);
    long iterations = -1;
    cw_config cfg = cwc_config();
    cw_run_result res;
    ck_assert_int_eq(cwc_run(&cfg, scheduler_root, &iterations, &res), CW_OK);
    ck_assert_int_eq(iterations, (long)res.iterations); /* the root ends in that iteration */
}

/* ---- MET-016: buffer pools ---------------------------------------------------- */

static void *pools_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_bufpool *net = cw_network_buffer_pool(ctx);
    cw_iobuf_mut a, b, c;
    int why = 0;
    ck_assert_int_eq(cw_bufpool_try_alloc(net, 1000, &a, &why), CW_OK);
    ck_assert_int_eq(cw_bufpool_try_alloc(net, 1000, &b, &why), CW_ERR_POOL);
    ck_assert_int_eq(cw_bufpool_try_alloc(net, 1 << 30, &b, &why), CW_ERR_POOL);
    ck_assert_int_eq(cw_bufpool_try_alloc(net, 3000, &c, &why), CW_OK);
    char *text = cwc_encode(ctx);
    const char *p = "\nruntime_network_buffer_pool_buffer_pool_";
    char line[256];
    snprintf(line, sizeof line, "%screated{size_class=\"1024\"} 1\n", p);
    CWC_HAS(text, line);
    snprintf(line, sizeof line, "%sexhausted_total{size_class=\"1024\"} 1\n", p);
    CWC_HAS(text, line);
    /* A class that created a buffer and refused none has its series too. */
    snprintf(line, sizeof line, "%screated{size_class=\"4096\"} 1\n", p);
    CWC_HAS(text, line);
    snprintf(line, sizeof line, "%sexhausted_total{size_class=\"4096\"} 0\n", p);
    CWC_HAS(text, line);
    snprintf(line, sizeof line, "%soversized_total 1\n", p);
    CWC_HAS(text, line);
    CWC_HAS(text, "\nruntime_storage_buffer_pool_buffer_pool_oversized_total 0\n");
    CWC_LACKS(text, "size_class=\"2048\"");
    CWC_LACKS(text, "runtime_storage_buffer_pool_buffer_pool_created");
    /* The help texts MET-016 spells. */
    snprintf(line, sizeof line,
             "\n# HELP %screated Number of tracked buffers created for the pool.\n", p + 1);
    CWC_HAS(text, line);
    snprintf(line, sizeof line,
             "\n# HELP %sexhausted Total number of failed allocations due to pool exhaustion.\n",
             p + 1);
    CWC_HAS(text, line);
    snprintf(line, sizeof line,
             "\n# HELP %soversized Total number of oversized allocation requests.\n", p + 1);
    CWC_HAS(text, line);
    free(text);
    cw_iobuf_mut_release(&a);
    cw_iobuf_mut_release(&c);
    return NULL;
}

CWC_CASE(metrics_rule_buffer_pools, "metrics", "MET-016 RUN-008", CWC_REPEATED)
{
    cw_config cfg = cwc_config();
    cfg.network_buffer_pool.max_per_class = 1;
    cfg.network_buffer_pool.thread_cache = 0;
    cwc_run_ok(&cfg, pools_root, NULL);
}

/* ---- MET-018: register and encode as audit events --------------------------- */

static void unhex(const char *hex, uint8_t out[32])
{
    for (int i = 0; i < 32; i++) {
        unsigned v;
        ck_assert_int_eq(sscanf(hex + 2 * i, "%2x", &v), 1);
        out[i] = (uint8_t)v;
    }
}

static void put_field(EVP_MD_CTX *md, const void *data, size_t len)
{
    uint8_t be[8];
    for (int i = 7, j = 0; i >= 0; i--, j++)
        be[j] = (uint8_t)((uint64_t)len >> (8 * i));
    EVP_DigestUpdate(md, be, sizeof be);
    EVP_DigestUpdate(md, data, len);
}

/* The digest after an event `label` with fields[0 .. n) (11-deterministic.md). */
static void chain(const char before[65], const char *label, const char *const *fields, size_t n,
                  char after[65])
{
    uint8_t digest[32];
    unhex(before, digest);
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    EVP_DigestInit_ex(md, EVP_sha256(), NULL);
    put_field(md, digest, sizeof digest);
    put_field(md, label, strlen(label));
    for (size_t i = 0; i < n; i++)
        put_field(md, fields[i], strlen(fields[i]));
    unsigned len = 0;
    EVP_DigestFinal_ex(md, digest, &len);
    EVP_MD_CTX_free(md);
    for (int i = 0; i < 32; i++)
        snprintf(after + 2 * i, 3, "%02x", digest[i]);
}

static void *audit_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char d0[65], d1[65], d2[65], want[65];
    cw_ctx *c = cw_child(ctx, "engine");
    cw_with_attribute(cw_with_attribute(c, "zone", "b"), "epoch", "7");
    ck_assert_int_eq(cw_audit_digest(ctx, d0), CW_OK);
    cw_metric *m = cw_counter(c, "votes", "vote count");
    ck_assert_int_eq(cw_audit_digest(ctx, d1), CW_OK);
    const char *fields[] = {"votes", "vote count", "epoch", "7", "zone", "b"};
    chain(d0, "register", fields, 6, want);
    ck_assert_str_eq(d1, want);
    free(cw_metrics_encode(ctx));
    ck_assert_int_eq(cw_audit_digest(ctx, d2), CW_OK);
    chain(d1, "encode", NULL, 0, want);
    ck_assert_str_eq(d2, want);
    cw_metric_release(m);
    cw_ctx_release(c);
    return NULL;
}

CWC_CASE(metrics_rule_audit_events, "metrics", "MET-018 RUN-008", CW_CAP_AUDIT | CWC_REPEATED)
{
    cwc_run_ok(NULL, audit_root, NULL);
}
