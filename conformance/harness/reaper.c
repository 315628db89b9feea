/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * reaper.c - no process of a case outlives it.
 *
 * A candidate may fork, and a forked process may call setsid() and leave
 * the case's process group, where no kill of the group reaches it: it
 * would outlive the suite, holding the suite's standard output open, so
 * that a pipe on the suite's output never ends. The harness is therefore
 * the subreaper of everything it starts (PR_SET_CHILD_SUBREAPER): a
 * process whose parent dies is handed to the harness, not to init, and
 * once a case has ended every child the harness still has is one the case
 * left behind, killed and reaped here. With --jobs, each case's process
 * of the harness (jobs.c) is the subreaper of its case, and the harness
 * itself kills what reaches it but those processes.
 */
#include <dirent.h>
#include <errno.h>
#include <stdbool.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness/reaper.h"

void cwc_become_subreaper(void)
{
    (void)prctl(PR_SET_CHILD_SUBREAPER, 1);
}

/* The parent of process `pid`, from /proc/PID/stat; 0 if it is gone. */
static pid_t parent_of(pid_t pid)
{
    char path[64], line[512];
    snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
    FILE *f = fopen(path, "re");
    if (!f)
        return 0;
    size_t n = fread(line, 1, sizeof line - 1, f);
    fclose(f);
    line[n] = '\0';
    const char *close = strrchr(line, ')'); /* the name may hold spaces and ')' */
    int ppid = 0;
    if (!close || sscanf(close + 1, " %*c %d", &ppid) != 1)
        return 0;
    return (pid_t)ppid;
}

static bool kept(pid_t pid, const pid_t *keep, size_t nkeep)
{
    for (size_t i = 0; i < nkeep; i++)
        if (keep[i] == pid)
            return true;
    return false;
}

/* Kill every child of this process but those kept, once; how many there
 * were. Each is reaped by its own id, so that a kept child's status waits
 * for its own waitpid. */
static int kill_children(const pid_t *keep, size_t nkeep)
{
    DIR *d = opendir("/proc");
    if (!d)
        return 0;
    pid_t me = getpid(), killed[256];
    int n = 0;
    struct dirent *e;
    while (n < (int)(sizeof killed / sizeof killed[0]) && (e = readdir(d)) != NULL) {
        pid_t pid = (pid_t)atoi(e->d_name);
        if (pid > 0 && parent_of(pid) == me && !kept(pid, keep, nkeep)) {
            kill(pid, SIGKILL);
            killed[n++] = pid;
        }
    }
    closedir(d);
    for (int i = 0; i < n; i++)
        while (waitpid(killed[i], NULL, 0) < 0 && errno == EINTR)
            ;
    return n;
}

int cwc_reap_strays(const pid_t *keep, size_t nkeep)
{
    int total = 0;
    /* Killing a child hands us its own children: go on until none is
     * left (a bounded number of rounds: each kills a generation, or 256
     * of one). */
    for (int round = 0; round < 64; round++) {
        int n = kill_children(keep, nkeep);
        if (n == 0)
            break;
        total += n;
        usleep(1000); /* let the kernel reparent the next generation */
    }
    return total;
}

int cwc_reap_leftovers(void)
{
    int total = cwc_reap_strays(NULL, 0);
    while (waitpid(-1, NULL, WNOHANG) > 0)
        ;
    return total;
}
