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
/* Erase the line and free `p`. NULL-safe. */
void cwc_progress_stop(cwc_progress *p);

#endif
