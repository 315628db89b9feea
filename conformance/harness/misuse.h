/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * misuse.h - what the suite sees a backend do with the C library that the
 * C and POSIX standards leave undefined (ABI-005): the checks of locks.c,
 * made in every case, report here.
 *
 * A misuse seen ends the case's process at once (abort), as the harm it
 * does may show much later or never: its text goes to the standard error
 * stream and into a page the harness reads once the case has ended, where
 * it becomes the case's reason for failing.
 */
#ifndef CWC_MISUSE_H
#define CWC_MISUSE_H

#include <stdbool.h>

/* Before a case: a page of this process's own for the case's text, empty
 * (made on the first call; a job process has its own, so cases that run
 * side by side do not share one). */
void cwc_misuse_arm(void);

/* Whether the checks of locks.c are made (cwc_misuse_arm calls it, so
 * that a program linking the suite's library links them): false in a
 * build that leaves them out. */
bool cwc_locks_watch(void);

/* The text of the misuse the last case's processes saw, or NULL. */
const char *cwc_misuse_seen(void);

/* Report a misuse `fmt` (printf's form, 400 bytes at most) and end the
 * process with SIGABRT. Callable from any thread of the backend. */
_Noreturn void cwc_misuse(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif
