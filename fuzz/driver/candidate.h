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
 * testing something else than it was asked to. So does a backend that
 * lacks what the target exercises (FUZZ_TARGET_NEEDS, defined by the
 * target before it includes this file): without it every input would
 * stop at the first call and the fuzzer would spin on nothing.
 *
 * libFuzzer sees the coverage of the candidate's own code only if the
 * candidate is built with -fsanitize=fuzzer-no-link (fuzz/README.md).
 */
#ifndef FUZZ_CANDIDATE_H
#define FUZZ_CANDIDATE_H

#include <dlfcn.h>
#include <stdio.h>
#include <stdlib.h>

#include "cwrt/cwrt.h"

#define FUZZ_NEEDS_BUFFERS 1u
#define FUZZ_NEEDS_STORAGE 2u
#define FUZZ_NEEDS_NETWORK 4u
#define FUZZ_NEEDS_METRICS 8u
#define FUZZ_NEEDS_DETERMINISTIC 16u
#define FUZZ_NEEDS_RECOVER 32u
#define FUZZ_NEEDS_PARALLEL 64u
#define FUZZ_NEEDS_PERSISTENT 128u
#ifndef FUZZ_TARGET_NEEDS
#define FUZZ_TARGET_NEEDS 0u
#endif

/* The first of the target's needs `b` lacks, or NULL. */
static inline const char *fuzz_missing(const cw_backend *b, unsigned needs)
{
    if ((needs & FUZZ_NEEDS_BUFFERS) && !b->buffers)
        return "buffers";
    if ((needs & FUZZ_NEEDS_STORAGE) && !b->storage)
        return "storage";
    if ((needs & FUZZ_NEEDS_NETWORK) && !b->network)
        return "network";
    if ((needs & FUZZ_NEEDS_METRICS) && !b->metrics)
        return "metrics";
    if ((needs & FUZZ_NEEDS_DETERMINISTIC) && !(b->capabilities & CW_CAP_DETERMINISTIC))
        return "deterministic";
    if ((needs & FUZZ_NEEDS_RECOVER) && !(b->capabilities & CW_CAP_RECOVER))
        return "recover";
    if ((needs & FUZZ_NEEDS_PARALLEL) && !(b->capabilities & CW_CAP_PARALLEL))
        return "parallel";
    if ((needs & FUZZ_NEEDS_PERSISTENT) && !(b->capabilities & CW_CAP_PERSISTENT_STORAGE))
        return "persistent-storage";
    return NULL;
}

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
    const char *missing = fuzz_missing(b, FUZZ_TARGET_NEEDS);
    if (missing) {
        fprintf(stderr,
                "fuzz: CW_FUZZ_BACKEND=%s: backend '%s' does not declare the %s profile "
                "this target exercises\n",
                path, b->name, missing);
        abort();
    }
    return b;
}

#endif
