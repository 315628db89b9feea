/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * afl.c - the AFL++ driver: persistent mode when built with afl-clang-fast
 * (many inputs per process, taken from shared memory), otherwise one input
 * read from stdin per process.
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "driver/target.h"

#ifdef __AFL_FUZZ_TESTCASE_LEN
__AFL_FUZZ_INIT();

/* Run the target on two fixed inputs before the fork server starts, so
 * that what a process does once (CRC tables, the candidate backend, the
 * CPU feature checks) is done in the parent every child is forked from.
 * Left to the first input of each child, it would make the same input
 * take different paths, which AFL++ reports as instability. */
static void warm_up(void)
{
    static unsigned char zeros[256], ones[256];
    for (size_t i = 0; i < sizeof ones; i++)
        ones[i] = 0xff;
    LLVMFuzzerTestOneInput(zeros, sizeof zeros);
    LLVMFuzzerTestOneInput(ones, sizeof ones);
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    warm_up();
    __AFL_INIT();
    /* The buffer belongs to AFL++; read it only after __AFL_INIT. */
    unsigned char *buf = __AFL_FUZZ_TESTCASE_BUF;
    while (__AFL_LOOP(10000))
        LLVMFuzzerTestOneInput(buf, (size_t)__AFL_FUZZ_TESTCASE_LEN);
    return 0;
}
#else
int main(void)
{
    size_t cap = 1 << 16, len = 0;
    unsigned char *buf = malloc(cap);
    if (!buf)
        return 1;
    ssize_t n;
    while (len < cap && (n = read(0, buf + len, cap - len)) > 0)
        len += (size_t)n;
    LLVMFuzzerTestOneInput(buf, len);
    free(buf);
    return 0;
}
#endif
