/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cwrt/determinism.h - run a program twice under one seed and say where
 * the two runs parted, if they did (spec/11-deterministic.md, DET-016).
 *
 * A deterministic backend makes a program's run a function of its seed,
 * unless the program itself looks elsewhere: the wall clock, a global
 * left over from an earlier run, an address, a thread of its own. Two
 * digests that differ only say that something did; the event log says
 * which event was the first to differ, and what each run recorded there.
 */
#ifndef CWRT_DETERMINISM_H
#define CWRT_DETERMINISM_H

#include <stdbool.h>
#include <stdint.h>

#include "cw/cw.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How two runs compare. An event is shown as its label, then each field in
 * hex (cut after 48 bytes, with its length), e.g.
 * "process_task [16] 00..03 [4] 'leaf'"; "(none: the run ended)" when one
 * run recorded fewer events. */
typedef struct cw_divergence {
    bool diverged;      /* the logs differ */
    uint64_t index;     /* the first event that differs */
    uint64_t events[2]; /* each run's number of events */
    cw_time time[2];    /* each run's clock at that event */
    char event[2][320]; /* each run's event at `index` */
    char digest[2][65]; /* each run's final digest */
    int status[2];      /* each run's cw_start status */
} cw_divergence;

/* Run root(ctx, arg) twice on `b` with `cfg` (NULL: the defaults) and
 * compare the runs event by event. CW_OK with out->diverged telling;
 * CW_ERR_UNSUPPORTED when `b` is not deterministic or cfg has audit off;
 * CW_ERR_NOMEM. cfg->event_log is used for the comparison and must be
 * NULL. The first run's events are kept (about 170 bytes each). */
CW_EXTERN int cw_check_determinism(const cw_backend *b, const cw_config *cfg, cw_task_fn root,
                                   void *arg, cw_divergence *out);

#ifdef __cplusplus
}
#endif
#endif
