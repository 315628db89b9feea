/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * run.c - choose the cases of a run and run them, one Check runner per case
 * so that each gets its own duration, timeout and progress line.
 *
 * Every case ends with a status: a case outside the backend's profiles is
 * not applicable, one left out by a filter is not run; neither counts as
 * passed, and a run that left out any applicable case is PARTIAL.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "harness/misuse.h"
#include "harness/progress.h"
#include "harness/reaper.h"
#include "harness/report.h"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* The selections Check itself reads from the environment. They are honoured
 * here, once, and then removed so that the per-case runners see none. */
static const char *const check_selections[] = {"CK_RUN_SUITE", "CK_RUN_CASE", "CK_INCLUDE_TAGS",
                                               "CK_EXCLUDE_TAGS"};
static const char *const check_ignored[] = {
    "CK_TIMEOUT_MULTIPLIER", "CK_DEFAULT_TIMEOUT",       "CK_LOG_FILE_NAME", "CK_XML_LOG_FILE_NAME",
    "CK_TAP_LOG_FILE_NAME",  "CK_SUBUNIT_LOG_FILE_NAME", "CK_FORK",          "CK_VERBOSITY"};
#define NELEM(a) (sizeof(a) / sizeof((a)[0]))

typedef struct env_filter {
    const char *suite, *name, *include, *exclude;
} env_filter;

static void take_env(env_filter *e, cwc_report *r)
{
    const char **slots[] = {&e->suite, &e->name, &e->include, &e->exclude};
    for (size_t i = 0; i < NELEM(check_selections); i++) {
        const char *v = getenv(check_selections[i]);
        *slots[i] = v && *v ? strdup(v) : NULL;
        if (*slots[i]) {
            size_t len = strlen(r->env_selection);
            snprintf(r->env_selection + len, sizeof r->env_selection - len, "%s%s=%s",
                     len ? " " : "", check_selections[i], v);
        }
        unsetenv(check_selections[i]);
    }
    for (size_t i = 0; i < NELEM(check_ignored); i++)
        unsetenv(check_ignored[i]);
}

static void free_env(env_filter *e)
{
    free((void *)e->suite), free((void *)e->name);
    free((void *)e->include), free((void *)e->exclude);
}

/* Any word of `tags` (Check separates them by spaces) among the case's
 * requirements. */
static int any_tag(const cwc_case *c, const char *tags)
{
    char word[64];
    for (const char *p = tags; *p;) {
        size_t n = strcspn(p, " ");
        snprintf(word, sizeof word, "%.*s", (int)n, p);
        if (n && cwc_has_req(c->reqs, word))
            return 1;
        p += n + (p[n] != '\0');
    }
    return 0;
}

/* Why an applicable case is left out of this run, or NULL if it runs. */
static const char *left_out(const cwc_options *opt, const env_filter *e, const cwc_report *r,
                            const cwc_case *c)
{
    if (!(r->selected & ((cwc_profiles)1u << cwc_case_profile(c))))
        return "not selected by --profile";
    if (opt->filter && !strstr(c->name, opt->filter) && !strstr(c->group, opt->filter) &&
        !cwc_has_req(c->reqs, opt->filter))
        return "not selected by --filter";
    if (e->suite && strcmp(e->suite, "cwrt") != 0)
        return "not selected by CK_RUN_SUITE";
    if (e->name && strcmp(e->name, c->name) != 0)
        return "not selected by CK_RUN_CASE";
    if (e->include && !any_tag(c, e->include))
        return "not selected by CK_INCLUDE_TAGS";
    if (e->exclude && any_tag(c, e->exclude))
        return "not selected by CK_EXCLUDE_TAGS";
    return NULL;
}

/* Not applicable, not run, or to run (returns 1). */
static int classify(const cwc_options *opt, const env_filter *e, cwc_report *r, cwc_result *x)
{
    if (cwc_case_profile(x->c) < 0) {
        x->status = CWC_NOT_RUN; /* an error of the suite: the run cannot be complete */
        snprintf(x->reason, sizeof x->reason, "group '%s' belongs to no profile", x->c->group);
        return 0;
    }
    cwc_profiles missing = cwc_case_needs(x->c) & ~r->declared;
    if (missing) {
        char names[160];
        cwc_profiles_text(missing, ", ", names, sizeof names);
        x->status = CWC_NA;
        snprintf(x->reason, sizeof x->reason, "not applicable: needs %s, not declared", names);
        return 0;
    }
    cwc_profiles excluded = cwc_case_excludes(x->c) & r->declared;
    if (excluded) {
        char names[160];
        cwc_profiles_text(excluded, ", ", names, sizeof names);
        x->status = CWC_NA;
        snprintf(x->reason, sizeof x->reason, "not applicable: a rule for backends without %s",
                 names);
        return 0;
    }
    const char *why = left_out(opt, e, r, x->c);
    if (why) {
        x->status = CWC_NOT_RUN;
        snprintf(x->reason, sizeof x->reason, "%s", why);
        return 0;
    }
    return 1;
}

/* A timeout names the limit it met and the CPU time the case's process
 * used meanwhile: next to none is a case blocked for good (a hang), most
 * of the time is one that was busy (a livelock, or a machine slower than
 * the time scale allowed for). */
static void take_result(TestResult *tr, double limit, double cpu, cwc_result *x)
{
    const char *msg = tr_msg(tr) ? tr_msg(tr) : "";
    if (tr_rtype(tr) == CK_PASS) {
        x->status = CWC_PASS;
    } else if (strstr(msg, "timeout expired")) {
        x->status = CWC_TIMEOUT;
        snprintf(x->reason, sizeof x->reason,
                 "timed out: no result after %.0f s (--timeout x time scale %.2f), its process "
                 "having used %.1f s of CPU: %s",
                 limit, cwc_time_scale, cpu,
                 cpu < limit / 10 ? "blocked, the case hangs"
                                  : "busy all along (a loop, or a machine slower still)");
    } else {
        x->status = CWC_FAIL;
        snprintf(x->reason, sizeof x->reason, "%s:%d: %s", tr_lfile(tr) ? tr_lfile(tr) : "?",
                 tr_lno(tr), msg);
    }
}

/* CPU time of the children this process has waited for, in seconds. */
static double children_cpu(void)
{
    struct rusage ru;
    if (getrusage(RUSAGE_CHILDREN, &ru) != 0)
        return 0;
    return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) +
           (double)(ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6;
}

/* A case Check saw pass must also have marked its end (cwc_case_done). */
static void require_end(int fd, cwc_result *x)
{
    char mark;
    if (x->status == CWC_PASS && read(fd, &mark, 1) != 1) {
        x->status = CWC_FAIL;
        snprintf(x->reason, sizeof x->reason,
                 "the case's process ended with status 0 before the case did "
                 "(an exit() in the backend?)");
    }
}

/* Run one case in a child process of its own (Check's fork mode). */
static void run_once(const cwc_options *opt, cwc_result *x)
{
    int done[2];
    if (pipe2(done, O_NONBLOCK) != 0) {
        x->status = CWC_FAIL;
        snprintf(x->reason, sizeof x->reason, "cannot run the case: %s", strerror(errno));
        return;
    }
    cwc_done_fd = done[1];
    cwc_misuse_arm();
    (void)cwc_scratch_make(); /* without one the case runs under the harness's $TMPDIR */
    Suite *s = suite_create("cwrt");
    TCase *tc = tcase_create(x->c->name);
    double limit = opt->timeout * cwc_time_scale;
    tcase_set_timeout(tc, limit);
    tcase_add_checked_fixture(tc, cwc_limit_case_memory, NULL);
    tcase_add_checked_fixture(tc, cwc_scratch_enter, NULL);
    tcase_add_test(tc, x->c->test);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_set_fork_status(sr, CK_FORK);
    double t0 = now_seconds(), cpu0 = children_cpu();
    srunner_run(sr, "cwrt", x->c->name, CK_SILENT);
    x->seconds = now_seconds() - t0;
    TestResult **tr = srunner_results(sr);
    if (srunner_ntests_run(sr) == 1 && tr) {
        take_result(tr[0], limit, children_cpu() - cpu0, x);
    } else {
        x->status = CWC_FAIL;
        snprintf(x->reason, sizeof x->reason, "the test runner gave no result");
    }
    free(tr);
    srunner_free(sr);
    const char *misuse = cwc_misuse_seen();
    if (misuse && x->status != CWC_PASS) {
        x->status = CWC_FAIL;
        snprintf(x->reason, sizeof x->reason, "%s", misuse);
    }
    cwc_done_fd = -1;
    close(done[1]);
    require_end(done[0], x);
    x->left += cwc_reap_leftovers();
    cwc_scratch_remove(); /* once nothing the case started can write there */
    close(done[0]);
}

/* A load that rose after the time scale was measured (another job started
 * beside the run, a build, a backup) can make a right case miss its
 * limit. So a timeout is a verdict only under the load it met: when the
 * scale was measured, it is measured again, and if the machine has since
 * become clearly slower the case runs once more with limits scaled to
 * that. A hang still times out, at the cost of one more wait. */
#define SLOWER_NOW 1.5

static void run_under_load(const cwc_options *opt, cwc_result *x)
{
    run_once(opt, x);
    if (x->status != CWC_TIMEOUT || !cwc_time_scale_measured)
        return;
    double before = cwc_time_scale, now = cwc_measure_time_scale();
    if (now < before * SLOWER_NOW)
        return;
    cwc_time_scale = now;
    run_once(opt, x);
    cwc_time_scale = before;
}

/* ---- Each I/O mode [NAT-008] ------------------------------------------------------------ */

static void *probe_root(cw_ctx *ctx, void *arg)
{
    (void)ctx;
    return arg;
}

/* Whether a run of the backend can have a ring (CW_IO_URING). Asked in a
 * child process, like a case: a backend that crashes ends only that. */
static bool ring_available(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        cw_config cfg = cwc_config();
        cfg.io_backend = CW_IO_URING;
        cw_run_result res;
        _exit(cw_start(cwc_backend, &cfg, probe_root, NULL, &res) == CW_OK ? 0 : 1);
    }
    int status;
    return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
           WEXITSTATUS(status) == 0;
}

/* A backend that reads and writes blobs on threads of its own may do it
 * through a ring instead, and its storage and network must behave the same
 * either way (NAT-008). When it can have a ring, the cases that use them
 * run once with each mode; CW_IO_AUTO picks one of the two. */
static bool runs_each_io(const cw_backend *b)
{
    const uint64_t both = CW_CAP_PARALLEL | CW_CAP_PERSISTENT_STORAGE;
    return (b->capabilities & both) == both && ring_available();
}

static void run_each_io(const cwc_options *opt, const cwc_report *r, cwc_result *x)
{
    static const cw_io_backend modes[2] = {CW_IO_URING, CW_IO_THREADS};
    static const char *const names[2] = {"CW_IO_URING", "CW_IO_THREADS"};
    uint64_t needs = x->c->needs;
    if (!r->each_io || (needs & CWC_OWN_IO) || !(needs & (CWC_NEEDS_STORAGE | CWC_NEEDS_NETWORK))) {
        run_under_load(opt, x);
        return;
    }
    double seconds = 0;
    for (int i = 0; i < 2; i++) {
        cwc_io_backend = modes[i];
        run_under_load(opt, x);
        seconds += x->seconds;
        if (x->status != CWC_PASS) {
            char why[sizeof x->reason];
            memcpy(why, x->reason, sizeof why);
            snprintf(x->reason, sizeof x->reason, "with %s: %.480s", names[i], why);
            break;
        }
    }
    cwc_io_backend = CW_IO_AUTO;
    x->seconds = seconds;
}

/* ---- --repeat: the same case under several seeds --------------------------------------- */

/* Seed `seed` at the end of the list `seeds`, as room allows. */
static void add_seed(char *seeds, size_t size, uint64_t seed)
{
    size_t used = strlen(seeds);
    if (used + 24 < size)
        snprintf(seeds + used, size - used, "%s%llu", used ? "," : "", (unsigned long long)seed);
}

/* With --repeat N the case runs N times, the i-th under seed + i, as WPT's
 * verify mode reruns a test. A case whose verdict changes between runs is
 * FLAKY: a failure that names the seeds it passed and failed with and the
 * first failure, so a third party tells a flaky backend (or case) from a
 * wrong one. A case that fails every time fails as it did the first time. */
static void run_repeated(const cwc_options *opt, const cwc_report *r, cwc_result *x)
{
    if (opt->repeat <= 1) {
        run_each_io(opt, r, x);
        return;
    }
    uint64_t base = cwc_seed;
    char passed[160] = "", failed[160] = "", first_failure[sizeof x->reason] = "";
    enum cwc_status first_status = CWC_PASS;
    double seconds = 0;
    for (unsigned i = 0; i < opt->repeat; i++) {
        cwc_seed = base + i;
        run_each_io(opt, r, x);
        seconds += x->seconds;
        add_seed(x->status == CWC_PASS ? passed : failed, sizeof passed, cwc_seed);
        if (x->status != CWC_PASS && !first_failure[0]) {
            first_status = x->status;
            memcpy(first_failure, x->reason, sizeof first_failure);
        }
    }
    cwc_seed = base;
    x->seconds = seconds;
    if (!first_failure[0]) {
        x->status = CWC_PASS;
        return;
    }
    x->status = passed[0] ? CWC_FAIL : first_status;
    if (passed[0])
        snprintf(x->reason, sizeof x->reason,
                 "FLAKY: passed with seeds %.80s, failed with %.80s: %.300s", passed, failed,
                 first_failure);
    else
        memcpy(x->reason, first_failure, sizeof x->reason);
}

void cwc_run_case(const cwc_options *opt, const cwc_report *r, cwc_result *x)
{
    x->left = 0;
    run_repeated(opt, r, x);
}

void cwc_say_leftovers(const cwc_result *x)
{
    if (x->left > 0)
        fprintf(stderr, "cw-conformance: %s left %d process%s running; killed\n", x->c->name,
                x->left, x->left == 1 ? "" : "es");
}

/* Requirements of the selected profiles that no case names: the spec has a
 * rule the suite cannot check, so no run of it is complete. */
static size_t uncovered(const cwc_report *r)
{
    size_t n = 0;
    for (size_t i = 0; i < cwc_nrequirements; i++) {
        int p = cwc_req_profile(cwc_requirements[i].id);
        if (p >= 0 && (r->selected & ((cwc_profiles)1u << p)) &&
            !strcmp(cwc_req_status(NULL, cwc_requirements[i].id), "uncovered"))
            n++;
    }
    return n;
}

static void add_why(cwc_report *r, const char *why)
{
    size_t len = strlen(r->partial_why);
    snprintf(r->partial_why + len, sizeof r->partial_why - len, "%s%s", len ? "; " : "", why);
}

/* A failure anywhere is NOT CONFORMANT; otherwise anything short of every
 * applicable case of every declared profile, all passed, is PARTIAL. */
static void decide(cwc_report *r)
{
    char text[256];
    r->reqs_uncovered = uncovered(r);
    if (r->counts[CWC_FAIL] || r->counts[CWC_TIMEOUT]) {
        r->verdict = CWC_NOT_CONFORMANT;
        return;
    }
    if (r->selected != r->declared) {
        char names[200];
        cwc_profiles_text(r->declared & ~r->selected, ", ", names, sizeof names);
        snprintf(text, sizeof text, "declared profiles not selected: %s", names);
        add_why(r, text);
    }
    if (r->counts[CWC_NOT_RUN]) {
        snprintf(text, sizeof text, "%zu applicable case(s) not run", r->counts[CWC_NOT_RUN]);
        add_why(r, text);
    }
    if (r->reqs_uncovered) {
        snprintf(text, sizeof text, "%zu requirement(s) without a case", r->reqs_uncovered);
        add_why(r, text);
    }
    if (!r->counts[CWC_PASS])
        add_why(r, "no case ran");
    r->verdict = r->partial_why[0] ? CWC_PARTIAL : CWC_CONFORMANT;
}

/* Give every case of the suite a result slot and decide which run; returns
 * how many will, or -1 on exhausted memory. */
static long select_cases(const cwc_options *opt, cwc_report *r)
{
    env_filter e;
    size_t total = 0, torun = 0;
    for (const cwc_case *c = cwc_cases(); c; c = c->next)
        total++;
    r->results = calloc(total ? total : 1, sizeof(cwc_result));
    take_env(&e, r);
    for (const cwc_case *c = cwc_cases(); c && r->results; c = c->next) {
        cwc_result *x = &r->results[r->n++];
        x->c = c;
        x->expect = cwc_expectation_of(r->expect, c);
        x->selected = classify(opt, &e, r, x) == 1;
        torun += (size_t)x->selected;
        r->counts[x->status] += (size_t)!x->selected;
    }
    free_env(&e);
    return r->results ? (long)torun : -1;
}

/* --fail-fast: a case after the first failure (the first not expected,
 * with --expect) is not run; the verdict is already decided. */
static void leave_out(cwc_result *x)
{
    x->status = CWC_NOT_RUN;
    snprintf(x->reason, sizeof x->reason, "not run: --fail-fast stopped at a failure");
}

bool cwc_stops_run(const cwc_options *opt, const cwc_result *x)
{
    bool failed = x->status == CWC_FAIL || x->status == CWC_TIMEOUT;
    bool expected = x->expect && (x->expect->expected == CWC_EXPECT_FAIL ||
                                  x->expect->expected == CWC_EXPECT_TIMEOUT);
    return opt->fail_fast && failed && !expected;
}

/* One case after the other, in this process; with --fail-fast, `*stop`
 * becomes the first that failed. */
static void run_serially(const cwc_options *opt, cwc_report *r, cwc_progress *pg, size_t *stop)
{
    for (size_t i = 0; i < r->n && i <= *stop; i++) {
        cwc_result *x = &r->results[i];
        if (!x->selected)
            continue;
        cwc_progress_case(pg, x->c->name);
        cwc_run_case(opt, r, x);
        cwc_say_leftovers(x);
        if (cwc_stops_run(opt, x))
            *stop = i;
    }
}

int cwc_run_suite(const cwc_options *opt, cwc_report *r)
{
    long torun = select_cases(opt, r);
    if (torun < 0)
        return -1;
    r->started = time(NULL);
    double t0 = now_seconds();
    r->each_io = torun > 0 && runs_each_io(r->backend);
    cwc_progress *pg = opt->quiet ? NULL : cwc_progress_start((size_t)torun);
    size_t stop = SIZE_MAX; /* the first case that failed, with --fail-fast */
    int rc = 0;
    if (opt->jobs > 1)
        rc = cwc_run_jobs(opt, r, pg, &stop);
    else
        run_serially(opt, r, pg, &stop);
    cwc_progress_stop(pg);
    if (rc != 0) {
        cwc_report_free(r);
        return -1;
    }
    /* The same cases left out whether they ran one at a time or not. */
    for (size_t i = 0; i < r->n; i++) {
        cwc_result *x = &r->results[i];
        if (x->selected && i > stop)
            leave_out(x);
        r->counts[x->status] += (size_t)x->selected;
    }
    r->seconds = now_seconds() - t0;
    decide(r);
    cwc_judge(r);
    return 0;
}

void cwc_report_free(cwc_report *r)
{
    free(r->results);
    r->results = NULL;
}
