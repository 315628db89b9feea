/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * registry.c - the list of cases, filled before main by each case file,
 * and the helpers cases use to run a root task.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "harness/cwc.h"

const cw_backend *cwc_backend;
uint64_t cwc_seed = 42;
cw_io_backend cwc_io_backend = CW_IO_AUTO;

int cwc_done_fd = -1;

static cwc_case *head;

void cwc_case_done(void)
{
    char mark = 1;
    if (cwc_done_fd >= 0 && write(cwc_done_fd, &mark, 1) != 1)
        ck_abort_msg("cannot mark the case done");
}

/* Cases keep name order, whatever order the constructors ran in, so that
 * listings and reports are stable. */
void cwc_register(cwc_case *c)
{
    cwc_case **at = &head;
    while (*at && strcmp((*at)->name, c->name) < 0)
        at = &(*at)->next;
    c->next = *at;
    *at = c;
}

const cwc_case *cwc_cases(void)
{
    return head;
}

cw_config cwc_config(void)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.seed = cwc_seed;
    cfg.io_backend = cwc_io_backend;
    return cfg;
}

int cwc_run(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *res)
{
    cw_config local = cwc_config();
    return cw_start(cwc_backend, cfg ? cfg : &local, root, arg, res);
}

void *cwc_run_ok(const cw_config *cfg, cw_task_fn root, void *arg)
{
    cw_run_result res;
    int rc = cwc_run(cfg, root, arg, &res);
    ck_assert_msg(rc == CW_OK, "run ended with %s: %s", cw_strerror(rc), res.message);
    return res.value;
}
