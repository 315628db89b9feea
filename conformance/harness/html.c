/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * html.c - the HTML report (--html): the run as one page a person opens in
 * a browser or attaches to a CI job, where the JSON is for programs. The
 * page stands alone: its CSS is inline, it has no script and fetches
 * nothing, so that it reads the same offline, from an artefact store or
 * under a strict Content-Security-Policy.
 *
 * It shows the run's identity and verdict, the state of each profile
 * (state.c), each failure with its message and the words of every rule its
 * case checks (quoted from spec/, ci/extract-reqs.sh), every requirement
 * with its status and text, and every case.
 *
 * Everything written into the page - the candidate's name and path and a
 * failure's message, which may quote the candidate, and the spec's text
 * too - is made valid UTF-8 (controls become U+FFFD) and escaped
 * (&, <, >, both quotes), so that no string can open an element, end one
 * or leave an attribute.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness/report.h"
#include "harness/suiteinfo.h"
#include "harness/text.h"

typedef struct html {
    FILE *f;
    int nomem; /* a string could not be cleaned: the page is not written */
} html;

/* `s` as text of the page: valid UTF-8, escaped. */
static void put(html *h, const char *s)
{
    size_t len = strlen(s) * 3 + 1; /* each byte may become U+FFFD */
    char *clean = malloc(len);
    if (!clean) {
        h->nomem = 1;
        return;
    }
    cwc_xml_escape(h->f, cwc_clean_utf8(s, 0, clean, len));
    free(clean);
}

/* <tag class="..">text</tag>, the text escaped. */
static void element(html *h, const char *tag, const char *cls, const char *text)
{
    fprintf(h->f, "<%s%s%s%s>", tag, cls ? " class=\"" : "", cls ? cls : "", cls ? "\"" : "");
    put(h, text);
    fprintf(h->f, "</%s>", tag);
}

static const char style[] =
    "body{font:15px/1.45 system-ui,sans-serif;margin:2em auto;max-width:76em;padding:0 1em;"
    "color:#1d1d1f}\n"
    "h1{font-size:1.6em}h2{margin-top:2em;border-bottom:1px solid #ccc}\n"
    "table{border-collapse:collapse;width:100%}th,td{text-align:left;vertical-align:top;"
    "padding:.25em .5em;border-bottom:1px solid #eee;overflow-wrap:anywhere}\n"
    "th{background:#f4f4f6}td.num{text-align:right;font-variant-numeric:tabular-nums}\n"
    "code,pre,.id{font-family:ui-monospace,monospace;font-size:.92em}\n"
    "pre{white-space:pre-wrap;background:#fff4f4;border-left:4px solid #c62828;padding:.5em}\n"
    ".verdict{font-size:1.3em;font-weight:bold;padding:.4em .8em;display:inline-block}\n"
    ".v-conformant{background:#e6f4ea;color:#1b5e20}.v-not-conformant{background:#fdecea;"
    "color:#b71c1c}.v-partial{background:#fff8e1;color:#8d6e00}\n"
    ".s-pass,.s-certified,.s-passed{color:#1b5e20}.s-fail,.s-timeout,.s-failed{color:#b71c1c;"
    "font-weight:bold}.s-incomplete,.s-not-run,.s-uncovered{color:#8d6e00}\n"
    ".s-not-applicable,.s-not-declared,.s-not-selected{color:#777}\n"
    "article.failure{margin:1em 0;padding:.5em 1em;border:1px solid #f3c2c2}\n"
    "dl.rules dt{font-weight:bold}dl.rules dd{margin:0 0 .5em 1.5em}\n";

/* A status or state ("not_run", "not run", "n/a") as a class name of the
 * style above: "s-not-run", "s-not-applicable". */
static void status_class(html *h, const char *key)
{
    fputs("s-", h->f);
    for (const char *p = strcmp(key, "n/a") ? key : "not applicable"; *p; p++)
        fputc(*p == '_' || *p == ' ' ? '-' : *p, h->f);
}

static void head(html *h, const cwc_report *r)
{
    fputs("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
          "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n<title>",
          h->f);
    fputs("cwrt conformance: ", h->f);
    put(h, r->backend->name);
    fputs(": ", h->f);
    put(h, cwc_verdict_name(r->verdict));
    fprintf(h->f, "</title>\n<style>\n%s</style>\n</head>\n<body>\n", style);
}

static void verdict(html *h, const cwc_report *r)
{
    static const char *const classes[] = {"v-conformant", "v-not-conformant", "", "v-partial"};
    char text[sizeof r->partial_why + 64], profiles[256];
    cwc_profiles_text(r->selected, " ", profiles, sizeof profiles);
    if (r->verdict == CWC_CONFORMANT)
        snprintf(text, sizeof text, "CONFORMANT for profiles %s", profiles);
    else if (r->verdict == CWC_PARTIAL)
        snprintf(text, sizeof text, "PARTIAL (%s): no certificate", r->partial_why);
    else
        snprintf(text, sizeof text, "NOT CONFORMANT (%zu failed, %zu timed out)",
                 r->counts[CWC_FAIL], r->counts[CWC_TIMEOUT]);
    fprintf(h->f, "<p id=\"verdict\" class=\"verdict %s\">", classes[r->verdict]);
    put(h, text);
    fputs("</p>\n", h->f);
}

static void row(html *h, const char *name, const char *value)
{
    fputs("<tr>", h->f);
    element(h, "th", NULL, name);
    element(h, "td", NULL, value);
    fputs("</tr>\n", h->f);
}

static void identity(html *h, const cwc_report *r)
{
    char text[768], when[32], caps[128], power[128];
    cwc_caps_text(r->backend->capabilities, caps, sizeof caps);
    fputs("<table id=\"identity\">\n", h->f);
    row(h, "backend", r->backend->name);
    snprintf(text, sizeof text, "ABI %u.%u; capabilities: %s",
             CW_ABI_MAJOR(r->backend->abi_version), r->backend->abi_version & 0xffff,
             caps[0] ? caps : "none");
    row(h, "interface", text);
    if (r->path) {
        snprintf(text, sizeof text, "%s (sha256 %s)", r->path, r->so_sha256);
        row(h, "object", text);
    }
    cwc_profiles_text(r->declared, " ", text, sizeof text);
    row(h, "declares", text);
    snprintf(text, sizeof text, "%s (sha256 %s)", cwc_spec_version(), cwc_spec_sha256());
    row(h, "spec", text);
    snprintf(text, sizeof text, "%s, seed %llu, timeout %u s per case x time scale %.2f",
             CWC_SUITE_VERSION, (unsigned long long)cwc_seed, r->timeout, cwc_time_scale);
    row(h, "suite", text);
    cwc_power_text(power, sizeof power);
    row(h, "suite power", power);
    cwc_timestamp(r->started, when);
    snprintf(text, sizeof text, "%s (%.1f s)", when, r->seconds);
    row(h, "date", text);
    snprintf(text, sizeof text,
             "%zu passed, %zu failed, %zu timed out, %zu not applicable, %zu not run",
             r->counts[CWC_PASS], r->counts[CWC_FAIL], r->counts[CWC_TIMEOUT], r->counts[CWC_NA],
             r->counts[CWC_NOT_RUN]);
    row(h, "cases", text);
    fputs("</table>\n", h->f);
}

static void profile_row(html *h, const cwc_report *r, int p)
{
    size_t counts[CWC_NSTATUS] = {0};
    for (size_t i = 0; i < r->n; i++)
        if (cwc_case_profile(r->results[i].c) == p)
            counts[r->results[i].status]++;
    enum cwc_profile_state s = cwc_report_profile_state(r, p);
    fprintf(h->f, "<tr id=\"profile-%s\" class=\"profile\"><td class=\"id\">%s</td><td class=\"",
            cwc_profile_name(p), cwc_profile_name(p));
    status_class(h, cwc_profile_state_key(s));
    fputs("\" data-state=\"", h->f);
    put(h, cwc_profile_state_key(s));
    fputs("\">", h->f);
    put(h, cwc_profile_state_text(s));
    fputs("</td>", h->f);
    for (int k = 0; k < CWC_NSTATUS; k++)
        fprintf(h->f, "<td class=\"num\">%zu</td>", counts[k]);
    fputs("</tr>\n", h->f);
}

static void profiles(html *h, const cwc_report *r)
{
    fputs("<section id=\"profiles\">\n<h2>Profiles</h2>\n<table>\n<thead><tr><th>profile</th>"
          "<th>state</th><th>passed</th><th>failed</th><th>timed out</th>"
          "<th>not applicable</th><th>not run</th></tr></thead>\n<tbody>\n",
          h->f);
    for (int p = 0; p < CWC_NPROFILES; p++)
        profile_row(h, r, p);
    fputs("</tbody>\n</table>\n</section>\n", h->f);
}

static const cwc_req *find_req(const char *id)
{
    for (size_t i = 0; i < cwc_nrequirements; i++)
        if (!strcmp(cwc_requirements[i].id, id))
            return &cwc_requirements[i];
    return NULL;
}

/* The rules a case checks, each with its words. */
static void rules(html *h, const cwc_case *c)
{
    char id[64];
    fputs("<dl class=\"rules\">\n", h->f);
    for (const char *p = c->reqs; *p;) {
        size_t n = strcspn(p, " ");
        snprintf(id, sizeof id, "%.*s", (int)n, p);
        p += n + (p[n] != '\0');
        if (!n)
            continue;
        const cwc_req *q = find_req(id);
        element(h, "dt", "id", id);
        element(h, "dd", NULL, q ? q->text : "(not a rule of this spec)");
        fputc('\n', h->f);
    }
    fputs("</dl>\n", h->f);
}

static void failure(html *h, const cwc_result *x)
{
    int timeout = x->status == CWC_TIMEOUT;
    fprintf(h->f, "<article class=\"failure\" id=\"failure-");
    put(h, x->c->name);
    fputs("\">\n", h->f);
    element(h, "h3", "id", x->c->name);
    fprintf(h->f, "\n<p>profile %s, group ", cwc_profile_name(cwc_case_profile(x->c)));
    put(h, x->c->group);
    fprintf(h->f, ": <span class=\"s-%s\">%s</span> after %.3f s</p>\n",
            timeout ? "timeout" : "fail", timeout ? "timed out" : "failed", x->seconds);
    element(h, "pre", "message", x->reason);
    fputc('\n', h->f);
    rules(h, x->c);
    fputs("</article>\n", h->f);
}

static void failures(html *h, const cwc_report *r)
{
    size_t n = r->counts[CWC_FAIL] + r->counts[CWC_TIMEOUT];
    fprintf(h->f, "<section id=\"failures\">\n<h2>Failures (%zu)</h2>\n", n);
    if (!n)
        fputs("<p>None.</p>\n", h->f);
    for (size_t i = 0; i < r->n; i++)
        if (r->results[i].status == CWC_FAIL || r->results[i].status == CWC_TIMEOUT)
            failure(h, &r->results[i]);
    fputs("</section>\n", h->f);
}

static void requirement_row(html *h, const cwc_report *r, const cwc_req *q)
{
    const char *status = cwc_req_status(r, q->id);
    fprintf(h->f, "<tr id=\"req-%s\"><td class=\"id\">%s</td><td>%s</td><td class=\"", q->id, q->id,
            cwc_profile_name(cwc_req_profile(q->id)));
    status_class(h, status);
    fprintf(h->f, "\">%s</td><td class=\"id\">", status);
    const char *sep = "";
    for (const cwc_case *c = cwc_cases(); c; c = c->next)
        if (cwc_has_req(c->reqs, q->id)) {
            fputs(sep, h->f);
            put(h, c->name);
            sep = " ";
        }
    fputs("</td>", h->f);
    element(h, "td", NULL, q->text);
    fputs("</tr>\n", h->f);
}

static void requirements(html *h, const cwc_report *r)
{
    fputs("<section id=\"requirements\">\n<h2>Requirements</h2>\n<table>\n<thead><tr><th>rule</th>"
          "<th>profile</th><th>status</th><th>cases</th><th>text</th></tr></thead>\n<tbody>\n",
          h->f);
    for (size_t i = 0; i < cwc_nrequirements; i++)
        requirement_row(h, r, &cwc_requirements[i]);
    fputs("</tbody>\n</table>\n</section>\n", h->f);
}

static void case_row(html *h, const cwc_result *x)
{
    const char *status = cwc_status_name(x->status);
    fputs("<tr><td class=\"id\">", h->f);
    put(h, x->c->name);
    fprintf(h->f, "</td><td>%s</td><td>", cwc_profile_name(cwc_case_profile(x->c)));
    put(h, x->c->group);
    fputs("</td><td class=\"", h->f);
    status_class(h, status);
    fprintf(h->f, "\">%s</td><td class=\"num\">%.3f</td>", status, x->seconds);
    element(h, "td", NULL, x->reason);
    fputs("</tr>\n", h->f);
}

static void cases(html *h, const cwc_report *r)
{
    fputs("<section id=\"cases\">\n<h2>Cases</h2>\n<table>\n<thead><tr><th>case</th>"
          "<th>profile</th><th>group</th><th>status</th><th>seconds</th><th>reason</th></tr>"
          "</thead>\n<tbody>\n",
          h->f);
    for (size_t i = 0; i < r->n; i++)
        case_row(h, &r->results[i]);
    fputs("</tbody>\n</table>\n</section>\n", h->f);
}

int cwc_write_html(const char *path, const cwc_report *r)
{
    html h = {.f = fopen(path, "w")};
    if (!h.f) {
        perror(path);
        return -1;
    }
    head(&h, r);
    fputs("<header>\n<h1>cwrt conformance report</h1>\n", h.f);
    verdict(&h, r);
    identity(&h, r);
    fputs("</header>\n<main>\n", h.f);
    profiles(&h, r);
    failures(&h, r);
    requirements(&h, r);
    cases(&h, r);
    fprintf(h.f, "</main>\n<footer><p>cw-conformance %s</p></footer>\n</body>\n</html>\n",
            CWC_SUITE_VERSION);
    if (ferror(h.f) | fclose(h.f) | h.nomem) {
        fprintf(stderr, "cw-conformance: cannot write %s%s\n", path,
                h.nomem ? " (out of memory)" : "");
        return -1;
    }
    return 0;
}
