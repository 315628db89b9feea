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

int main(void)
{
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
