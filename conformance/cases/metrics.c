/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * metrics.c - the original interface's metrics tests, under their names
 * (spec/16-metrics.md). The rules one by one are in metrics_rules.c.
 */
#include "cases/metrics.h"

static void *metrics_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    ck_assert_str_eq(cw_label(ctx), "");
    cw_metric *counter = cw_counter(ctx, "test", "test");
    cw_counter_inc(counter);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "test_total 1");
    free(text);

    cw_ctx *nested = cw_child(ctx, "nested");
    cw_metric *nested_counter = cw_counter(nested, "test", "test");
    cw_counter_inc(nested_counter);
    text = cwc_encode(nested);
    CWC_HAS(text, "\nnested_test_total 1\n");
    CWC_HAS(text, "\ntest_total 1\n");
    free(text);
    cw_ctx_release(nested);
    cw_metric_release(nested_counter);
    cw_metric_release(counter);
    return NULL;
}

CWC_CASE(metrics, "metrics", "MET-001 MET-006 MET-008 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, metrics_root, NULL);
}

static void *with_attribute_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *e5 = cw_with_attribute(cw_child(ctx, "consensus"), "epoch", "e5");
    cw_metric *c5 = cw_counter(e5, "votes", "vote count");
    cw_counter_inc(c5);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "consensus_votes_total{epoch=\"e5\"} 1");
    free(text);

    cw_ctx *e6 = cw_with_attribute(cw_child(ctx, "consensus"), "epoch", "e6");
    cw_metric *c6 = cw_counter(e6, "votes", "vote count");
    cw_counter_inc(c6);
    cw_counter_inc(c6);
    text = cwc_encode(ctx);
    CWC_HAS(text, "consensus_votes_total{epoch=\"e5\"} 1");
    CWC_HAS(text, "consensus_votes_total{epoch=\"e6\"} 2");
    ck_assert_uint_eq(cwc_count(text, "# HELP consensus_votes"), 1);
    ck_assert_uint_eq(cwc_count(text, "# TYPE consensus_votes"), 1);
    free(text);

    cw_ctx *multi = cw_child(ctx, "engine");
    cw_with_attribute(cw_with_attribute(multi, "region", "us"), "instance", "i1");
    cw_metric *c3 = cw_counter(multi, "requests", "request count");
    cw_counter_inc(c3);
    text = cwc_encode(ctx);
    CWC_HAS(text, "engine_requests_total{instance=\"i1\",region=\"us\"} 1");
    free(text);
    cw_ctx_release(multi);
    cw_ctx_release(e6);
    cw_ctx_release(e5);
    return NULL;
}

CWC_CASE(metrics_with_attribute, "metrics", "MET-001 MET-007 MET-009 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, with_attribute_root, NULL);
}

static void *attribute_nested_label_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *orch = cw_with_attribute(cw_child(ctx, "orchestrator"), "epoch", "e5");
    cw_ctx *engine = cw_child(orch, "engine");
    cw_metric *c = cw_counter(engine, "votes", "vote count");
    cw_counter_inc(c);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "orchestrator_engine_votes_total{epoch=\"e5\"} 1");
    free(text);

    cw_ctx *outer = cw_with_attribute(cw_child(ctx, "outer"), "region", "us");
    cw_ctx *middle = cw_with_attribute(cw_child(outer, "middle"), "az", "east");
    cw_ctx *inner = cw_child(middle, "inner");
    cw_metric *c2 = cw_counter(inner, "requests", "request count");
    cw_counter_add(c2, 2);
    text = cwc_encode(ctx);
    CWC_HAS(text, "outer_middle_inner_requests_total{az=\"east\",region=\"us\"} 2");
    free(text);
    cw_ctx_release(inner);
    cw_ctx_release(middle);
    cw_ctx_release(outer);
    cw_ctx_release(engine);
    cw_ctx_release(orch);
    return NULL;
}

CWC_CASE(metrics_attribute_with_nested_label, "metrics", "MET-001 MET-009 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, attribute_nested_label_root, NULL);
}

static void *isolated_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *a = cw_with_attribute(cw_child(ctx, "component_a"), "epoch", "1");
    cw_ctx *b = cw_with_attribute(cw_child(ctx, "component_b"), "epoch", "2");
    cw_counter(a, "requests", "help");
    cw_counter(b, "requests", "help");
    cw_counter(a, "errors", "help"); /* after b was used */
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "component_a_requests_total{epoch=\"1\"} 0");
    CWC_HAS(text, "component_a_errors_total{epoch=\"1\"} 0");
    CWC_LACKS(text, "component_a_requests_total{epoch=\"2\"}");
    CWC_HAS(text, "component_b_requests_total{epoch=\"2\"} 0");
    CWC_LACKS(text, "component_b_requests_total{epoch=\"1\"}");
    free(text);
    cw_ctx_release(b);
    cw_ctx_release(a);
    return NULL; /* the handles are freed with the run */
}

CWC_CASE(metrics_attributes_isolated_between_contexts, "metrics", "MET-001 MET-009 RUN-008",
         CWC_REPEATED)
{
    cwc_run_ok(NULL, isolated_root, NULL);
}

enum { ROUNDS = 128 };

static void *return_round(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

static size_t count_lines(const char *text, const char *start, const char *containing)
{
    size_t n = 0;
    for (const char *line = text; *line; line = strchr(line, '\n') + 1) {
        const char *end = strchr(line, '\n');
        size_t len = (size_t)(end - line);
        const char *hit = strstr(line, containing);
        if (strncmp(line, start, strlen(start)) == 0 && hit && hit < line + len)
            n++;
    }
    return n;
}

static void *cardinality_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_handle *handles[ROUNDS];
    for (intptr_t round = 0; round < ROUNDS; round++) {
        char value[8];
        snprintf(value, sizeof value, "%d", (int)round);
        cw_ctx *c = cw_with_attribute(cw_child(ctx, "deferred_verify"), "round", value);
        handles[round] = cw_spawn(c, return_round, (void *)round);
    }
    for (intptr_t round = 0; round < ROUNDS; round++) {
        void *out = NULL;
        ck_assert_int_eq(cw_join(handles[round], &out), CW_OK);
        ck_assert_int_eq((intptr_t)out, round);
        cw_handle_release(handles[round]);
    }
    while (cwc_count_running(ctx, "deferred_verify") > 0)
        cw_sleep(ctx, 10 * CW_MSEC);
    char *text = cwc_encode(ctx);
    ck_assert_uint_eq(count_lines(text, "runtime_tasks_spawned_total{", "name=\"deferred_verify\""),
                      1);
    ck_assert_uint_eq(count_lines(text, "runtime_tasks_running{", "name=\"deferred_verify\""), 1);
    CWC_HAS(text, "runtime_tasks_spawned_total{name=\"deferred_verify\",kind=\"Task\","
                  "execution=\"Shared\"} 128");
    CWC_HAS(text,
            "runtime_tasks_running{name=\"deferred_verify\",kind=\"Task\",execution=\"Shared\"} 0");
    ck_assert_uint_eq(count_lines(text, "runtime_tasks_", "round="), 0);
    free(text);
    return NULL;
}

CWC_CASE(metrics_spawn_attribute_cardinality, "metrics", "MET-014 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, cardinality_root, NULL);
}

static void *sorted_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *ab = cw_child(ctx, "service");
    cw_with_attribute(cw_with_attribute(ab, "region", "us"), "env", "prod");
    cw_ctx *ba = cw_child(ctx, "service");
    cw_with_attribute(cw_with_attribute(ba, "env", "prod"), "region", "us");
    cw_metric *c1 = cw_counter(ab, "requests", "help");
    cw_counter_inc(c1);
    cw_metric *c2 = cw_counter(ba, "errors", "help");
    cw_counter_add(c2, 2);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "service_requests_total{env=\"prod\",region=\"us\"} 1");
    CWC_HAS(text, "service_errors_total{env=\"prod\",region=\"us\"} 2");
    CWC_LACKS(text, "region=\"us\",env=\"prod\"");
    free(text);
    cw_ctx_release(ba);
    cw_ctx_release(ab);
    return NULL;
}

CWC_CASE(metrics_attributes_sorted_deterministically, "metrics", "MET-009 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, sorted_root, NULL);
}

static void *nested_attributes_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *svc_a = cw_child(ctx, "service_a");
    cw_ctx *svc_a_v2 = cw_with_attribute(cw_child(ctx, "service_a"), "version", "2");
    cw_ctx *svc_b = cw_child(ctx, "service_b");
    cw_ctx *worker = cw_child(svc_b, "worker");
    cw_ctx *worker_shard = cw_with_attribute(cw_child(svc_b, "worker"), "shard", "99");
    cw_ctx *manager = cw_child(svc_b, "manager");
    cw_ctx *svc_c = cw_child(ctx, "service_c");
    cw_counter(svc_a, "requests", "help");
    cw_counter(svc_a_v2, "requests", "help");
    cw_counter(worker, "tasks", "help");
    cw_counter(worker_shard, "tasks", "help");
    cw_counter(manager, "decisions", "help");
    cw_counter(svc_c, "requests", "help");
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "service_a_requests_total 0");
    CWC_HAS(text, "service_a_requests_total{version=\"2\"} 0");
    CWC_HAS(text, "service_b_worker_tasks_total 0");
    CWC_HAS(text, "service_b_worker_tasks_total{shard=\"99\"} 0");
    CWC_HAS(text, "service_b_manager_decisions_total 0");
    CWC_LACKS(text, "service_b_manager_decisions_total{");
    CWC_HAS(text, "service_c_requests_total 0");
    CWC_LACKS(text, "service_c_requests_total{");
    CWC_LACKS(text, "service_b_manager_decisions_total{shard=");
    CWC_LACKS(text, "service_a_requests_total{shard=");
    CWC_LACKS(text, "service_c_requests_total{version=");
    free(text);
    cw_ctx *all[] = {svc_c, manager, worker_shard, worker, svc_b, svc_a_v2, svc_a};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        cw_ctx_release(all[i]);
    return NULL;
}

CWC_CASE(metrics_nested_labels_with_attributes, "metrics", "MET-001 MET-009 MET-010 RUN-008",
         CWC_REPEATED)
{
    cwc_run_ok(NULL, nested_attributes_root, NULL);
}

static const char *const request_labels[] = {"method", "status"};

static void inc_request(cw_metric *family, const char *method, const char *status)
{
    const char *values[] = {method, status};
    cw_counter_inc(cw_family_get(family, values));
}

static void *metrics_family_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *api = cw_child(ctx, "api");
    cw_with_attribute(cw_with_attribute(api, "region", "us_east"), "env", "prod");
    cw_metric *requests =
        cw_family(api, "requests", "HTTP requests", CW_METRIC_COUNTER, request_labels, 2);
    inc_request(requests, "GET", "200");
    inc_request(requests, "POST", "201");
    inc_request(requests, "GET", "404");
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "api_requests_total{env=\"prod\",region=\"us_east\",method=\"GET\","
                  "status=\"200\"} 1");
    CWC_HAS(text, "api_requests_total{env=\"prod\",region=\"us_east\",method=\"POST\","
                  "status=\"201\"} 1");
    CWC_HAS(text, "api_requests_total{env=\"prod\",region=\"us_east\",method=\"GET\","
                  "status=\"404\"} 1");
    free(text);

    cw_ctx *plain = cw_child(ctx, "api_plain");
    cw_metric *plain_requests =
        cw_family(plain, "requests", "HTTP requests", CW_METRIC_COUNTER, request_labels, 2);
    inc_request(plain_requests, "DELETE", "204");
    text = cwc_encode(ctx);
    CWC_HAS(text, "api_plain_requests_total{method=\"DELETE\",status=\"204\"} 1");
    CWC_LACKS(text, "api_plain_requests_total{env=");
    CWC_LACKS(text, "api_plain_requests_total{region=");
    free(text);
    cw_ctx_release(plain);
    cw_ctx_release(api);
    return NULL;
}

CWC_CASE(metrics_family_with_attributes, "metrics", "MET-009 MET-012 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, metrics_family_root, NULL);
}

static void *register_and_encode_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_metric *c = cwc_counter_in(cw_child(ctx, "engine"), "votes", "vote count");
    cw_counter_inc(c);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "engine_votes_total 1");
    free(text);
    cw_metric_release(c);
    return NULL;
}

CWC_CASE(register_and_encode, "metrics", "MET-001 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, register_and_encode_root, NULL);
}

static void *drop_removes_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_metric *permanent =
        cwc_counter_in(cw_child(ctx, "permanent"), "counter", "permanent counter");
    cw_counter_inc(permanent);
    cw_metric *c = cwc_counter_in(cw_child(ctx, "engine"), "votes", "vote count");
    cw_counter_inc(c);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "permanent_counter_total 1");
    CWC_HAS(text, "engine_votes_total 1");
    free(text);
    cw_metric_release(c);
    text = cwc_encode(ctx);
    CWC_HAS(text, "permanent_counter_total 1");
    CWC_LACKS(text, "engine_votes");
    free(text);
    cw_metric_release(permanent);
    return NULL;
}

CWC_CASE(register_drop_removes_metrics, "metrics", "MET-002 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, drop_removes_root, NULL);
}

static cw_metric *epoch_votes(cw_ctx *ctx, const char *epoch)
{
    return cwc_counter_in(cw_with_attribute(cw_child(ctx, "engine"), "epoch", epoch), "votes",
                          "vote count");
}

static void *register_with_attributes_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_metric *epoch1 = epoch_votes(ctx, "1");
    cw_counter_inc(epoch1);
    cw_metric *epoch2 = epoch_votes(ctx, "2");
    cw_counter_add(epoch2, 2);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "engine_votes_total{epoch=\"1\"} 1");
    CWC_HAS(text, "engine_votes_total{epoch=\"2\"} 2");
    ck_assert_uint_eq(cwc_count(text, "# HELP engine_votes"), 1);
    ck_assert_uint_eq(cwc_count(text, "# TYPE engine_votes"), 1);
    free(text);
    cw_metric_release(epoch1);
    text = cwc_encode(ctx);
    CWC_LACKS(text, "epoch=\"1\"");
    CWC_HAS(text, "engine_votes_total{epoch=\"2\"} 2");
    free(text);
    cw_metric_release(epoch2);
    text = cwc_encode(ctx);
    CWC_LACKS(text, "engine_votes");
    free(text);
    return NULL;
}

CWC_CASE(register_with_attributes, "metrics", "MET-002 MET-007 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, register_with_attributes_root, NULL);
}

static void *reregister_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_metric *votes = epoch_votes(ctx, "1");
    cw_counter_add(votes, 5);
    cw_metric_release(votes);
    cw_metric *replacement = epoch_votes(ctx, "1");
    ck_assert_uint_eq(cw_counter_get(replacement), 0); /* a fresh metric */
    cw_metric_release(replacement);
    return NULL;
}

CWC_CASE(reregister_after_drop, "metrics", "MET-002 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, reregister_root, NULL);
}

static void *clone_alive_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_metric *registered = cwc_counter_in(cw_child(ctx, "engine"), "votes", "vote count");
    cw_counter_inc(registered);
    cw_metric *clone = cw_metric_clone(registered);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "engine_votes_total 1");
    free(text);
    cw_metric_release(registered);
    text = cwc_encode(ctx);
    CWC_HAS(text, "engine_votes_total 1");
    free(text);
    cw_metric_release(clone);
    text = cwc_encode(ctx);
    CWC_LACKS(text, "engine_votes");
    free(text);
    return NULL;
}

CWC_CASE(register_clone_keeps_metric_alive, "metrics", "MET-002 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, clone_alive_root, NULL);
}

static void *single_eof_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_metric *root_counter = cw_counter(ctx, "root", "root metric");
    cw_counter_inc(root_counter);
    cw_metric *child = cwc_counter_in(cw_child(ctx, "engine"), "ops", "child metric");
    cw_counter_inc(child);
    char *text = cwc_encode(ctx); /* checks one # EOF, last */
    CWC_HAS(text, "\nroot_total 1\n");
    CWC_HAS(text, "engine_ops_total 1");
    free(text);
    cw_metric_release(child);
    cw_metric_release(root_counter);
    return NULL;
}

CWC_CASE(encode_single_eof, "metrics", "MET-006 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, single_eof_root, NULL);
}

static void *family_with_attributes_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static const char *const peer[] = {"peer"};
    cw_ctx *batcher = cw_with_attribute(cw_child(ctx, "batcher"), "epoch", "1");
    cw_metric *family = cw_family(batcher, "votes", "votes per peer", CW_METRIC_COUNTER, peer, 1);
    cw_ctx_release(batcher);
    const char *alice[] = {"alice"}, *bob[] = {"bob"};
    cw_counter_inc(cw_family_get(family, alice));
    cw_counter_inc(cw_family_get(family, bob));
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "batcher_votes_total{epoch=\"1\",peer=\"alice\"} 1");
    CWC_HAS(text, "batcher_votes_total{epoch=\"1\",peer=\"bob\"} 1");
    free(text);
    cw_metric_release(family);
    text = cwc_encode(ctx);
    CWC_LACKS(text, "batcher_votes");
    free(text);
    return NULL;
}

CWC_CASE(family_with_attributes, "metrics", "MET-009 MET-012 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, family_with_attributes_root, NULL);
}

/* A child context starts at CW_EXEC_SHARED whatever its parent was set to
 * (CTX-001): tasks spawned from a child of a dedicated context, or of a
 * blocking one, are counted as Shared, and those spawned from the parents
 * themselves as what they asked for (MET-014). */
/* Spawn from `ctx` (consumed) and join: the task returns at once. */
static void spawn_and_join(cw_ctx *ctx)
{
    cw_handle *h = cw_spawn(ctx, cwc_return_42, NULL);
    ck_assert_int_eq(cw_join(h, NULL), CW_OK);
    cw_handle_release(h);
}

static void *execution_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_ctx *dedicated = cw_dedicated(cw_child(ctx, "dedicated"));
    cw_ctx *blocking = cw_shared(cw_child(ctx, "blocking"), true);
    /* The children first: a task spawned from a parent supervises them. */
    spawn_and_join(cw_child(dedicated, "inner"));
    spawn_and_join(cw_child(blocking, "inner"));
    spawn_and_join(dedicated);
    spawn_and_join(blocking);
    char *text = cwc_encode(ctx);
    CWC_HAS(text, "runtime_tasks_spawned_total{name=\"dedicated_inner\",kind=\"Task\","
                  "execution=\"Shared\"} 1");
    CWC_HAS(text, "runtime_tasks_spawned_total{name=\"blocking_inner\",kind=\"Task\","
                  "execution=\"Shared\"} 1");
    CWC_HAS(text, "runtime_tasks_spawned_total{name=\"dedicated\",kind=\"Task\","
                  "execution=\"Dedicated\"} 1");
    CWC_HAS(text, "runtime_tasks_spawned_total{name=\"blocking\",kind=\"Task\","
                  "execution=\"SharedBlocking\"} 1");
    free(text);
    return NULL;
}

CWC_CASE(metrics_child_context_starts_shared, "metrics", "CTX-001 MET-014 RUN-008", CWC_REPEATED)
{
    cwc_run_ok(NULL, execution_root, NULL);
}
