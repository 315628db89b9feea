/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * alloc_fail.h - make the reference's N-th allocation fail (alloc_fail.c).
 */
#ifndef CW_TESTS_ALLOC_FAIL_H
#define CW_TESTS_ALLOC_FAIL_H

#include <stdbool.h>

/* Count from zero again; the n-th allocation from now fails (n = 0: none),
 * and with `and_after` every one after it too. */
void cw_alloc_fail_arm(long n, bool and_after);
/* Allocations counted since the last arm, and how many of them failed. */
long cw_alloc_count(void);
long cw_alloc_failed(void);
/* Where the first failed allocation was asked for, as a number equal for
 * equal places (its three innermost callers); 0 when none failed. */
unsigned long cw_alloc_failed_site(void);

#endif
