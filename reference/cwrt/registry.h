/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cwrt/registry.h - the reference's backends: the one list of them.
 *
 * Each backend is a folder of reference/ named as the backend, which
 * defines `cw_<name>_origin` (core/sched.h's cw_origin: its table and its
 * start entries). Everything that knows the backends reads this list:
 * cw_backend_by_name and the derived tables here, and, with sed, the
 * Makefile (BACKENDS), ci/layers.sh, ci/negative.sh and ci/mutation/run.py.
 * So a new backend is its folder plus one line below; keep one X(...) a
 * line, with nothing else on it, for those readers.
 */
#ifndef CWRT_REGISTRY_H
#define CWRT_REGISTRY_H

#include "core/sched.h"

#define CW_REFERENCE_BACKENDS(X)                                                                   \
    X(deterministic)                                                                               \
    X(native)

#define CW_ORIGIN_DECLARE(name) extern const cw_origin cw_##name##_origin;
CW_REFERENCE_BACKENDS(CW_ORIGIN_DECLARE)
#undef CW_ORIGIN_DECLARE

/* The origins in the order listed; NULL-terminated. */
extern const cw_origin *const cw_reference_origins[];

#endif
