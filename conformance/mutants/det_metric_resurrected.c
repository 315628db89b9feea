/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/* A metric registered again after its last handle was released comes back
 * with the count it had, instead of a new metric starting at zero
 * (MET-002). */
#define CWM_BASE "deterministic"
#include "mutant.h"

enum { REMEMBERED = 1024 };
static struct {
    const cw_metric *m;
    const cw_ctx *ctx;
    char name[64];
} live[REMEMBERED];
static size_t nlive;
static struct {
    const cw_ctx *ctx;
    char name[64];
    uint64_t count;
} gone[REMEMBERED];
static size_t ngone;

static cw_metric *resurrecting_register(cw_ctx *ctx, const char *name, const char *help,
                                        const cw_metric_type *type)
{
    cw_metric *m = cwm_base_metrics->register_metric(ctx, name, help, type);
    if (!m || strlen(name) >= sizeof live[0].name)
        return m;
    for (size_t i = 0; i < ngone; i++)
        if (gone[i].ctx == ctx && strcmp(gone[i].name, name) == 0 &&
            cwm_base_metrics->counter_get(m) == 0) {
            cwm_base_metrics->counter_add(m, gone[i].count);
            gone[i] = gone[--ngone];
            break;
        }
    if (nlive < REMEMBERED) {
        live[nlive].m = m, live[nlive].ctx = ctx;
        memcpy(live[nlive++].name, name, strlen(name) + 1); /* fits: checked above */
    }
    return m;
}

static void remembering_release(cw_metric *m)
{
    for (size_t i = 0; i < nlive; i++)
        if (live[i].m == m) {
            uint64_t count = cwm_base_metrics->counter_get(m);
            if (count > 0 && ngone < REMEMBERED) {
                gone[ngone].ctx = live[i].ctx, gone[ngone].count = count;
                memcpy(gone[ngone++].name, live[i].name, sizeof live[i].name);
            }
            live[i] = live[--nlive];
            break;
        }
    cwm_base_metrics->release(m);
}

static void mutate(void)
{
    cwm_metrics.register_metric = resurrecting_register;
    cwm_metrics.release = remembering_release;
}
