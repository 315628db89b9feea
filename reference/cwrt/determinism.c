/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * determinism.c - the determinism check (cwrt/determinism.h): the first
 * run keeps, for each event, the digest once the event is in it and a
 * short text of the event; the second compares its digests as it goes and
 * describes its own event where the first difference is. The digest chains
 * every event before it, so the first index whose digests differ is the
 * first event that differs.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/ext.h"
#include "cwrt/determinism.h"

enum { TEXT = 320, SHOWN = 48 };

typedef struct kept {
    uint8_t digest[32];
    cw_time time;
    char *text;
} kept;

typedef struct recording {
    kept *ev;
    size_t n, cap;
    bool nomem;
} recording;

typedef struct comparing {
    const recording *first;
    uint64_t n;
    bool parted;
    uint64_t index;
    cw_time time;
    char text[TEXT];
} comparing;

/* `e` as text into out[TEXT]. */
static void describe(const cw_event *e, char *out)
{
    size_t at = (size_t)snprintf(out, TEXT, "%s", e->label);
    for (size_t i = 0; i < e->nfields && at < TEXT; i++) {
        const uint8_t *b = e->fields[i].data;
        at += (size_t)snprintf(out + at, TEXT - at, " [%zu] ", e->fields[i].len);
        for (size_t k = 0; k < e->fields[i].len && k < SHOWN && at < TEXT; k++)
            at += (size_t)snprintf(out + at, TEXT - at, "%02x", b[k]);
        if (e->fields[i].len > SHOWN && at < TEXT)
            at += (size_t)snprintf(out + at, TEXT - at, "..");
    }
}

static void keep(void *arg, const cw_event *e)
{
    recording *r = arg;
    if (r->nomem)
        return;
    if (!cw_grow(&r->ev, &r->cap, r->n + 1, sizeof *r->ev, 1024)) {
        r->nomem = true;
        return;
    }
    char text[TEXT];
    describe(e, text);
    kept *k = &r->ev[r->n];
    k->text = strdup(text);
    r->nomem = !k->text;
    memcpy(k->digest, e->digest, sizeof k->digest);
    k->time = e->time;
    r->n += !r->nomem;
}

static void compare(void *arg, const cw_event *e)
{
    comparing *c = arg;
    uint64_t i = c->n++;
    if (c->parted)
        return;
    if (i < c->first->n && memcmp(c->first->ev[i].digest, e->digest, 32) == 0)
        return;
    c->parted = true;
    c->index = i;
    c->time = e->time;
    describe(e, c->text);
}

static void recording_free(recording *r)
{
    for (size_t i = 0; i < r->n; i++)
        free(r->ev[i].text);
    free(r->ev);
}

static int run_logged(const cw_backend *b, cw_config cfg, cw_event_fn fn, void *arg,
                      cw_task_fn root, void *root_arg, cw_run_result *res)
{
    cfg.event_log = fn;
    cfg.event_log_arg = arg;
    return cw_start(b, &cfg, root, root_arg, res);
}

/* The first run's side of the report at `index`. */
static void first_side(const recording *r, uint64_t index, cw_divergence *out)
{
    if (index < r->n) {
        snprintf(out->event[0], sizeof out->event[0], "%s", r->ev[index].text);
        out->time[0] = r->ev[index].time;
    } else {
        snprintf(out->event[0], sizeof out->event[0], "(none: the run ended)");
    }
}

static void report(const recording *r, const comparing *c, cw_divergence *out)
{
    out->events[0] = r->n;
    out->events[1] = c->n;
    out->diverged = c->parted || r->n != c->n;
    if (!out->diverged)
        return;
    out->index = c->parted ? c->index : c->n;
    first_side(r, out->index, out);
    if (c->parted) {
        snprintf(out->event[1], sizeof out->event[1], "%s", c->text);
        out->time[1] = c->time;
    } else {
        snprintf(out->event[1], sizeof out->event[1], "(none: the run ended)");
    }
}

int cw_check_determinism(const cw_backend *b, const cw_config *cfg, cw_task_fn root, void *arg,
                         cw_divergence *out)
{
    memset(out, 0, sizeof *out);
    cw_config c;
    if (cfg)
        c = *cfg;
    else
        cw_config_default(&c);
    if (!(b->capabilities & CW_CAP_DETERMINISTIC) || !c.audit || c.event_log)
        return CW_ERR_UNSUPPORTED;
    recording r = {0};
    comparing cmp = {.first = &r};
    cw_run_result res;
    out->status[0] = run_logged(b, c, keep, &r, root, arg, &res);
    memcpy(out->digest[0], res.digest, sizeof out->digest[0]);
    out->status[1] = run_logged(b, c, compare, &cmp, root, arg, &res);
    memcpy(out->digest[1], res.digest, sizeof out->digest[1]);
    int rc = r.nomem ? CW_ERR_NOMEM : CW_OK;
    if (rc == CW_OK)
        report(&r, &cmp, out);
    recording_free(&r);
    return rc;
}
