/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * coverage_exit.c - gcov's counts kept by processes that end with _exit.
 *
 * The suite runs much of its work in child processes that end with
 * _exit (the allocation sweep's runs, the cases that watch a backend end
 * its process): _exit skips the atexit handler that writes gcov's counts,
 * so a coverage build would report every line those runs reached as never
 * run. In that build (make VARIANT=coverage, which defines CWC_COVERAGE
 * and links with --wrap=_exit) each _exit of the harness and its cases
 * writes the counts first. Other builds compile nothing here.
 */
#ifdef CWC_COVERAGE
#include <stdnoreturn.h>

void __gcov_dump(void);
noreturn void __real__exit(int status);
noreturn void __wrap__exit(int status);

noreturn void __wrap__exit(int status)
{
    __gcov_dump();
    __real__exit(status);
}
#else
typedef int cwc_coverage_exit_unused; /* ISO C wants a declaration */
#endif
