/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * report.c - what a sweep found, as text for a person and as JSON for a
 * CI system that merges the shards' reports. Each failure comes with the
 * one command that replays it on its own.
 */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "sweep.h"

/* Append to buf[*at ..] as snprintf does, keeping *at the length wanted. */
#define PUT(...) (*at += (size_t)snprintf(buf + *at, *at < len ? len - *at : 0, __VA_ARGS__))

static bool shell_plain(const char *s)
{
    static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                               "0123456789_-./=:,+@%";
    return s[0] != '\0' && strspn(s, safe) == strlen(s);
}

/* `s` quoted for a POSIX shell when it needs it: in single quotes, each
 * single quote written as '\''. */
static void put_quoted(char *buf, size_t len, size_t *at, const char *s)
{
    if (shell_plain(s)) {
        PUT("%s", s);
        return;
    }
    PUT("'");
    for (const char *c = s; *c; c++)
        if (*c == '\'')
            PUT("'\\''");
        else
            PUT("%c", *c);
    PUT("'");
}

void cw_sweep_replay(const cw_sweep_plan *p, uint64_t seed, char *buf, size_t len)
{
    char num[24];
    snprintf(num, sizeof num, "%" PRIu64, seed);
    size_t pos = 0, *at = &pos;
    PUT("%s=%s", p->seed_env, num);
    for (char **a = p->argv; *a; a++) {
        char arg[4096];
        const char *mark = strstr(*a, "{seed}");
        if (mark)
            snprintf(arg, sizeof arg, "%.*s%s%s", (int)(mark - *a), *a, num, mark + 6);
        else
            snprintf(arg, sizeof arg, "%s", *a);
        PUT(" ");
        put_quoted(buf, len, at, arg);
    }
}

static const char *how_text(const cw_sweep_failure *f, char *buf, size_t len)
{
    if (f->how == CW_SWEEP_TIMED_OUT)
        snprintf(buf, len, "timed out");
    else if (f->how == CW_SWEEP_SIGNALED)
        snprintf(buf, len, "killed by signal %d (%s)", f->code, strsignal(f->code));
    else
        snprintf(buf, len, "exit status %d", f->code);
    return buf;
}

void cw_sweep_print(const cw_sweep_plan *p, const cw_sweep_report *r, FILE *f)
{
    fprintf(f,
            "cw-sweep: seeds %" PRIu64 "..%" PRIu64 ", shard %" PRIu64 "/%" PRIu64 ": %" PRIu64
            " run, %" PRIu64 " passed, %zu failed%s (%.1f s, %u jobs)\n",
            p->first, p->end, p->shard_k, p->shard_n, r->ran, r->passed, r->nfailures,
            r->stopped_early ? ", stopped early" : "", r->seconds, p->jobs);
    for (size_t i = 0; i < r->nfailures; i++) {
        char how[96], replay[8192];
        cw_sweep_replay(p, r->failures[i].seed, replay, sizeof replay);
        fprintf(f, "FAIL seed %" PRIu64 ": %s after %.2f s\n  replay: %s\n", r->failures[i].seed,
                how_text(&r->failures[i], how, sizeof how), r->failures[i].seconds, replay);
        if (p->logs)
            fprintf(f, "  output: %s/seed-%" PRIu64 ".log\n", p->logs, r->failures[i].seed);
    }
}

/* A JSON string: `s` with quotes, backslashes and control bytes escaped. */
static void put_json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(f, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(f, "\\u%04x", *c);
        else
            fputc(*c, f);
    }
    fputc('"', f);
}

static void put_failure(FILE *f, const cw_sweep_plan *p, const cw_sweep_failure *x, bool last)
{
    static const char *const how[] = {"exited", "signaled", "timed_out"};
    char replay[8192];
    cw_sweep_replay(p, x->seed, replay, sizeof replay);
    fprintf(f, "  {\"seed\": %" PRIu64 ", \"outcome\": \"%s\", \"code\": %d, \"seconds\": %.3f, ",
            x->seed, how[x->how], x->code, x->seconds);
    fputs("\"replay\": ", f);
    put_json_string(f, replay);
    fprintf(f, "}%s\n", last ? "" : ",");
}

int cw_sweep_write_json(const cw_sweep_plan *p, const cw_sweep_report *r, const char *path)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        perror(path);
        return -1;
    }
    fprintf(f, "{\"schema\": 1, \"tool\": \"cw-sweep %s\",\n \"program\": [", CW_SWEEP_VERSION);
    for (char **a = p->argv; *a; a++) {
        put_json_string(f, *a);
        fputs(a[1] ? ", " : "", f);
    }
    fprintf(f, "],\n \"seed_env\": ");
    put_json_string(f, p->seed_env);
    fprintf(f,
            ",\n \"first\": %" PRIu64 ", \"end\": %" PRIu64 ", \"shard\": %" PRIu64
            ", \"shards\": %" PRIu64 ",\n \"jobs\": %u, \"timeout\": %u, \"seconds\": %.3f,\n",
            p->first, p->end, p->shard_k, p->shard_n, p->jobs, p->timeout_s, r->seconds);
    fprintf(f,
            " \"ran\": %" PRIu64 ", \"passed\": %" PRIu64 ", \"failed\": %zu, "
            "\"stopped_early\": %s,\n \"failures\": [\n",
            r->ran, r->passed, r->nfailures, r->stopped_early ? "true" : "false");
    for (size_t i = 0; i < r->nfailures; i++)
        put_failure(f, p, &r->failures[i], i + 1 == r->nfailures);
    fputs(" ]}\n", f);
    if (fclose(f) != 0) {
        perror(path);
        return -1;
    }
    return 0;
}
