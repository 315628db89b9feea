/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * The supervision tree dump (reference/core/tree_dump.c): the text form of
 * a known tree, line for line, and the DOT form rendered by Graphviz when
 * `dot` is installed (ci/deps.sh installs it).
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "cwrt/cwrt.h"

static void *waits(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_sleep(ctx, CW_FOREVER);
    return NULL;
}

static void *parent(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "leaf"), waits, NULL));
    cw_handle_release(cw_spawn(cw_child(ctx, "leaf"), waits, NULL));
    cw_sleep(ctx, CW_FOREVER);
    return NULL;
}

/* The dump of `format` once the tree below is built, in a malloc'd string. */
static void *dump_root(cw_ctx *ctx, void *arg)
{
    int format = *(int *)arg;
    cw_handle_release(cw_spawn(cw_child(ctx, "api"), parent, NULL));
    cw_handle *db = cw_spawn(cw_child(ctx, "db"), waits, NULL);
    cw_yield(ctx);
    cw_yield(ctx);
    cw_yield(ctx); /* every task has started */
    cw_abort(db);
    char *text = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&text, &len);
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(cw_tree_dump(ctx, f, format), CW_OK);
    fclose(f);
    cw_handle_release(db);
    return text;
}

static char *dump(int format)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cw_run_result res;
    ck_assert_int_eq(cw_start(cw_backend_deterministic(), &cfg, dump_root, &format, &res), CW_OK);
    return res.value;
}

START_TEST(text_shows_who_supervises_whom)
{
    char *text = dump(CW_TREE_TEXT);
    ck_assert_str_eq(text, "root#0 (running)\n"
                           "  api#1 (running)\n"
                           "    api_leaf#3 (running)\n"
                           "    api_leaf#4 (running)\n"
                           "  db#2 (aborting)\n");
    free(text);
}
END_TEST

START_TEST(dot_renders_with_graphviz)
{
    char *dot = dump(CW_TREE_DOT);
    ck_assert_ptr_nonnull(strstr(dot, "digraph tasks {"));
    ck_assert_ptr_nonnull(strstr(dot, "t0 -> t1;"));
    ck_assert_ptr_nonnull(strstr(dot, "t1 -> t3;"));
    if (system("command -v dot > /dev/null 2>&1") == 0) {
        FILE *p = popen("dot -Tsvg -o /dev/null", "w");
        ck_assert_ptr_nonnull(p);
        fputs(dot, p);
        ck_assert_int_eq(pclose(p), 0);
    }
    free(dot);
}
END_TEST

static void *bad_format_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_int_eq(cw_tree_dump(ctx, stdout, 7), CW_ERR_INVALID);
    return NULL;
}

START_TEST(bad_format_refused)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cw_run_result res;
    ck_assert_int_eq(cw_start(cw_backend_deterministic(), &cfg, bad_format_root, NULL, &res),
                     CW_OK);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("tree");
    TCase *tc = tcase_create("dump");
    tcase_add_test(tc, text_shows_who_supervises_whom);
    tcase_add_test(tc, dot_renders_with_graphviz);
    tcase_add_test(tc, bad_format_refused);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
