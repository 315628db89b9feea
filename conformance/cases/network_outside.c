/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * network_outside.c - network calls made from a thread of the program that
 * is not a task of the run: the suspending ones (NET-001) and, on a
 * deterministic backend, partition and repair (NET-038) end the process
 * with a message (00-conventions.md), as the storage calls do (STOR-019).
 *
 * Each call is made in a process of its own, forked for it, whose standard
 * error is read back: the process must end other than by returning from
 * its run, and say something first.
 */
#include <pthread.h>
#include <stdio.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases/util.h"

enum { OUT_BIND, OUT_DIAL, OUT_PARTITION, OUT_REPAIR };

static const char *const out_names[] = {"cw_bind", "cw_dial", "cw_network_partition",
                                        "cw_network_repair"};

typedef struct outside {
    int call;
    cw_ctx *ctx;
    cw_addr where; /* a listener of the run */
} outside;

static void *call_outside(void *arg)
{
    outside *o = arg;
    cw_addr any = cw_addr_loopback4(0), everyone = cw_addr_ipv4(0, 0, 0, 0, 0);
    cw_listener *l = NULL;
    cw_sink *sink = NULL;
    cw_stream *stream = NULL;
    switch (o->call) {
    case OUT_BIND:
        cw_bind(o->ctx, &any, &l);
        break;
    case OUT_DIAL:
        cw_dial(o->ctx, &o->where, &sink, &stream);
        break;
    case OUT_PARTITION:
        cw_network_partition(o->ctx, &everyone, &everyone);
        break;
    case OUT_REPAIR:
        cw_network_repair(o->ctx, &everyone, &everyone);
        break;
    }
    return NULL; /* the call returned: the process goes on, and the case fails */
}

static void *outside_root(cw_ctx *ctx, void *arg)
{
    outside *o = arg;
    o->ctx = ctx;
    cw_addr any = cw_addr_loopback4(0);
    cw_listener *l = NULL;
    ck_assert_int_eq(cw_bind(ctx, &any, &l), CW_OK);
    ck_assert_int_eq(cw_listener_local_addr(l, &o->where), CW_OK);
    pthread_t t;
    ck_assert_int_eq(pthread_create(&t, NULL, call_outside, o), 0);
    ck_assert_int_eq(pthread_join(t, NULL), 0);
    cw_listener_close(l);
    return NULL;
}

/* In a child process: whether `call` made outside a task ended it, having
 * written a message to the standard error stream first. */
static void expect_end(int call)
{
    outside o = {call, NULL, {0}};
    cw_config cfg = cwc_config();
    char said[512];
    int status = cwc_run_in_child(&cfg, outside_root, &o, said, sizeof said);
    ck_assert_msg(!(WIFEXITED(status) && WEXITSTATUS(status) == 0),
                  "%s from a thread that is no task returned", out_names[call]);
    ck_assert_msg(said[0] != '\0',
                  "%s from a thread that is no task ended the process without a message",
                  out_names[call]);
}

CWC_CASE(network_calls_outside_a_task_end_the_process, "network", "NET-001", 0)
{
    expect_end(OUT_BIND);
    expect_end(OUT_DIAL);
}

CWC_CASE(network_partition_outside_a_task_ends_the_process, "network", "NET-038",
         CW_CAP_DETERMINISTIC)
{
    expect_end(OUT_PARTITION);
    expect_end(OUT_REPAIR);
}
