/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * reaper.h - the processes a case leaves behind (reaper.c).
 */
#ifndef CWC_HARNESS_REAPER_H
#define CWC_HARNESS_REAPER_H

#include <stddef.h>
#include <sys/types.h>

/* Make this process (the harness, or a job's process of --jobs) the
 * subreaper of every process it starts. */
void cwc_become_subreaper(void);
/* Kill and reap every process left behind by a case that has ended; how
 * many there were. Only to be called while no case runs. */
int cwc_reap_leftovers(void);
/* The same, but sparing the children in `keep` (the running jobs of
 * --jobs) and reaping only those killed. */
int cwc_reap_strays(const pid_t *keep, size_t nkeep);

#endif
