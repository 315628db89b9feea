/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * ext.c - the extension interface (ext.h) where it is more than a call
 * into another file of the core: the run's configuration and tables as a
 * subsystem reads them, run-scoped slots and their close hooks, the
 * scheduler's clock, alarms and random stream, and audit events.
 */
#include "core/internal.h"

const cw_config *cw_rt_config(const cw_rt *rt)
{
    return &rt->cfg;
}

const cw_backend *cw_rt_backend(const cw_rt *rt)
{
    return rt->backend;
}

cw_bufpool *cw_rt_pool(const cw_rt *rt, int which)
{
    return rt->pools[which];
}

cw_task *cw_rt_root(const cw_rt *rt)
{
    return rt->root;
}

/* ---- Slots ------------------------------------------------------------------------ */

void *cw_ext_state(const cw_rt *rt, cw_ext_id id)
{
    return rt->ext[id].state;
}

void cw_ext_attach(cw_rt *rt, cw_ext_id id, void *state, void (*close)(cw_rt *rt, void *state))
{
    if (rt->ext[id].state)
        cw_fatal("run-scoped slot %d attached twice", (int)id);
    rt->ext[id].state = state;
    rt->ext[id].close = close;
}

void cw_ext_close(cw_rt *rt, cw_ext_id id)
{
    cw_ext_slot *slot = &rt->ext[id];
    if (!slot->state)
        return;
    /* The state stays in its slot while the hook runs: what the hook
     * closes may still look it up. */
    if (slot->close)
        slot->close(rt, slot->state);
    slot->state = NULL;
}

void cw_ext_set_driver(cw_rt *rt, cw_ext_id id, const void *driver)
{
    rt->ext[id].driver = driver;
}

const void *cw_ext_driver(const cw_rt *rt, cw_ext_id id)
{
    return rt->ext[id].driver;
}

/* ---- The scheduler ---------------------------------------------------------------- */

cw_time cw_rt_now(cw_rt *rt)
{
    return rt->sched->now(rt);
}

uint64_t cw_rt_draw(cw_rt *rt)
{
    return rt->sched->draw(rt);
}

bool cw_rt_chance(cw_rt *rt, cw_rate r)
{
    if (r.num == 0)
        return false;
    if (r.num >= r.den)
        return true;
    return cw_rt_draw(rt) % r.den < r.num;
}

bool cw_rt_alarm_arm(cw_rt *rt, cw_wait *w, cw_task *t)
{
    return rt->sched->alarm_arm(rt, w, t);
}

bool cw_rt_alarm_reserve(cw_rt *rt)
{
    return rt->sched->alarm_reserve(rt);
}

void cw_rt_alarm_unreserve(cw_rt *rt)
{
    rt->sched->alarm_unreserve(rt);
}

void cw_rt_alarm_disarm(cw_rt *rt, cw_wait *w)
{
    rt->sched->alarm_disarm(rt, w);
}

/* ---- Audit ---------------------------------------------------------------------- */

bool cw_audited(const cw_rt *rt)
{
    return rt->sched->audit && rt->cfg.audit;
}

void cw_audit(cw_rt *rt, const char *label, const cw_field *fields, size_t n)
{
    if (cw_audited(rt))
        rt->sched->audit(rt, label, fields, n);
}
