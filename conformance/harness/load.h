/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * load.h - finding the backend under test: a reference backend by name, or
 * a shared object exporting cw_backend_entry.
 */
#ifndef CWC_LOAD_H
#define CWC_LOAD_H

#include <limits.h>
#include <stddef.h>

#include "cw/backend.h"

typedef struct cwc_loaded {
    const cw_backend *backend;
    char path[4096]; /* the shared object's path, "" for a backend by name */
    char sha256[65]; /* of that file's bytes, as dlopen read them */
} cwc_loaded;

/* A spec naming a shared object: it holds a '/' or ends in ".so" (or
 * ".so.N..."); anything else is a backend name. */
int cwc_is_shared_object(const char *spec);
/* Load `spec` into `out`; -1 with a message in `why` on failure. The shared
 * object stays loaded until the process ends. */
int cwc_load_backend(const char *spec, cwc_loaded *out, char *why, size_t whylen);
/* Refuse a table the suite cannot use (ABI major, size). */
int cwc_check_abi(const cw_backend *b, char *why, size_t whylen);

#endif
