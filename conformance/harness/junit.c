/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * junit.c - the JUnit XML report: one <testsuite> per profile, one
 * <testcase> per case of the suite, <failure> for a failure or a timeout,
 * <skipped> for a case not applicable or not run. The run's verdict and
 * identity are <properties> of each suite.
 */
#include <stdio.h>
#include <string.h>

#include "harness/report.h"
#include "harness/suiteinfo.h"
#include "harness/text.h"

static void attr(FILE *f, const char *name, const char *value)
{
    char clean[2048];
    fprintf(f, " %s=\"", name);
    cwc_xml_escape(f, cwc_clean_utf8(value, 0, clean, sizeof clean));
    fputc('"', f);
}

static void property(FILE *f, const char *name, const char *value)
{
    fputs("      <property", f);
    attr(f, "name", name);
    attr(f, "value", value);
    fputs("/>\n", f);
}

static void properties(FILE *f, const cwc_report *r)
{
    char text[256], when[32];
    fputs("    <properties>\n", f);
    property(f, "verdict", cwc_verdict_name(r->verdict));
    cwc_profiles_text(r->verdict == CWC_CONFORMANT ? r->selected : 0, " ", text, sizeof text);
    property(f, "certified", text);
    if (r->verdict == CWC_PARTIAL)
        property(f, "partial_reason", r->partial_why);
    property(f, "backend", r->backend->name);
    if (r->path)
        property(f, "backend_sha256", r->so_sha256);
    cwc_profiles_text(r->selected, " ", text, sizeof text);
    property(f, "profiles", text);
    property(f, "spec_version", cwc_spec_version());
    property(f, "spec_sha256", cwc_spec_sha256());
    property(f, "suite_version", CWC_SUITE_VERSION);
    cwc_timestamp(r->started, when);
    property(f, "timestamp", when);
    fputs("    </properties>\n", f);
}

static void testcase(FILE *f, const cwc_result *x, const char *profile)
{
    char classname[128];
    snprintf(classname, sizeof classname, "cwrt.%s.%s", profile, x->c->group);
    fputs("    <testcase", f);
    attr(f, "name", x->c->name);
    attr(f, "classname", classname);
    fprintf(f, " time=\"%.6f\"", x->seconds);
    if (x->status == CWC_PASS) {
        fputs("/>\n", f);
        return;
    }
    int failed = x->status == CWC_FAIL || x->status == CWC_TIMEOUT;
    fputs(failed ? ">\n      <failure" : ">\n      <skipped", f);
    attr(f, "message", x->reason);
    if (failed)
        attr(f, "type", x->status == CWC_TIMEOUT ? "timeout" : "failure");
    fputs("/>\n    </testcase>\n", f);
}

static void testsuite(FILE *f, const cwc_report *r, int profile)
{
    size_t n = 0, failed = 0, skipped = 0;
    double seconds = 0;
    for (size_t i = 0; i < r->n; i++)
        if (cwc_case_profile(r->results[i].c) == profile) {
            enum cwc_status s = r->results[i].status;
            n++;
            failed += s == CWC_FAIL || s == CWC_TIMEOUT;
            skipped += s == CWC_NA || s == CWC_NOT_RUN;
            seconds += r->results[i].seconds;
        }
    if (!n)
        return;
    char when[32];
    cwc_timestamp(r->started, when);
    fputs("  <testsuite", f);
    attr(f, "name", cwc_profile_name(profile));
    fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" skipped=\"%zu\" time=\"%.6f\"", n,
            failed, skipped, seconds);
    attr(f, "timestamp", when);
    fputs(">\n", f);
    properties(f, r);
    for (size_t i = 0; i < r->n; i++)
        if (cwc_case_profile(r->results[i].c) == profile)
            testcase(f, &r->results[i], cwc_profile_name(profile));
    fputs("  </testsuite>\n", f);
}

int cwc_write_junit(const char *path, const cwc_report *r)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites", f);
    attr(f, "name", "cwrt-conformance");
    /* No `skipped` here: Jenkins' junit-10.xsd, the strictest schema in
     * use, allows it on <testsuite> only. */
    fprintf(f, " tests=\"%zu\" failures=\"%zu\" errors=\"0\" time=\"%.6f\">\n", r->n,
            r->counts[CWC_FAIL] + r->counts[CWC_TIMEOUT], r->seconds);
    for (int p = 0; p < CWC_NPROFILES; p++)
        testsuite(f, r, p);
    fputs("</testsuites>\n", f);
    if (ferror(f) | fclose(f)) {
        fprintf(stderr, "cw-conformance: cannot write %s\n", path);
        return -1;
    }
    return 0;
}
