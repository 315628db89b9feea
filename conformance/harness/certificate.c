/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * certificate.c - the text a person reads: a summary line after every run,
 * and with --certificate the certificate itself.
 */
#include <stdio.h>
#include <string.h>

#include "harness/report.h"
#include "harness/suiteinfo.h"

void cwc_timestamp(time_t t, char out[32])
{
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(out, 32, "unknown");
}

static void print_problems(FILE *f, const cwc_report *r)
{
    for (size_t i = 0; i < r->n; i++) {
        const cwc_result *x = &r->results[i];
        if (x->status == CWC_FAIL)
            fprintf(f, "FAILED:       %s: %s\n", x->c->name, x->reason);
        else if (x->status == CWC_TIMEOUT)
            fprintf(f, "TIMED OUT:    %s: %s\n", x->c->name, x->reason);
    }
}

static void print_verdict(FILE *f, const cwc_report *r)
{
    char profiles[256];
    cwc_profiles_text(r->selected, " ", profiles, sizeof profiles);
    if (r->verdict == CWC_CONFORMANT)
        fprintf(f, "verdict:      CONFORMANT for profiles %s\n", profiles);
    else if (r->verdict == CWC_PARTIAL)
        fprintf(f, "verdict:      PARTIAL (%s): no certificate\n", r->partial_why);
    else
        fprintf(f, "verdict:      NOT CONFORMANT (%zu failed, %zu timed out)\n",
                r->counts[CWC_FAIL], r->counts[CWC_TIMEOUT]);
}

static void print_cases(FILE *f, const cwc_report *r)
{
    fprintf(
        f, "cases:        %zu passed, %zu failed, %zu timed out, %zu not applicable, %zu not run\n",
        r->counts[CWC_PASS], r->counts[CWC_FAIL], r->counts[CWC_TIMEOUT], r->counts[CWC_NA],
        r->counts[CWC_NOT_RUN]);
}

void cwc_print_summary(FILE *f, const cwc_report *r)
{
    print_problems(f, r);
    fprintf(f, "backend:      %s, %.1f s\n", r->backend->name, r->seconds);
    print_cases(f, r);
    print_verdict(f, r);
}

/* Rules of the profiles that this backend's run could not check, because
 * every case of theirs needs a profile it does not declare: a certificate
 * says so rather than count them as passed. */
static void print_unchecked(FILE *f, const cwc_report *r)
{
    int column = 0;
    fputs("unchecked:    ", f);
    for (size_t i = 0; i < cwc_nrequirements; i++) {
        const char *id = cwc_requirements[i].id;
        int p = cwc_req_profile(id);
        if (p < 0 || !(r->selected & ((cwc_profiles)1u << p)) ||
            strcmp(cwc_req_status(r, id), "n/a") != 0)
            continue;
        if (column == 7)
            fputs("\n              ", f), column = 0;
        fprintf(f, "%s%s", column ? " " : "", id);
        column++;
    }
    fputs("\n              (each of their cases needs a profile not declared)\n", f);
}

/* Requirements of the selected profiles, by status. */
static void print_requirements(FILE *f, const cwc_report *r)
{
    size_t total = 0, pass = 0, fail = 0, na = 0, notrun = 0, none = 0;
    for (size_t i = 0; i < cwc_nrequirements; i++) {
        int p = cwc_req_profile(cwc_requirements[i].id);
        if (p < 0 || !(r->selected & ((cwc_profiles)1u << p)))
            continue;
        const char *s = cwc_req_status(r, cwc_requirements[i].id);
        total++;
        pass += !strcmp(s, "pass");
        fail += !strcmp(s, "fail");
        na += !strcmp(s, "n/a");
        notrun += !strcmp(s, "not run");
        none += !strcmp(s, "uncovered");
    }
    fprintf(f,
            "requirements: %zu of the profiles' %zu passed, %zu failed, %zu not applicable, "
            "%zu not run, %zu without a case\n",
            pass, total, fail, na, notrun, none);
    if (na)
        print_unchecked(f, r);
}

static void print_identity(FILE *f, const cwc_report *r)
{
    char caps[128], declared[256], when[32], power[320];
    cwc_caps_text(r->backend->capabilities, caps, sizeof caps);
    cwc_profiles_text(r->declared, " ", declared, sizeof declared);
    cwc_timestamp(r->started, when);
    cwc_power_text(power, sizeof power);
    fprintf(f, "backend:      %s (ABI %u.%u; capabilities: %s)\n", r->backend->name,
            CW_ABI_MAJOR(r->backend->abi_version), r->backend->abi_version & 0xffff,
            caps[0] ? caps : "none");
    if (r->path)
        fprintf(f, "object:       %s (sha256 %s)\n", r->path, r->so_sha256);
    fprintf(f, "declares:     %s\n", declared);
    fprintf(f, "spec:         %s (sha256 %s)\n", cwc_spec_version(), cwc_spec_sha256());
    fprintf(f, "suite:        %s, ABI %u.%u, seed %llu, timeout %u s per case x time scale %.2f\n",
            CWC_SUITE_VERSION, CW_ABI_MAJOR(CW_ABI_VERSION), CW_ABI_VERSION & 0xffff,
            (unsigned long long)cwc_seed, r->timeout, cwc_time_scale);
    if (cwc_memory_limit_mib)
        fprintf(f, "memory:       at most %lu MiB of address space per case\n",
                cwc_memory_limit_mib);
    else
        fprintf(f,
                "memory:       no limit per case (valgrind, a sanitizer, or --memory-limit 0)\n");
    fprintf(f, "suite power:  %s\n", power);
    fprintf(f, "I/O:          %s\n",
            r->each_io ? "storage and network cases run with CW_IO_URING and with CW_IO_THREADS"
                       : "every case run with CW_IO_AUTO");
    fprintf(f, "date:         %s (%.1f s)\n", when, r->seconds);
}

void cwc_print_certificate(FILE *f, const cwc_report *r)
{
    fprintf(f, "\n==== cwrt conformance certificate ====\n");
    print_identity(f, r);
    if (r->filter || r->env_selection[0] || r->selected != r->declared) {
        char selected[256];
        cwc_profiles_text(r->selected, " ", selected, sizeof selected);
        fprintf(f, "selection:    profiles %s%s%s%s%s\n", selected, r->filter ? "; --filter " : "",
                r->filter ? r->filter : "", r->env_selection[0] ? "; " : "", r->env_selection);
    }
    print_cases(f, r);
    print_requirements(f, r);
    print_problems(f, r);
    char certified[256];
    cwc_profiles_text(r->verdict == CWC_CONFORMANT ? r->selected : 0, " ", certified,
                      sizeof certified);
    fprintf(f, "certified:    %s\n", certified);
    print_verdict(f, r);
    fprintf(f, "======================================\n");
}
