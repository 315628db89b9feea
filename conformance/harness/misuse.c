/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * misuse.c - the report of a misuse (misuse.h).
 *
 * The page is shared (MAP_SHARED) so that the case's own process, a child
 * the case forked (the allocation sweep's runs), or any thread of either
 * can leave the text where the job that runs the case reads it. Only the
 * first text is kept: the first misuse is the one that explains the rest.
 * The standard error stream also gets the calls that led to it, which is
 * where a backend's author starts looking.
 */
#include "harness/misuse.h"

#include <execinfo.h>
#include <signal.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { TEXT_MAX = 480, FRAMES_MAX = 24 };

typedef struct misuse_page {
    atomic_int taken; /* a text is being or was written */
    char text[TEXT_MAX];
} misuse_page;

static misuse_page *page;

void cwc_misuse_arm(void)
{
    cwc_locks_watch();
    if (!page) {
        void *p =
            mmap(NULL, sizeof *page, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED)
            return; /* the misuse still ends the case; only its text is lost */
        page = p;
    }
    page->text[0] = '\0';
    atomic_store(&page->taken, 0);
}

const char *cwc_misuse_seen(void)
{
    return page && page->text[0] ? page->text : NULL;
}

/* `len` bytes of `text` on stderr, through write(2) rather than stdio: the
 * misuse may be inside a lock stdio needs. What the write returns is of no
 * use to a process about to abort. */
static void say(const char *text, size_t len)
{
    ssize_t w = write(STDERR_FILENO, text, len);
    (void)w;
}

_Noreturn void cwc_misuse(const char *fmt, ...)
{
    char text[TEXT_MAX];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    size_t len = n < 0 ? 0 : (size_t)n < sizeof text ? (size_t)n : sizeof text - 1;
    if (page && atomic_exchange(&page->taken, 1) == 0)
        memcpy(page->text, text, len + 1);
    say("cw-conformance: ", 16);
    say(text, len);
    say("\n", 1);
    void *frames[FRAMES_MAX];
    backtrace_symbols_fd(frames, backtrace(frames, FRAMES_MAX), STDERR_FILENO);
    signal(SIGABRT, SIG_DFL);
    abort();
}
