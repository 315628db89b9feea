/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * replay.c - run a fuzz target over saved inputs, without any fuzzer.
 *
 *   <target>-replay FILE|DIR...
 *
 * Each argument is an input file or a directory whose regular files are
 * inputs (in name order, so runs are reproducible). The target aborts the
 * process on a problem; an unreadable input is an error too. On success it
 * prints "replay <target>: N inputs ok". When an input kills the process,
 * its path is printed first, so the failure names its input.
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "driver/target.h"

#ifndef FUZZ_TARGET
#define FUZZ_TARGET "target"
#endif

static unsigned long replayed;
static const char *current; /* the input being run */

static void say_current(void)
{
    if (!current)
        return;
    /* Only async-signal-safe calls: this may run in a signal handler. */
    static const char head[] = "replay: the input that failed: ";
    ssize_t rc = write(2, head, sizeof head - 1);
    rc = write(2, current, strlen(current));
    rc = write(2, "\n", 1);
    (void)rc;
}

static void on_fatal_signal(int sig)
{
    say_current();
    signal(sig, SIG_DFL);
    raise(sig);
}

/* A sanitizer ends the process without a signal; where one is linked in,
 * it offers a hook to run first. */
extern void __sanitizer_set_death_callback(void (*callback)(void)) __attribute__((weak));

static void watch_for_crashes(void)
{
    static const int fatal[] = {SIGABRT, SIGSEGV, SIGBUS, SIGFPE, SIGILL};
    for (size_t i = 0; i < sizeof fatal / sizeof fatal[0]; i++)
        signal(fatal[i], on_fatal_signal);
    if (__sanitizer_set_death_callback)
        __sanitizer_set_death_callback(say_current);
}

static int replay_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    size_t cap = 4096, len = 0;
    unsigned char *buf = malloc(cap);
    for (;;) {
        if (!buf) {
            fprintf(stderr, "replay: %s: out of memory\n", path);
            fclose(f);
            return -1;
        }
        len += fread(buf + len, 1, cap - len, f);
        if (len < cap)
            break;
        unsigned char *bigger = realloc(buf, cap * 2);
        if (!bigger)
            free(buf);
        buf = bigger;
        cap *= 2;
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "replay: %s: read error\n", path);
        free(buf);
        return -1;
    }
    current = path;
    LLVMFuzzerTestOneInput(buf, len);
    current = NULL;
    free(buf);
    replayed++;
    return 0;
}

static int only_visible(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

static int replay_path(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    if (!S_ISDIR(st.st_mode))
        return replay_file(path);
    struct dirent **names;
    int n = scandir(path, &names, only_visible, alphasort);
    if (n < 0) {
        fprintf(stderr, "replay: %s: %s\n", path, strerror(errno));
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char child[4096];
        snprintf(child, sizeof child, "%s/%s", path, names[i]->d_name);
        if (rc == 0 && stat(child, &st) == 0 && S_ISREG(st.st_mode))
            rc = replay_file(child);
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR...\n", argv[0]);
        return 2;
    }
    watch_for_crashes();
    if (LLVMFuzzerInitialize)
        LLVMFuzzerInitialize(&argc, &argv);
    for (int i = 1; i < argc; i++)
        if (replay_path(argv[i]) != 0)
            return 1;
    printf("replay %s: %lu inputs ok\n", FUZZ_TARGET, replayed);
    return 0;
}
