/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cli.c - the command line of cw-conformance, shared with a third party's
 * own test binary through cwc_main (include/cwconformance.h).
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cwconformance.h"
#include "harness/allocator.h"
#include "harness/load.h"
#include "harness/reaper.h"
#include "harness/report.h"
#include "harness/suiteinfo.h"

#ifndef CWC_REFERENCE_BACKENDS
#define CWC_REFERENCE_BACKENDS "none built in"
#endif

static const char usage_text[] =
    "usage: cw-conformance [OPTION]... --backend NAME|PATH.so\n"
    "       cw-conformance [OPTION]... PATH.so\n"
    "       cw-conformance compare [--json=OUT] A.json B.json   (compare --help)\n"
    "Run the cwrt conformance suite against one backend and report on it; or\n"
    "compare two runs' JSON reports (exit 0 no regression, 1 regressions, 2 error).\n"
    "\n"
    "  -b, --backend=NAME|PATH  the backend under test: a reference backend by name\n"
    "                           (" CWC_REFERENCE_BACKENDS "), or a shared object exporting\n"
    "                           cw_backend_entry; an argument holding '/' or ending in\n"
    "                           .so (or .so.N) is a file, 'x.so' is ./x.so\n"
    "  -p, --profile=P[,P...]   run only these of the profiles the backend declares\n"
    "                           (core strategy ratelimit buffers metrics storage network\n"
    "                           deterministic audit parallel persistent-storage recover);\n"
    "                           fewer than it declares makes the verdict PARTIAL\n"
    "  -f, --filter=TEXT        run only cases whose name or group holds TEXT, or that\n"
    "                           name requirement TEXT; the verdict is then PARTIAL (a\n"
    "                           filter that selects no case is a usage error)\n"
    "  -s, --seed=N             the seed of every run (default 42)\n"
    "  -t, --timeout=SECONDS    fail a case that gives no result in time (default 60),\n"
    "                           multiplied by the time scale\n"
    "      --time-scale=F|auto  multiply every real-time limit (the timeout, a case's\n"
    "                           deadline for a thread) by F >= 1; 'auto' (the default)\n"
    "                           measures how much slower than an idle machine this run\n"
    "                           is (valgrind, a sanitizer, qemu, load) and uses that\n"
    "      --memory-limit=MIB   the most address space a case's process may map\n"
    "                           (default 4096; 0 for none; none under valgrind or a\n"
    "                           sanitizer)\n"
    "      --repeat=N           run each case N times, under seeds N..N+N-1 from --seed;\n"
    "                           a case whose verdict changes is FLAKY, a failure naming\n"
    "                           the seeds it passed and failed with\n"
    "  -j, --jobs=N             run N cases at once, each in a process of its own (default\n"
    "                           1); the results and reports are a serial run's\n"
    "      --expect=FILE        the results some cases are expected to get (NAME PASS|FAIL|\n"
    "                           TIMEOUT|SKIP WHY, a line each; '#' comments): exit 0 while\n"
    "                           each gets it, 1 on a regression or an unexpected pass\n"
    "  -x, --fail-fast          stop at the first case that fails or times out; the\n"
    "                           rest are not run (the verdict is still NOT CONFORMANT)\n"
    "  -c, --certificate        print the certificate after the run\n"
    "      --json=FILE          write the JSON report (conformance/report.schema.json)\n"
    "      --xml=FILE           write a JUnit XML report\n"
    "      --tap=FILE           write a TAP version 13 report\n"
    "      --html=FILE          write the report as one self-contained HTML page (no\n"
    "                           script, nothing fetched): profiles, failures with the\n"
    "                           rules' text, requirements, cases\n"
    "  -q, --quiet              no progress line, even on a terminal\n"
    "  -l, --list               list the cases (profile, group, requirements) and exit\n"
    "  -r, --requirements       list the spec's requirements with their cases; after a\n"
    "                           run, with their results; alone, exit 1 if one has no case\n"
    "  -V, --version            print the suite's, spec's and ABI's versions and exit\n"
    "  -h, --help               print this help and exit\n"
    "\n"
    "Verdict and exit status:\n"
    "  0  CONFORMANT      every applicable case of every declared profile ran and passed\n"
    "  1  NOT CONFORMANT  a case failed or timed out\n"
    "  2  usage error, or the backend could not be loaded or has another ABI\n"
    "  3  PARTIAL         no case failed, but the run was not complete: a filter, a\n"
    "                     narrower profile list, a CK_* selection, or a requirement\n"
    "                     without a case; no certificate is issued\n"
    "With --expect: 0 when each case got the result expected, whatever the verdict,\n"
    "1 on a regression or an unexpected pass, 2 as above (a malformed file, too).\n"
    "A case of a profile the backend does not declare is 'not applicable': never\n"
    "passed, never failed.\n"
    "\n"
    "Environment:\n"
    "  CK_RUN_SUITE, CK_RUN_CASE, CK_INCLUDE_TAGS, CK_EXCLUDE_TAGS\n"
    "                  Check's selections (tags are requirement IDs): honoured, and the\n"
    "                  verdict is then PARTIAL\n"
    "  CK_FORK, CK_DEFAULT_TIMEOUT, CK_TIMEOUT_MULTIPLIER, CK_VERBOSITY, CK_*_LOG_FILE_NAME\n"
    "                  ignored: every case runs in a process of its own, --timeout\n"
    "                  is exact, and the reports are the options above\n"
    "  CWC_TIME_SCALE  the time scale when --time-scale is not given\n"
    "  CWC_METRICS_DIR a directory where the metrics cases leave every OpenMetrics text\n"
    "                  they encode, for an independent parser (openmetrics.py)\n"
    "  TMPDIR          where each case gets a directory of its own (default /tmp): the\n"
    "                  case's $TMPDIR, removed with all in it when the case ends\n";

static void usage(FILE *to, int full)
{
    if (full)
        fputs(usage_text, to);
    else
        fputs("usage: cw-conformance [OPTION]... --backend NAME|PATH.so (--help for more)\n", to);
}

static void print_version(void)
{
    printf("cw-conformance %s\nspec %s (sha256 %s)\nABI %u.%u\n", CWC_SUITE_VERSION,
           cwc_spec_version(), cwc_spec_sha256(), CW_ABI_MAJOR(CW_ABI_VERSION),
           CW_ABI_VERSION & 0xffff);
}

static int parse_number(const char *text, unsigned long long max, unsigned long long *out)
{
    char *end;
    errno = 0;
    *out = strtoull(text, &end, 0);
    return errno || end == text || *end || text[0] == '-' || *out > max ? -1 : 0;
}

static const struct option long_options[] = {
    {"backend", required_argument, NULL, 'b'},
    {"profile", required_argument, NULL, 'p'},
    {"filter", required_argument, NULL, 'f'},
    {"seed", required_argument, NULL, 's'},
    {"timeout", required_argument, NULL, 't'},
    {"fail-fast", no_argument, NULL, 'x'},
    {"certificate", no_argument, NULL, 'c'},
    {"json", required_argument, NULL, 'J'},
    {"xml", required_argument, NULL, 'X'},
    {"tap", required_argument, NULL, 'T'},
    {"html", required_argument, NULL, 'H'},
    {"quiet", no_argument, NULL, 'q'},
    {"list", no_argument, NULL, 'l'},
    {"requirements", no_argument, NULL, 'r'},
    {"version", no_argument, NULL, 'V'},
    {"help", no_argument, NULL, 'h'},
    {"repeat", required_argument, NULL, 'R'},
    {"time-scale", required_argument, NULL, 'S'},
    {"memory-limit", required_argument, NULL, 'M'},
    {"jobs", required_argument, NULL, 'j'},
    {"expect", required_argument, NULL, 'E'},
    {NULL, 0, NULL, 0},
};

/* The option `ch` sets a string or a flag of `opt`: where, or NULL. */
static const char **string_option(int ch, cwc_options *opt)
{
    const char **slots[] = {&opt->backend, &opt->profiles, &opt->filter,     &opt->json,  &opt->xml,
                            &opt->tap,     &opt->html,     &opt->time_scale, &opt->expect};
    const char *at = strchr("bpfJXTHSE", ch);
    return ch && at ? slots[at - "bpfJXTHSE"] : NULL;
}

static int *flag_option(int ch, cwc_options *opt)
{
    int *slots[] = {&opt->certificate, &opt->quiet, &opt->list, &opt->requirements,
                    &opt->fail_fast};
    const char *at = strchr("cqlrx", ch);
    return ch && at ? slots[at - "cqlrx"] : NULL;
}

/* --seed, --timeout, --repeat, --memory-limit and --jobs: whole numbers in
 * range, or a usage error. */
static int take_number(int ch, cwc_options *opt)
{
    static const struct {
        int ch;
        const char *name;
        unsigned long long max, min;
    } numbers[] = {{'s', "seed", UINT64_MAX, 0},
                   {'t', "timeout", 86400, 1},
                   {'R', "repeat", 1000, 1},
                   {'M', "memory-limit", 1u << 24, 0},
                   {'j', "jobs", 256, 1}};
    size_t k = 0;
    while (numbers[k].ch != ch)
        k++;
    unsigned long long n;
    if (parse_number(optarg, numbers[k].max, &n) != 0 || n < numbers[k].min) {
        fprintf(stderr, "cw-conformance: bad number '%s' for --%s\n", optarg, numbers[k].name);
        return -1;
    }
    if (ch == 's')
        cwc_seed = n;
    else if (ch == 't')
        opt->timeout = (unsigned)n;
    else if (ch == 'R')
        opt->repeat = (unsigned)n;
    else if (ch == 'j')
        opt->jobs = (unsigned)n;
    else
        cwc_memory_limit_mib = (unsigned long)n;
    return 0;
}

/* The time scale: --time-scale, else CWC_TIME_SCALE, else "auto", measured
 * (harness/timescale.c). A factor below 1 or not a number is refused. */
static int take_time_scale(const cwc_options *opt)
{
    const char *text = opt->time_scale ? opt->time_scale : getenv("CWC_TIME_SCALE");
    if (!text || !strcmp(text, "auto")) {
        /* Measured before any case runs: N cases at once on fewer CPUs
         * each get that share of the machine, which no measurement sees. */
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        double share = cpus > 0 && opt->jobs > (unsigned long)cpus ? (double)opt->jobs / cpus : 1;
        cwc_time_scale = cwc_measure_time_scale() * share;
        cwc_time_scale_measured = true;
        return 0;
    }
    char *end;
    errno = 0;
    double f = strtod(text, &end);
    if (errno || end == text || *end || !(f >= 1.0 && f <= 1000.0)) {
        fprintf(stderr, "cw-conformance: bad time scale '%s': a number from 1 to 1000, or auto\n",
                text);
        return -1;
    }
    cwc_time_scale = f;
    return 0;
}

/* One option into `opt`; 1 to exit 0 at once, -1 on a usage error. */
static int take_option(int ch, cwc_options *opt)
{
    const char **text = string_option(ch, opt);
    int *flag = flag_option(ch, opt);
    if (text)
        *text = optarg;
    else if (flag)
        *flag = 1;
    else if (ch == 'h')
        usage(stdout, 1);
    else if (ch == 'V')
        print_version();
    if (text || flag)
        return 0;
    if (ch == 'h' || ch == 'V')
        return 1;
    if (ch && strchr("stRMj", ch) && take_number(ch, opt) == 0)
        return 0;
    usage(stderr, 0);
    return -1;
}

static int parse_args(int argc, char **argv, cwc_options *opt)
{
    int ch, rc;
    optind = 1;
    while ((ch = getopt_long(argc, argv, "b:p:f:s:t:j:cqlrxVh", long_options, NULL)) != -1)
        if ((rc = take_option(ch, opt)) != 0)
            return rc;
    if (optind < argc && !opt->backend)
        opt->backend = argv[optind++];
    if (optind < argc) {
        fprintf(stderr, "cw-conformance: unexpected argument '%s'\n", argv[optind]);
        usage(stderr, 0);
        return -1;
    }
    return 0;
}

/* The profiles to run: all the backend declares, or those named, which it
 * must declare. */
static int choose_profiles(const cwc_options *opt, cwc_report *r)
{
    char why[256], declared[256];
    r->declared = cwc_profiles_declared(r->backend);
    r->selected = r->declared;
    if (!opt->profiles)
        return 0;
    if (cwc_profiles_parse(opt->profiles, &r->selected, why, sizeof why) != 0) {
        fprintf(stderr, "cw-conformance: %s\n", why);
        return -1;
    }
    if (r->selected & ~r->declared) {
        cwc_profiles_text(r->selected & ~r->declared, ", ", why, sizeof why);
        cwc_profiles_text(r->declared, ", ", declared, sizeof declared);
        fprintf(stderr, "cw-conformance: %s does not declare %s (it declares %s)\n",
                r->backend->name, why, declared);
        return -1;
    }
    return 0;
}

/* The report files; a file that cannot be written is an error of the run
 * (status 2), whatever the verdict. */
static int write_reports(const cwc_options *opt, const cwc_report *r)
{
    int rc = 0;
    if (opt->json && cwc_write_json(opt->json, r) != 0)
        rc = -1;
    if (opt->xml && cwc_write_junit(opt->xml, r) != 0)
        rc = -1;
    if (opt->tap && cwc_write_tap(opt->tap, r) != 0)
        rc = -1;
    if (opt->html && cwc_write_html(opt->html, r) != 0)
        rc = -1;
    return rc;
}

/* A report file that cannot be written is found before the run, not after
 * an hour of it: each is opened for writing (and a file made only for the
 * test removed again). */
static int reports_writable(const cwc_options *opt)
{
    const char *paths[] = {opt->json, opt->xml, opt->tap, opt->html};
    const char *names[] = {"--json", "--xml", "--tap", "--html"};
    for (size_t i = 0; i < sizeof paths / sizeof paths[0]; i++) {
        if (!paths[i])
            continue;
        bool made = access(paths[i], F_OK) != 0;
        int fd = open(paths[i], O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (fd < 0) {
            fprintf(stderr, "cw-conformance: cannot write the %s report %s: %s\n", names[i],
                    paths[i], strerror(errno));
            return -1;
        }
        close(fd);
        if (made)
            unlink(paths[i]);
    }
    return 0;
}

/* What was printed must have reached standard output: a certificate lost
 * to a full disk or a closed descriptor is an error, not a silent pass. */
static int flushed_stdout(void)
{
    if (fflush(stdout) == 0 && !ferror(stdout))
        return 0;
    fprintf(stderr, "cw-conformance: cannot write to standard output: %s\n", strerror(errno));
    return -1;
}

/* A --filter that selects no case is a mistake in the command, not a run. */
static int filter_selected(const cwc_options *opt, const cwc_report *r)
{
    if (!opt->filter)
        return 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->results[i].selected)
            return 0;
    fprintf(stderr,
            "cw-conformance: --filter '%s' selects no applicable case (--list shows them)\n",
            opt->filter);
    return -1;
}

static int run_and_report(const cwc_options *opt, cwc_report *r)
{
    if (choose_profiles(opt, r) != 0 || reports_writable(opt) != 0)
        return CWC_USAGE;
    if (cwc_run_suite(opt, r) != 0) {
        fputs("cw-conformance: out of memory\n", stderr);
        return CWC_USAGE;
    }
    if (filter_selected(opt, r) != 0) {
        cwc_report_free(r);
        return CWC_USAGE;
    }
    /* With --expect, the exit status says whether anything changed; the
     * verdict stays the reports' and the certificate's. */
    int rc = write_reports(opt, r) != 0 ? CWC_USAGE
             : r->expect                ? cwc_expectation_status(r)
                                        : (int)r->verdict;
    if (opt->requirements)
        cwc_print_requirements(r);
    if (opt->certificate)
        cwc_print_certificate(stdout, r);
    else
        cwc_print_summary(stdout, r);
    if (r->expect)
        cwc_print_expectations(stdout, r);
    cwc_report_free(r);
    return flushed_stdout() != 0 ? CWC_USAGE : rc;
}

/* The backend under test: the caller's, or the one --backend names. */
static int find_backend(const cwc_options *opt, const cw_backend *given, cwc_report *r)
{
    static cwc_loaded loaded; /* its path outlives the run's report */
    char why[512];
    r->backend = given;
    if (!given && cwc_load_backend(opt->backend, &loaded, why, sizeof why) == 0) {
        r->backend = loaded.backend;
        r->path = loaded.path[0] ? loaded.path : NULL;
        memcpy(r->so_sha256, loaded.sha256, sizeof r->so_sha256);
    }
    if (r->backend && cwc_check_abi(r->backend, why, sizeof why) == 0)
        return 0;
    fprintf(stderr, "cw-conformance: %s\n", why);
    return -1;
}

int cwc_main(int argc, char **argv, const cw_backend *backend)
{
    if (argc > 1 && !strcmp(argv[1], "compare"))
        return cwc_compare_main(argc - 1, argv + 1);
    cwc_options opt = {.timeout = 60, .repeat = 1, .jobs = 1};
    int rc = parse_args(argc, argv, &opt);
    if (rc != 0)
        return rc > 0 ? 0 : CWC_USAGE;
    if (take_time_scale(&opt) != 0)
        return CWC_USAGE;
    if (opt.list)
        return cwc_list(&opt);
    if (opt.requirements && !opt.backend && !backend)
        return cwc_print_requirements(NULL);
    if (!opt.backend == !backend) {
        fputs(backend ? "cw-conformance: this program tests its own backend: no --backend\n"
                      : "cw-conformance: no backend given\n",
              stderr);
        usage(stderr, 0);
        return CWC_USAGE;
    }
    cwc_expectations expect = {0};
    cwc_report r = {.filter = opt.filter, .timeout = opt.timeout};
    if (opt.expect && cwc_read_expectations(opt.expect, &expect) != 0)
        return CWC_USAGE;
    r.expect = opt.expect ? &expect : NULL;
    if (find_backend(&opt, backend, &r) != 0) {
        cwc_free_expectations(&expect);
        return CWC_USAGE;
    }
    cwc_backend = r.backend;
    cwc_settle_memory_limit(); /* after the load: a candidate may bring a sanitizer */
    cwc_allocator_perturb();
    cwc_become_subreaper();
    rc = run_and_report(&opt, &r);
    cwc_free_expectations(&expect);
    return rc;
}
