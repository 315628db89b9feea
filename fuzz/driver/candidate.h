/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * candidate.h - the backend a fuzz target exercises: the reference's
 * deterministic backend, or the one a shared object exports
 * (cw_backend_entry) when CW_FUZZ_BACKEND names it. Every target takes the
 * same variable, so a third party fuzzes its implementation with one line:
 *
 *     CW_FUZZ_BACKEND=./libmine.so fuzz/build/supervision-libfuzzer corpus/supervision
 *
 * `old_name` is a target's former variable (NULL for none), still read.
 * A path that names no backend aborts at once: a fuzzer must not go on
 * testing something else than it was asked to.
 */
#ifndef FUZZ_CANDIDATE_H
#define FUZZ_CANDIDATE_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "cwrt/cwrt.h"

static inline const cw_backend *fuzz_candidate(const char *old_name)
{
    static const cw_backend *b;
    if (b)
        return b;
    const char *path = getenv("CW_FUZZ_BACKEND");
    if ((!path || !path[0]) && old_name)
        path = getenv(old_name);
    if (!path || !path[0])
        return b = cw_backend_deterministic();
    void *so = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    cw_backend_entry_fn entry = so ? (cw_backend_entry_fn)dlsym(so, CW_BACKEND_ENTRY_SYMBOL) : NULL;
    b = entry ? entry() : NULL;
    if (!b) {
        fprintf(stderr, "fuzz: CW_FUZZ_BACKEND=%s names no backend shared object: %s\n", path,
                so ? "no cw_backend_entry" : dlerror());
        abort();
    }
    return b;
}

#endif
