/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cwrt/trace.h - a deterministic run as a trace a person can open: the
 * Chrome Trace Event format, which Perfetto (ui.perfetto.dev) and
 * chrome://tracing load.
 *
 * The trace is built from the run's event log (DET-016): one track per
 * task, named by its label and id; a slice for each resumption; an instant
 * for every other event (a storage call, a send, a draw...), on the track
 * of the task that made it, with its fields as arguments. Time is the
 * virtual clock in microseconds; the events of one instant of it, which
 * the scheduler runs one after another, are spread a nanosecond apart so
 * their order shows.
 *
 *     FILE *f = fopen("run.json", "w");
 *     cw_trace *t = cw_trace_open(f);
 *     cfg.event_log = cw_trace_event;
 *     cfg.event_log_arg = t;
 *     cw_start(cw_backend_deterministic(), &cfg, root, arg, &res);
 *     cw_trace_close(t);   // ends the JSON; the caller closes f
 */
#ifndef CWRT_TRACE_H
#define CWRT_TRACE_H

#include <stdio.h>

#include "cw/cw.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct cw_trace cw_trace;

/* A trace written to `out`, which stays the caller's. NULL when memory is
 * exhausted. */
CW_EXTERN cw_trace *cw_trace_open(FILE *out);
/* An event_log function (cw_config.event_log) with the trace as its arg. */
CW_EXTERN void cw_trace_event(void *trace, const cw_event *event);
/* End the last slice and the JSON, and free the trace. 0, or -1 when a
 * write to `out` failed at any point. */
CW_EXTERN int cw_trace_close(cw_trace *trace);

#ifdef __cplusplus
}
#endif
#endif
