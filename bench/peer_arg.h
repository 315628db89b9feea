/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * peer_arg.h - the `--peer NAME=PROGRAM` argument of the benchmarks that
 * drive a peer's program (network.c, storage.c), read one way for both.
 */
#ifndef CW_BENCH_PEER_ARG_H
#define CW_BENCH_PEER_ARG_H

#include <stdbool.h>
#include <string.h>

/* Split `spec` at its first '=': *name is a malloc'd copy of what comes
 * before, *program points into `spec` after it. False, with nothing
 * allocated, when either part is empty or memory is exhausted. */
static inline bool cw_peer_arg(const char *spec, char **name, const char **program)
{
    const char *eq = strchr(spec, '=');
    if (!eq || eq == spec || !eq[1])
        return false;
    *name = strndup(spec, (size_t)(eq - spec));
    *program = eq + 1;
    return *name != NULL;
}

#endif
