/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * random.c - cw_random: bytes from the operating system, since this backend
 * makes no promise of reproducible runs (spec/02-runner.md).
 */
#include <errno.h>
#include <sys/random.h>

#include "skeleton.h"

void sk_random(cw_ctx *ctx, void *buf, size_t len)
{
    unsigned char *p = buf;
    (void)ctx;
    while (len > 0) {
        ssize_t n = getrandom(p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            sk_fatal("cw_random: getrandom failed (errno %d)", errno);
        p += n;
        len -= (size_t)n;
    }
}
