/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * buffers.h - helpers shared by the buffer and pool case files.
 */
#ifndef CWC_CASES_BUFFERS_H
#define CWC_CASES_BUFFERS_H

#include <stdarg.h>

#include "cases/util.h"

#define CWC_OK(expr) ck_assert_int_eq((expr), CW_OK)

/* The buffer entries of the backend under test: every case needs them. */
static inline const cw_buffer_ops *cwc_buffer_ops(void)
{
    const cw_buffer_ops *ops = cw__buffer_ops(cwc_backend);
    ck_assert_msg(ops != NULL, "the backend has no buffer entries");
    return ops;
}

/* A pool of classes 64 .. 1024 bytes with `max` buffers each, aligned to
 * 64, without thread caches: every count it reports is exact. */
static inline cw_bufpool *cwc_small_pool(uint32_t max)
{
    cw_bufpool_config cfg;
    cw_bufpool_config_network(&cfg);
    cfg.min_size = 64;
    cfg.max_size = 1024;
    cfg.max_per_class = max;
    cfg.alignment = 64;
    cfg.thread_cache = 0;
    cwc_buffer_ops();
    cw_bufpool *p = NULL;
    ck_assert_int_eq(cw_bufpool_new(cwc_backend, &cfg, &p), CW_OK);
    return p;
}

/* A list of copies of the given strings, one chunk each. */
#define CWC_LIST(...) cwc_list(__VA_ARGS__, (const char *)NULL)

/* The same with the terminating NULL written out. */
static inline cw_iobufs *cwc_list(const char *first, ...)
{
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    ck_assert_ptr_nonnull(l);
    va_list ap;
    va_start(ap, first);
    for (const char *s = first; s; s = va_arg(ap, const char *)) {
        cw_iobuf b;
        ck_assert_int_eq(cw_iobuf_copy(cwc_backend, s, strlen(s), &b), CW_OK);
        ck_assert_int_eq(cw_iobufs_append(l, &b), CW_OK);
    }
    va_end(ap);
    return l;
}

#endif
