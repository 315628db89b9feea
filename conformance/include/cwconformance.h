/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cwconformance.h - the cwrt conformance suite as a library, for a test
 * binary of one's own: link it (`pkg-config --cflags --libs cwconformance`)
 * and hand it the backend under test.
 *
 *     int main(int argc, char **argv)
 *     {
 *         return cwc_main(argc, argv, my_backend());
 *     }
 *
 * The binary then takes every option of cw-conformance but --backend
 * (`--help` lists them) and exits as it does.
 *
 * The library defines malloc, calloc, realloc, posix_memalign,
 * aligned_alloc and memalign, which pass through to glibc's allocator
 * until a case makes one of them fail on purpose (RUN-007): link no other
 * allocator into the same binary.
 */
#ifndef CWCONFORMANCE_H
#define CWCONFORMANCE_H

#include "cw/backend.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Exit statuses of cwc_main and cw-conformance. */
#define CWC_EXIT_CONFORMANT 0     /* every applicable case of the declared profiles passed */
#define CWC_EXIT_NOT_CONFORMANT 1 /* a case failed or timed out */
#define CWC_EXIT_USAGE 2          /* bad options, or a backend that cannot be used */
#define CWC_EXIT_PARTIAL 3        /* nothing failed, but not every applicable case ran */

/* Run the suite as cw-conformance does, with the options of argv (argv[0]
 * is the program's name). `backend` is the table under test, borrowed for
 * the call; NULL takes it from --backend instead. Prints to stdout and
 * stderr, writes the report files asked for, and returns an exit status.
 * Each case runs in a child process (fork), so call it from a process with
 * one thread. */
int cwc_main(int argc, char **argv, const cw_backend *backend);

#ifdef __cplusplus
}
#endif
#endif
