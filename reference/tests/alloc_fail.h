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

#endif
