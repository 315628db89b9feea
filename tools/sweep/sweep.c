/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cw-sweep - run a test program once per seed over a range of seeds, in
 * parallel processes, and report the seeds that failed with the command
 * that replays each.
 *
 * A deterministic run is a function of its seed, so a simulation test is
 * really a family of tests, one per seed; a bug that needs a rare schedule
 * shows up under a few seeds out of thousands. This tool runs that family:
 * one machine's cores with --jobs, many machines with --shard K/N (every
 * seed of the range falls in exactly one shard), each run under a time
 * limit so a seed that hangs is a finding too, not a stalled sweep.
 *
 * The seed reaches the program as the environment variable CW_SEED (or
 * the one --seed-env names), and in place of every "{seed}" in its
 * arguments. See tools/sweep/README.md and cw-sweep(1).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "sweep.h"

static const char usage[] =
    "usage: cw-sweep [options] -- PROGRAM [ARG...]\n"
    "Run PROGRAM once per seed; a run fails when it exits non-zero, is killed,\n"
    "or outlives --timeout. The seed is in $CW_SEED and replaces {seed} in ARGs.\n"
    "\n"
    "  --seeds A..B      the seeds A to B-1 (default 0..100)\n"
    "  --shard K/N       only the seeds s with (s - A) mod N == K, 0 <= K < N\n"
    "  --jobs J          runs at once (default: the number of CPUs)\n"
    "  --timeout S       seconds a run may take (default 60; 0 for none)\n"
    "  --seed-env NAME   the variable that carries the seed (default CW_SEED)\n"
    "  --logs DIR        keep the output of each failed run in DIR/seed-S.log\n"
    "  --json FILE       write the report as JSON to FILE\n"
    "  --max-failures F  stop starting runs after F failures (default: never)\n"
    "  --quiet           no progress line, only the report\n"
    "  --help, --version\n"
    "\n"
    "Exit status: 0 every seed passed, 1 a seed failed, 2 usage or start error.\n";

static int bad_usage(const char *fmt, const char *what)
{
    fprintf(stderr, "cw-sweep: ");
    fprintf(stderr, fmt, what);
    fprintf(stderr, "\n%s", usage);
    return 2;
}

/* "A..B" with A < B, both unsigned 64-bit. */
static bool parse_range(const char *s, uint64_t *first, uint64_t *end)
{
    char *dots;
    errno = 0;
    *first = strtoull(s, &dots, 0);
    if (errno || dots == s || strncmp(dots, "..", 2) != 0 || dots[2] == '-')
        return false;
    char *rest;
    *end = strtoull(dots + 2, &rest, 0);
    return !errno && rest != dots + 2 && *rest == '\0' && *first < *end;
}

/* "K/N" with 0 <= K < N. */
static bool parse_shard(const char *s, uint64_t *k, uint64_t *n)
{
    char *slash, *rest;
    errno = 0;
    *k = strtoull(s, &slash, 10);
    if (errno || slash == s || *slash != '/' || s[0] == '-' || slash[1] == '-')
        return false;
    *n = strtoull(slash + 1, &rest, 10);
    return !errno && rest != slash + 1 && *rest == '\0' && *n > 0 && *k < *n;
}

static bool parse_count(const char *s, unsigned long max, unsigned long *out)
{
    char *rest;
    errno = 0;
    unsigned long v = strtoul(s, &rest, 10);
    if (errno || rest == s || *rest != '\0' || s[0] == '-' || v > max)
        return false;
    *out = v;
    return true;
}

enum {
    OPT_SEEDS = 256,
    OPT_SHARD,
    OPT_JOBS,
    OPT_TIMEOUT,
    OPT_SEED_ENV,
    OPT_LOGS,
    OPT_JSON,
    OPT_MAX_FAILURES,
    OPT_QUIET,
    OPT_HELP,
    OPT_VERSION
};

static const struct option options[] = {
    {"seeds", required_argument, NULL, OPT_SEEDS},
    {"shard", required_argument, NULL, OPT_SHARD},
    {"jobs", required_argument, NULL, OPT_JOBS},
    {"timeout", required_argument, NULL, OPT_TIMEOUT},
    {"seed-env", required_argument, NULL, OPT_SEED_ENV},
    {"logs", required_argument, NULL, OPT_LOGS},
    {"json", required_argument, NULL, OPT_JSON},
    {"max-failures", required_argument, NULL, OPT_MAX_FAILURES},
    {"quiet", no_argument, NULL, OPT_QUIET},
    {"help", no_argument, NULL, OPT_HELP},
    {"version", no_argument, NULL, OPT_VERSION},
    {NULL, 0, NULL, 0},
};

static void defaults(cw_sweep_plan *p)
{
    memset(p, 0, sizeof *p);
    p->first = 0;
    p->end = 100;
    p->shard_n = 1;
    long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    p->jobs = cpus > 0 ? (unsigned)cpus : 1;
    p->timeout_s = 60;
    p->seed_env = "CW_SEED";
    p->max_failures = ULONG_MAX;
    p->progress = isatty(STDERR_FILENO);
}

/* One option into `p`: 0, 1 to stop with status 0 (help, version), or 2. */
static int take_option(cw_sweep_plan *p, int opt, const char *arg)
{
    unsigned long v;
    switch (opt) {
    case OPT_SEEDS:
        return parse_range(arg, &p->first, &p->end) ? 0 : bad_usage("bad --seeds: %s", arg);
    case OPT_SHARD:
        return parse_shard(arg, &p->shard_k, &p->shard_n) ? 0 : bad_usage("bad --shard: %s", arg);
    case OPT_JOBS:
        if (!parse_count(arg, 4096, &v) || v == 0)
            return bad_usage("bad --jobs: %s", arg);
        p->jobs = (unsigned)v;
        return 0;
    case OPT_TIMEOUT:
        if (!parse_count(arg, 7 * 24 * 3600, &v))
            return bad_usage("bad --timeout: %s", arg);
        p->timeout_s = (unsigned)v;
        return 0;
    case OPT_MAX_FAILURES:
        if (!parse_count(arg, ULONG_MAX - 1, &v) || v == 0)
            return bad_usage("bad --max-failures: %s", arg);
        p->max_failures = v;
        return 0;
    case OPT_SEED_ENV:
        if (!arg[0] || strchr(arg, '='))
            return bad_usage("bad --seed-env: %s", arg);
        p->seed_env = arg;
        return 0;
    case OPT_LOGS:
        p->logs = arg;
        return 0;
    case OPT_JSON:
        p->json = arg;
        return 0;
    case OPT_QUIET:
        p->progress = false;
        return 0;
    case OPT_HELP:
        fputs(usage, stdout);
        return 1;
    case OPT_VERSION:
        printf("cw-sweep %s\n", CW_SWEEP_VERSION);
        return 1;
    default:
        return bad_usage("%s", "unknown option");
    }
}

int main(int argc, char **argv)
{
    cw_sweep_plan plan;
    defaults(&plan);
    int opt;
    while ((opt = getopt_long(argc, argv, "+", options, NULL)) != -1) {
        int rc = take_option(&plan, opt, optarg);
        if (rc)
            return rc == 1 ? 0 : 2;
    }
    if (optind >= argc)
        return bad_usage("%s", "no program to run");
    plan.argv = argv + optind;
    signal(SIGPIPE, SIG_IGN);
    cw_sweep_report report;
    if (cw_sweep_run(&plan, &report) != 0)
        return 2;
    cw_sweep_print(&plan, &report, stdout);
    int rc = plan.json ? cw_sweep_write_json(&plan, &report, plan.json) : 0;
    bool failed = report.nfailures > 0;
    cw_sweep_report_free(&report);
    return rc ? 2 : failed ? 1 : 0;
}
