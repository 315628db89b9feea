/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * fds.h - the descriptors a process has open, for the cases that check a
 * run (or a refused one) gives back every descriptor it opened (NAT-006,
 * RUN-006). Linux: it reads /proc/self/fd.
 */
#ifndef CWC_FDS_H
#define CWC_FDS_H

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "cases/util.h"

/* The descriptors open at one moment, as a bit set over 0 .. 1023. */
typedef struct cwc_fdset {
    unsigned char open[1024];
} cwc_fdset;

static inline void cwc_open_fds(cwc_fdset *s)
{
    memset(s, 0, sizeof *s);
    DIR *d = opendir("/proc/self/fd");
    ck_assert_ptr_nonnull(d);
    int own = dirfd(d);
    for (struct dirent *e; (e = readdir(d));) {
        int fd = atoi(e->d_name);
        if (e->d_name[0] != '.' && fd != own && fd >= 0 && fd < 1024)
            s->open[fd] = 1;
    }
    closedir(d);
}

/* The lowest descriptor from `from` up that is open in `now` and was not
 * at `before`, or -1. */
static inline int cwc_next_new_fd(const cwc_fdset *before, const cwc_fdset *now, int from)
{
    for (int fd = from < 0 ? 0 : from; fd < 1024; fd++)
        if (now->open[fd] && !before->open[fd])
            return fd;
    return -1;
}

/* Fails the case if a descriptor open now was not open at `before`. */
static inline void cwc_no_new_fds(const cwc_fdset *before, const char *what)
{
    cwc_fdset after;
    cwc_open_fds(&after);
    int fd = cwc_next_new_fd(before, &after, 0);
    ck_assert_msg(fd < 0, "descriptor %d was opened by %s and is still open after it", fd, what);
}

#endif
