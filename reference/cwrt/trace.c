/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * trace.c - Chrome Trace Event JSON from the event log (cwrt/trace.h).
 *
 * A `process_task` event says a task resumes, so it ends the slice of the
 * task that ran before and begins one on its own track; every other event
 * is an instant on the track of the task running. The first resumption of
 * a task also names its track ("label#id", "root#0" for the root).
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "core/ext.h"
#include "cwrt/trace.h"

enum { SHOWN = 32 }; /* bytes of a field shown in an instant's arguments */

struct cw_trace {
    FILE *out;
    bool first;      /* no event written yet: no comma before the next */
    bool running;    /* a slice is open */
    uint64_t task;   /* the task of the open slice, or of the last resumption */
    cw_time last;    /* the virtual time of the last event */
    double last_ts;  /* the timestamp written for the last event */
    uint64_t step;   /* events so far at `last`, spread 1 ns apart */
    uint64_t *named; /* tasks whose track has a name, sorted */
    size_t nnamed, cap;
    bool failed;
};

cw_trace *cw_trace_open(FILE *out)
{
    cw_trace *t = calloc(1, sizeof *t);
    if (!t)
        return NULL;
    t->out = out;
    t->first = true;
    t->failed = fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[\n", out) < 0;
    return t;
}

/* The timestamp of an event at `time`, in microseconds. */
static double stamp(cw_trace *t, cw_time time)
{
    if (time != t->last || t->first) {
        t->last = time;
        t->step = 0;
    }
    t->last_ts = (double)time / 1000.0 + (double)t->step++ / 1000.0;
    return t->last_ts;
}

static void begin_record(cw_trace *t)
{
    if (!t->first && fputs(",\n", t->out) < 0)
        t->failed = true;
    t->first = false;
}

/* A JSON string of `len` bytes: printable ASCII as is, the rest escaped. */
static void put_string(cw_trace *t, const char *s, size_t len)
{
    fputc('"', t->out);
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == '"' || c == '\\')
            fprintf(t->out, "\\%c", c);
        else if (c < 0x20 || c >= 0x7f)
            fprintf(t->out, "\\u%04x", c);
        else
            fputc(c, t->out);
    }
    fputc('"', t->out);
}

/* A task's id from its event's first field (16 bytes big-endian). */
static uint64_t task_id(const cw_event *e)
{
    uint64_t id = 0;
    const uint8_t *b = e->fields[0].data;
    for (size_t i = 8; i < 16 && e->fields[0].len == 16; i++)
        id = id << 8 | b[i];
    return id;
}

static int id_cmp(const void *key, const void *elem)
{
    uint64_t a = *(const uint64_t *)key, b = *(const uint64_t *)elem;
    return (a > b) - (a < b);
}

/* True the first time `id` is seen (kept sorted for a binary search). */
static bool first_sight(cw_trace *t, uint64_t id)
{
    bool found;
    size_t at = cw_sorted_find(t->named, t->nnamed, sizeof *t->named, &id, id_cmp, &found);
    if (found)
        return false;
    if (!cw_sorted_insert(&t->named, &t->nnamed, &t->cap, sizeof *t->named, at, &id)) {
        t->failed = true;
        return false; /* the track goes unnamed; the trace is still valid */
    }
    return true;
}

static void name_track(cw_trace *t, uint64_t id, const cw_event *e)
{
    begin_record(t);
    fprintf(t->out,
            "{\"ph\":\"M\",\"name\":\"thread_name\",\"pid\":1,\"tid\":%llu,\"args\":{\"name\":",
            (unsigned long long)id);
    char label[256];
    size_t len = e->fields[1].len < 200 ? e->fields[1].len : 200;
    memcpy(label, e->fields[1].data, len);
    int n = snprintf(label + len, sizeof label - len, "%s#%llu", len ? "" : "root",
                     (unsigned long long)id);
    put_string(t, label, len + (size_t)n);
    fputs("}}", t->out);
}

/* A task's slice ends just after its last event: it suspended then, and
 * the next resumption may come much later on the virtual clock. */
static void slice_end(cw_trace *t)
{
    begin_record(t);
    fprintf(t->out, "{\"ph\":\"E\",\"pid\":1,\"tid\":%llu,\"ts\":%.4f}",
            (unsigned long long)t->task, t->last_ts + 0.0005);
    t->running = false;
}

static void resumed(cw_trace *t, const cw_event *e)
{
    if (t->running)
        slice_end(t);
    double ts = stamp(t, e->time);
    uint64_t id = task_id(e);
    if (e->nfields == 2 && first_sight(t, id))
        name_track(t, id, e);
    begin_record(t);
    fprintf(t->out, "{\"ph\":\"B\",\"name\":\"run\",\"pid\":1,\"tid\":%llu,\"ts\":%.3f}",
            (unsigned long long)id, ts);
    t->task = id;
    t->running = true;
}

static bool printable(const uint8_t *b, size_t len)
{
    for (size_t i = 0; i < len; i++)
        if (b[i] < 0x20 || b[i] > 0x7e)
            return false;
    return len > 0;
}

/* An instant with each field as an argument: text when it is printable,
 * else hex, cut after SHOWN bytes. */
static void instant(cw_trace *t, const cw_event *e)
{
    double ts = stamp(t, e->time);
    begin_record(t);
    fputs("{\"ph\":\"i\",\"s\":\"t\",\"name\":", t->out);
    put_string(t, e->label, strlen(e->label));
    fprintf(t->out, ",\"pid\":1,\"tid\":%llu,\"ts\":%.3f,\"args\":{", (unsigned long long)t->task,
            ts);
    for (size_t i = 0; i < e->nfields; i++) {
        char hex[2 * SHOWN + 3] = ""; /* an empty field stays "" */
        fprintf(t->out, "%s\"f%zu\":", i ? "," : "", i);
        if (printable(e->fields[i].data, e->fields[i].len)) {
            put_string(t, e->fields[i].data, e->fields[i].len);
            continue;
        }
        size_t len = e->fields[i].len < SHOWN ? e->fields[i].len : SHOWN;
        const uint8_t *b = e->fields[i].data;
        size_t at = 0;
        for (size_t k = 0; k < len; k++)
            at += (size_t)snprintf(hex + at, sizeof hex - at, "%02x", b[k]);
        if (e->fields[i].len > SHOWN)
            snprintf(hex + at, sizeof hex - at, "..");
        put_string(t, hex, strlen(hex));
    }
    fputs("}}", t->out);
}

void cw_trace_event(void *trace, const cw_event *event)
{
    cw_trace *t = trace;
    if (strcmp(event->label, "process_task") == 0 && event->nfields >= 1)
        resumed(t, event);
    else
        instant(t, event);
    if (ferror(t->out))
        t->failed = true;
}

int cw_trace_close(cw_trace *t)
{
    if (t->running)
        slice_end(t);
    if (fputs("\n]}\n", t->out) < 0 || fflush(t->out) != 0 || ferror(t->out))
        t->failed = true;
    int rc = t->failed ? -1 : 0;
    free(t->named);
    free(t);
    return rc;
}
