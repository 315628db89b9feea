/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * scratch.c - a directory of its own for each case, gone when it ends.
 *
 * Cases make directories (the stores of cases/storage.h), and a backend
 * makes its own under $TMPDIR when given no storage directory. A case
 * whose process ends before it cleans up (a case that watches a backend
 * end its process, a candidate that crashed, the allocation sweep's
 * refused runs) would leave them in the machine's /tmp, run after run of
 * a third party's CI. So before each case the harness makes a directory
 * under $TMPDIR (or /tmp), the case's process takes it as its $TMPDIR,
 * and once the case and every process it left are gone (the reaper has
 * run) the harness removes the directory and all in it.
 */
#include <errno.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness/cwc.h"

static char case_dir[PATH_MAX]; /* the running case's, or "" */

bool cwc_scratch_make(void)
{
    const char *base = getenv("TMPDIR");
    int n =
        snprintf(case_dir, sizeof case_dir, "%s/cwc-case-XXXXXX", base && base[0] ? base : "/tmp");
    if (n < 0 || (size_t)n >= sizeof case_dir || !mkdtemp(case_dir)) {
        case_dir[0] = '\0'; /* the case runs under the harness's $TMPDIR */
        return false;
    }
    /* As /tmp is: a case may run part of itself as another user. */
    if (chmod(case_dir, 01777) != 0) {
        (void)rmdir(case_dir);
        case_dir[0] = '\0';
        return false;
    }
    return true;
}

/* In the case's process, before the case (a Check fixture). */
void cwc_scratch_enter(void)
{
    if (case_dir[0] && setenv("TMPDIR", case_dir, 1) != 0)
        ck_abort_msg("cannot set TMPDIR for the case: %s", strerror(errno));
}

/* A case may leave a directory it took the write permission from (a
 * refused removal): given back first, so that the removal below can go in. */
static int writable(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)ftw;
    if (flag == FTW_D || flag == FTW_DNR)
        (void)chmod(path, (sb->st_mode & 07777) | S_IRWXU);
    return 0;
}

static int removed(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    (void)remove(path);
    return 0;
}

void cwc_scratch_remove(void)
{
    if (!case_dir[0])
        return;
    (void)nftw(case_dir, writable, 16, FTW_PHYS);
    (void)nftw(case_dir, removed, 16, FTW_DEPTH | FTW_PHYS);
    case_dir[0] = '\0';
}
