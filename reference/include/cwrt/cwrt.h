/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cwrt/cwrt.h - the reference implementation's own entry points.
 *
 * Everything else a program uses is the interface of <cw/cw.h>; this header
 * only says where the reference's backends are, and how to derive a table
 * of one's own from one of them (cwrt/derive.h).
 */
#ifndef CWRT_CWRT_H
#define CWRT_CWRT_H

#include "cw/cw.h"
#include "cwrt/derive.h"
#include "cwrt/determinism.h"
#include "cwrt/trace.h"
#include "cwrt/tree.h"

#ifdef __cplusplus
extern "C" {
#endif

/* The single-threaded, seeded, virtual-time backend. Static: never freed. */
CW_EXTERN const cw_backend *cw_backend_deterministic(void);

/* The production backend: worker threads, a blocking pool, dedicated
 * threads, an epoll reactor, the wall clock. Static: never freed. */
CW_EXTERN const cw_backend *cw_backend_native(void);

/* A backend of the reference by name ("deterministic", "native"), or NULL. */
CW_EXTERN const cw_backend *cw_backend_by_name(const char *name);

#ifdef __cplusplus
}
#endif
#endif
