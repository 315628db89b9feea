/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * derive.c - tables derived from a reference backend (cwrt/derive.h).
 *
 * A start entry is called with no table: cw_start(b, ...) is b->start(cfg,
 * ...). So for the run to know which table to stamp on its objects, each
 * derived table gets start entries of its own: one fixed set of functions
 * per slot, which look up the slot's table and its reference origin. That
 * is the reason for CW_DERIVE_MAX.
 */
#include <pthread.h>

#include "cwrt/derive.h"
#include "cwrt/registry.h"

typedef struct cw_slot {
    const cw_backend *copy; /* NULL when the slot is free */
    const cw_origin *origin;
} cw_slot;

static cw_slot slots[CW_DERIVE_MAX];
static pthread_mutex_t slots_lock = PTHREAD_MUTEX_INITIALIZER;

static cw_slot slot_read(size_t i)
{
    pthread_mutex_lock(&slots_lock);
    cw_slot s = slots[i];
    pthread_mutex_unlock(&slots_lock);
    return s;
}

static int slot_start(size_t i, const cw_config *cfg, cw_task_fn root, void *arg,
                      cw_run_result *out)
{
    cw_slot s = slot_read(i);
    return s.origin->start(s.copy, cfg, root, arg, out);
}

static int slot_start_checkpoint(size_t i, const cw_config *cfg, cw_task_fn root, void *arg,
                                 cw_run_result *out, cw_checkpoint **cp)
{
    cw_slot s = slot_read(i);
    return s.origin->start_checkpoint(s.copy, cfg, root, arg, out, cp);
}

static int slot_recover(size_t i, cw_checkpoint *from, cw_task_fn root, void *arg,
                        cw_run_result *out, cw_checkpoint **cp)
{
    cw_slot s = slot_read(i);
    return s.origin->recover(s.copy, from, root, arg, out, cp);
}

/* clang-format finds no layout of this list that it keeps. */
/* clang-format off */
#define CW_SLOT_LIST(X)                                                                            \
    X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)                                                        \
    X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15)                                                  \
    X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)                                                \
    X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
/* clang-format on */

#define CW_SLOT_ENTRIES(i)                                                                         \
    static int start_##i(const cw_config *cfg, cw_task_fn root, void *arg, cw_run_result *out)     \
    {                                                                                              \
        return slot_start(i, cfg, root, arg, out);                                                 \
    }                                                                                              \
    static int start_checkpoint_##i(const cw_config *cfg, cw_task_fn root, void *arg,              \
                                    cw_run_result *out, cw_checkpoint **cp)                        \
    {                                                                                              \
        return slot_start_checkpoint(i, cfg, root, arg, out, cp);                                  \
    }                                                                                              \
    static int recover_##i(cw_checkpoint *from, cw_task_fn root, void *arg, cw_run_result *out,    \
                           cw_checkpoint **cp)                                                     \
    {                                                                                              \
        return slot_recover(i, from, root, arg, out, cp);                                          \
    }
CW_SLOT_LIST(CW_SLOT_ENTRIES)

typedef struct cw_slot_entries {
    int (*start)(const cw_config *, cw_task_fn, void *, cw_run_result *);
    int (*start_checkpoint)(const cw_config *, cw_task_fn, void *, cw_run_result *,
                            cw_checkpoint **);
    int (*recover)(cw_checkpoint *, cw_task_fn, void *, cw_run_result *, cw_checkpoint **);
} cw_slot_entries;

#define CW_SLOT_ROW(i) {start_##i, start_checkpoint_##i, recover_##i},
static const cw_slot_entries entries[CW_DERIVE_MAX] = {CW_SLOT_LIST(CW_SLOT_ROW)};

_Static_assert(sizeof entries / sizeof entries[0] == CW_DERIVE_MAX,
               "one set of start entries per slot");

/* The slot holding `copy`, or CW_DERIVE_MAX. With slots_lock held. */
static size_t slot_of(const cw_backend *copy)
{
    size_t i = 0;
    while (i < CW_DERIVE_MAX && slots[i].copy != copy)
        i++;
    return i;
}

/* The reference backend `base` is, or is derived from; NULL if neither.
 * With slots_lock held. */
static const cw_origin *origin_of(const cw_backend *base)
{
    for (const cw_origin *const *o = cw_reference_origins; *o; o++)
        if (base == (*o)->table)
            return *o;
    size_t i = slot_of(base);
    return i < CW_DERIVE_MAX ? slots[i].origin : NULL;
}

static void fill(cw_backend *copy, const cw_backend *base, const cw_origin *o, size_t i)
{
    *copy = *base;
    copy->start = entries[i].start;
    copy->start_checkpoint = o->start_checkpoint ? entries[i].start_checkpoint : NULL;
    copy->recover = o->recover ? entries[i].recover : NULL;
}

int cw_backend_derive(const cw_backend *base, cw_backend *copy)
{
    if (!base || !copy)
        return CW_ERR_INVALID;
    pthread_mutex_lock(&slots_lock);
    const cw_origin *o = origin_of(base);
    size_t i = slot_of(copy);
    if (i == CW_DERIVE_MAX)
        i = slot_of(NULL);
    int rc = !o ? CW_ERR_INVALID : i == CW_DERIVE_MAX ? CW_ERR_NOMEM : CW_OK;
    if (rc == CW_OK) {
        slots[i] = (cw_slot){copy, o};
        fill(copy, base, o, i);
    }
    pthread_mutex_unlock(&slots_lock);
    return rc;
}

void cw_backend_underive(cw_backend *copy)
{
    pthread_mutex_lock(&slots_lock);
    size_t i = copy ? slot_of(copy) : CW_DERIVE_MAX;
    if (i < CW_DERIVE_MAX)
        slots[i] = (cw_slot){NULL, NULL};
    pthread_mutex_unlock(&slots_lock);
}
