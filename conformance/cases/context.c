/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * context.c - labels, attributes and their rules (spec/03-context.md).
 */
#include <stdio.h>
#include <string.h>

#include "cases/util.h"

static void *labels_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_str_eq(cw_label(ctx), "");
    cw_ctx *a = cw_child(ctx, "a");
    cw_ctx *ab = cw_child(a, "b_2");
    ck_assert_str_eq(cw_label(a), "a");
    ck_assert_str_eq(cw_label(ab), "a_b_2");
    cw_ctx *ok = cw_child(ctx, "a_runtime"); /* reserved only as a prefix */
    ck_assert_str_eq(cw_label(ok), "a_runtime");
    cw_ctx_release(ok);
    /* The joined path has an underscore: "run_time" and "r_untime" are not
     * "runtime...", nor is "runtim" then anything. */
    static const char *const near[][2] = {{"run", "time"}, {"r", "untime"}, {"runtim", "e"}};
    for (size_t i = 0; i < 3; i++) {
        cw_ctx *p = cw_child(ctx, near[i][0]);
        cw_ctx *c = cw_child(p, near[i][1]);
        ck_assert_ptr_nonnull(c);
        cw_ctx_release(c);
        cw_ctx_release(p);
    }
    cw_ctx_release(ab);
    cw_ctx_release(a);
    return NULL;
}

/* Joined labels of every length from 3 to 81 bytes, each read back whole:
 * a join that counts one byte short writes its end past what it has. */
static void *label_lengths_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    char a[48], b[48], want[100];
    for (size_t la = 1; la < 41; la++)
        for (size_t lb = 1; lb < 41; lb += 3) {
            memset(a, 'p', la);
            a[la] = '\0';
            memset(b, 'q', lb);
            b[lb] = '\0';
            snprintf(want, sizeof want, "%s_%s", a, b);
            cw_ctx *pa = cw_child(ctx, a);
            cw_ctx *pb = cw_child(pa, b);
            ck_assert_str_eq(cw_label(pb), want);
            cw_ctx_release(pb);
            cw_ctx_release(pa);
        }
    return NULL;
}

CWC_CASE(context_label_lengths, "context", "CTX-001 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, label_lengths_root, NULL);
}

CWC_CASE(context_labels, "context", "CTX-001 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, labels_root, NULL);
}

static void *bad_label_root(cw_ctx *ctx, void *arg)
{
    cw_child(ctx, arg);
    ck_assert_msg(0, "an invalid label was accepted");
    return NULL;
}

static void expect_label_panic(const char *label, const char *needle)
{
    cw_run_result res;
    ck_assert_int_eq(cwc_run(NULL, bad_label_root, (void *)label, &res), CW_ERR_PANICKED);
    ck_assert_msg(strstr(res.message, needle), "'%s': message '%s' lacks '%s'", label, res.message,
                  needle);
}

CWC_CASE(context_invalid_labels, "context", "CTX-002 CTX-003 RUN-008", CWC_REPEATED)
{
    expect_label_panic("", "label must start with [a-zA-Z]");
    expect_label_panic("1invalid", "label must start with [a-zA-Z]");
    expect_label_panic("invalid-label", "label must only contain [a-zA-Z0-9_]");
    expect_label_panic("runtime", "using runtime label is not allowed");
    expect_label_panic("runtime_x", "using runtime label is not allowed");
}

static void *attributes_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *c = cw_child(ctx, "worker");
    cw_with_attribute(cw_with_attribute(c, "epoch", "old"), "epoch", "new");
    cw_with_attribute(c, "b", "2");
    cw_ctx *child = cw_child(c, "sub");
    ck_assert_str_eq(cw_label(child), "worker_sub");
    cw_ctx_release(child);
    cw_ctx_release(c);
    return NULL;
}

CWC_CASE(context_attributes, "context", "CTX-004 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, attributes_root, NULL);
}

static void *bad_attribute_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_with_attribute(ctx, "bad key", "v");
    return NULL;
}

CWC_CASE(context_invalid_attribute_key, "context", "CTX-004 RUN-008", CWC_REPEATED)
{
    cw_run_result res;
    ck_assert_int_eq(cwc_run(NULL, bad_attribute_root, NULL, &res), CW_ERR_PANICKED);
    ck_assert_ptr_nonnull(strstr(res.message, "label must only contain"));
}
