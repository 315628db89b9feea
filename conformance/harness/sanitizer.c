/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * sanitizer.c - how the suite wants AddressSanitizer to behave when it is
 * built with it. Some cases ask a backend for more memory than any host
 * has (STOR-006) and require an error code back: a runtime must survive a
 * failed allocation, so the sanitizer's allocator must fail the way libc's
 * does (NULL) instead of ending the process. The environment's
 * ASAN_OPTIONS (TSAN_OPTIONS) still overrides this.
 *
 * intercept_tls_get_addr=0: a backend loaded with dlopen that keeps a
 * _Thread_local gets its block from malloc on first use, through
 * __tls_get_addr. Older AddressSanitizers (GCC 12's) take a block whose
 * address is 16 past a page boundary for one with a glibc header before
 * it, record a size read from the allocator's redzone, and the leak
 * checker at exit then scans that range and dies ("Tracer caught signal
 * 11", exit 1): a right backend refused for where malloc put 8 bytes.
 * Left uninterposed, the block is an ordinary heap block reachable from
 * the thread's DTV, and leaks are still found.
 */
const char *__asan_default_options(void);

const char *__asan_default_options(void)
{
    return "allocator_may_return_null=1:intercept_tls_get_addr=0";
}

/* The same for ThreadSanitizer, which runs the suite on native backends. */
const char *__tsan_default_options(void);

const char *__tsan_default_options(void)
{
    return "allocator_may_return_null=1";
}
