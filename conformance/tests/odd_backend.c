/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * odd_backend.c - a backend shared object made to test the reports, not
 * the runtime: the deterministic reference under a name no report can copy
 * as it is (bytes that are not UTF-8, controls, markup and quotes), in a
 * copied table, which breaks ABI-002 (the objects still point at the
 * original) so that a case fails. With CWC_ODD_HANG set, every run hangs,
 * so that a case times out; with CWC_ODD_EXIT, every run ends the process
 * with status 0, which Check alone would take for a pass; with
 * CWC_ODD_FLAKY, a run under an odd seed fails, so that --repeat finds the
 * case FLAKY; with CWC_ODD_ESCAPE, every run first forks a process that
 * leaves the case's session (setsid) and sleeps, holding stdout; with
 * CWC_ODD_NULL_ENTRY, the table's yield entry is NULL; with
 * CWC_ODD_RUNAWAY, every run takes memory until none is left, then fails;
 * with CWC_ODD_MARKUP, every run fails with a message made to break out of
 * an HTML report (an element's end, a script, an attribute's quote).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cwrt/cwrt.h"

const cw_backend *cw_backend_entry(void);

/* Invalid: FF, FE, an overlong '/', a surrogate, a cut-off sequence; valid:
 * U+1F600; then a control, markup and quotes. */
static const char odd_name[] = "\xff\xfe odd \xc0\xaf \xed\xa0\x80 \xe2\x82 \xf0\x9f\x98\x80 \x01"
                               " <b>&amp;\"'\\";

static cw_backend odd;

static int exiting_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    (void)cfg, (void)root, (void)arg, (void)out;
    exit(0);
}

static int hanging_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    (void)cfg, (void)root, (void)arg, (void)out;
    for (;;)
        pause();
    return CW_OK; /* never reached */
}

static int flaky_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    if (cfg->seed % 2) {
        cw_run_result failed = {0};
        failed.status = CW_ERR_INVALID;
        snprintf(failed.message, sizeof failed.message, "odd seed");
        *out = failed;
        return CW_ERR_INVALID;
    }
    return cw_backend_deterministic()->start(cfg, root, arg, out);
}

static int escaping_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    if (fork() == 0) {
        setsid();
        if (fork() == 0)
            for (;;)
                sleep(1000);
        _exit(0);
    }
    return cw_backend_deterministic()->start(cfg, root, arg, out);
}

/* Takes and touches 16 MiB at a time until an allocation fails. */
static int runaway_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    (void)cfg, (void)root, (void)arg;
    enum { CHUNK = 16 << 20, MAX = 4096 };
    static void *taken[MAX];
    int n = 0;
    while (n < MAX && (taken[n] = malloc(CHUNK)) != NULL)
        memset(taken[n++], 1, CHUNK);
    for (int i = 0; i < n; i++)
        free(taken[i]);
    cw_run_result failed = {0};
    failed.status = CW_ERR_NOMEM;
    snprintf(failed.message, sizeof failed.message, "runaway: no memory left after %d MiB", n * 16);
    *out = failed;
    return CW_ERR_NOMEM;
}

/* The message the HTML report must show as text: were it markup, the
 * script would mark the page as run, which the test looks for. */
static int markup_start(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)
{
    (void)cfg, (void)root, (void)arg;
    cw_run_result failed = {0};
    failed.status = CW_ERR_INVALID;
    snprintf(failed.message, sizeof failed.message,
             "odd markup </pre></td><script>document.documentElement.setAttribute("
             "'data-owned','yes')</script><img src=x "
             "onerror=\"this.setAttribute('data-owned','yes')\"> &amp; '\"");
    *out = failed;
    return CW_ERR_INVALID;
}

const cw_backend *cw_backend_entry(void)
{
    odd = *cw_backend_deterministic();
    odd.name = odd_name;
    if (getenv("CWC_ODD_HANG"))
        odd.start = hanging_start;
    if (getenv("CWC_ODD_EXIT"))
        odd.start = exiting_start;
    if (getenv("CWC_ODD_FLAKY"))
        odd.start = flaky_start;
    if (getenv("CWC_ODD_ESCAPE"))
        odd.start = escaping_start;
    if (getenv("CWC_ODD_NULL_ENTRY"))
        odd.yield = NULL;
    if (getenv("CWC_ODD_RUNAWAY"))
        odd.start = runaway_start;
    if (getenv("CWC_ODD_MARKUP"))
        odd.start = markup_start;
    return &odd;
}
