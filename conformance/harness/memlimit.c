/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * memlimit.c - a ceiling on the memory of each case's process, so that a
 * runaway candidate meets an allocation failure in seconds rather than
 * the machine's OOM killer (or the case's timeout) much later.
 *
 * The ceiling is on address space (RLIMIT_AS), the only limit every Linux
 * enforces without a cgroup: 4 GiB by default (--memory-limit, in MiB;
 * 0 for none). The reference's backends, the skeleton and the Rust backend
 * each pass the whole suite under 2 GiB. The sanitizers map terabytes of
 * shadow memory and valgrind keeps its own accounts of address space, so
 * under any of them (built into the harness, or preloaded for a candidate
 * built with one) no ceiling is set: the run says so on the certificate.
 * The memory cases lower the limit themselves and put back the one they
 * found, this one.
 */
#include <dlfcn.h>
#include <stddef.h>
#include <sys/resource.h>

#include "harness/cwc.h"
#include "harness/instrumented.h"

unsigned long cwc_memory_limit_mib = 4096;

/* Whether a tool that maps more than any ceiling allows runs this process. */
static bool under_a_memory_tool(void)
{
    if (RUNNING_ON_VALGRIND || CWC_TSAN)
        return true;
#if defined(CWC_FOREIGN_ALLOCATOR) && defined(__GLIBC__)
    return true; /* ASan built into the suite */
#else
    return dlsym(RTLD_DEFAULT, "__asan_init") || dlsym(RTLD_DEFAULT, "__tsan_init") ||
           dlsym(RTLD_DEFAULT, "__msan_init") || dlsym(RTLD_DEFAULT, "__hwasan_init");
#endif
}

void cwc_settle_memory_limit(void)
{
    if (under_a_memory_tool())
        cwc_memory_limit_mib = 0;
}

/* A Check fixture: it runs in the case's process, before the case. */
void cwc_limit_case_memory(void)
{
    if (!cwc_memory_limit_mib)
        return;
    rlim_t bytes = (rlim_t)cwc_memory_limit_mib << 20;
    struct rlimit now;
    if (getrlimit(RLIMIT_AS, &now) == 0 && now.rlim_cur != RLIM_INFINITY && now.rlim_cur < bytes)
        return; /* a lower ceiling of the caller's stays */
    struct rlimit lim = {bytes, bytes};
    (void)setrlimit(RLIMIT_AS, &lim);
}
