/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * instrumented.h - what the suite is running under: valgrind, or a
 * sanitizer built in. Some cases scale their work down, or leave out a
 * step that the tool's own bookkeeping could not survive; each says why
 * where it asks.
 *
 *   RUNNING_ON_VALGRIND    nonzero under valgrind (its header, or 0 without it)
 *   CWC_TSAN               1 in a ThreadSanitizer build, else 0
 *   CWC_FOREIGN_ALLOCATOR  defined where malloc is not glibc's to wrap:
 *                          AddressSanitizer, ThreadSanitizer, other C libraries
 */
#ifndef CWC_INSTRUMENTED_H
#define CWC_INSTRUMENTED_H

#if defined(__has_include)
#if __has_include(<valgrind/valgrind.h>)
#include <valgrind/valgrind.h>
#endif
#endif
#ifndef RUNNING_ON_VALGRIND
#define RUNNING_ON_VALGRIND 0
#endif

#if defined(__SANITIZE_THREAD__)
#define CWC_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define CWC_TSAN 1
#endif
#endif
#ifndef CWC_TSAN
#define CWC_TSAN 0
#endif

#if defined(__SANITIZE_ADDRESS__) || CWC_TSAN
#define CWC_FOREIGN_ALLOCATOR 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define CWC_FOREIGN_ALLOCATOR 1
#endif
#endif
#if !defined(CWC_FOREIGN_ALLOCATOR) && !defined(__GLIBC__)
#define CWC_FOREIGN_ALLOCATOR 1
#endif

#endif
