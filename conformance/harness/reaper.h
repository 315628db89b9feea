/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * reaper.h - the processes a case leaves behind (reaper.c).
 */
#ifndef CWC_HARNESS_REAPER_H
#define CWC_HARNESS_REAPER_H

/* Make the harness the subreaper of every process it starts, once. */
void cwc_become_subreaper(void);
/* Kill and reap every process left behind by a case that has ended; how
 * many there were. Only to be called while no case runs. */
int cwc_reap_leftovers(void);

#endif
