/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * progress.h - a progress line on a terminal while the suite runs.
 */
#ifndef CWC_PROGRESS_H
#define CWC_PROGRESS_H

#include <stddef.h>

typedef struct cwc_progress cwc_progress;

/* Start drawing "case n of total" on stderr, or return NULL (and draw
 * nothing) when stderr is not a terminal. The caller owns the result and
 * ends it with cwc_progress_stop. */
cwc_progress *cwc_progress_start(size_t total);
/* The next case begins. `name` must live until the next call. NULL-safe. */
void cwc_progress_case(cwc_progress *p, const char *name);
/* With --jobs: `started` cases so far, `running` of them now, the one
 * running longest `oldest` (which must live until the next call), since
 * `since` (seconds of CLOCK_MONOTONIC). NULL-safe. */
void cwc_progress_jobs(cwc_progress *p, size_t started, size_t running, const char *oldest,
                       double since);
/* Erase the line and free `p`. NULL-safe. */
void cwc_progress_stop(cwc_progress *p);

#endif
