/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * recover.c - crash and recovery: what a deterministic run leaves behind
 * when it ends as if its process had crashed, and how the next run picks
 * it up (spec/11-deterministic.md, "Crash and recovery").
 *
 * A crash keeps what a real machine would: the clock goes on, and so do
 * the random stream and the audit chain (so a sequence of runs is one
 * replayable history), the storage keeps what it made durable, and the
 * resolver keeps its names. Everything that lived in the process is gone:
 * tasks, listeners and connections, metrics, the stop signal.
 */
#include <stdlib.h>
#include <string.h>

#include "deterministic/det.h"
#include "storage/storage.h"

struct cw_checkpoint {
    cw_object hdr;
    cw_config cfg;    /* the crashed run's settings, which the next run keeps */
    cw_time now;      /* the clock when it crashed */
    cw_time deadline; /* of the first run's timeout: recoveries do not extend it */
    cw_prng prng;
    uint8_t digest[32];
    cw_mem_image *storage;
    cw_hosts_image *hosts;
};

cw_checkpoint *cw_det_checkpoint_alloc(void)
{
    cw_checkpoint *cp = calloc(1, sizeof *cp);
    cw_mem_image *storage = cw_mem_image_new();
    cw_hosts_image *hosts = cw_hosts_image_new();
    if (!cp || !storage || !hosts) {
        free(cp);
        free(storage);
        free(hosts);
        return NULL;
    }
    cp->storage = storage;
    cp->hosts = hosts;
    return cp;
}

void cw_det_checkpoint_take(cw_det *d, cw_checkpoint *cp)
{
    cp->hdr.backend = d->rt.backend;
    cp->cfg = d->rt.cfg;
    /* Strings the caller owned may be gone by the time of the recovery;
     * the deterministic backend reads neither. */
    cp->cfg.metrics_address = NULL;
    cp->cfg.storage_directory = NULL;
    /* The storage faults in force at the crash, which the next run keeps
     * (STOR-034): cw_storage_set_faults may have changed the run's. */
    const cw_storage *st = cw_ext_state(&d->rt, CW_EXT_STORAGE);
    if (st)
        cp->cfg.storage_faults = st->faults;
    cp->storage = cw_memory_take(&d->rt, cp->storage);
    cp->hosts = cw_hosts_take(&d->rt, cp->hosts);
}

void cw_det_checkpoint_seal(cw_det *d, cw_checkpoint *cp)
{
    cp->now = d->now;
    cp->deadline = d->deadline;
    cp->prng = d->prng;
    memcpy(cp->digest, d->auditor.digest, sizeof cp->digest);
}

const cw_config *cw_det_checkpoint_config(const cw_checkpoint *cp)
{
    return &cp->cfg;
}

void cw_det_resume(cw_det *d, cw_checkpoint *cp)
{
    d->now = cp->now;
    d->deadline = cp->deadline;
    d->prng = cp->prng;
    memcpy(d->auditor.digest, cp->digest, sizeof cp->digest);
    d->inherit_storage = cp->storage;
    d->inherit_hosts = cp->hosts;
    free(cp);
}

void cw_det_checkpoint_free(cw_checkpoint *cp)
{
    cw_mem_image_free(cp->storage);
    cw_hosts_image_free(cp->hosts);
    free(cp);
}
