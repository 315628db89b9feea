/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * sanitizer.c - how the suite wants AddressSanitizer to behave when it is
 * built with it. Some cases ask a backend for more memory than any host
 * has (STOR-006) and require an error code back: a runtime must survive a
 * failed allocation, so the sanitizer's allocator must fail the way libc's
 * does (NULL) instead of ending the process. The environment's
 * ASAN_OPTIONS (TSAN_OPTIONS) still overrides this.
 */
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1";
}

/* The same for ThreadSanitizer, which runs the suite on native backends. */
const char *__tsan_default_options(void);

const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}
