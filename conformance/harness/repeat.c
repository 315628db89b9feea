/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * repeat.c - how a case's body is run, and the check of RUN-008 that a
 * case asks for with CWC_REPEATED: memory a run allocates is given back
 * when the run ends, but for a bounded amount kept for later runs.
 *
 * The check runs the whole body again and again in the case's process and
 * reads, after each repetition, the bytes the process's allocations hold
 * (the suite's allocator counts every block handed out and freed,
 * allocator.c). A leak of any size shows as a count that rises after
 * every repetition; what a correct backend keeps (a cache, state made once
 * per process, buffers parked for reuse) stops rising once it has what the
 * workload needs, and the repetitions before the first reading give it
 * the chance. So the case fails only when the count rose after each of
 * the CHECKED repetitions in a row: a count that falls or stays once is
 * never a failure, whatever the machine's speed or the order the
 * backend's threads ran in.
 *
 * Where the suite's allocator is not live (under a sanitizer or valgrind,
 * whose own leak checks report what this one would; with a C library
 * other than glibc) the body runs once. A backend whose memory comes from
 * outside malloc (its own mappings) is not measured either: the check can
 * miss a leak, never see one that is not there.
 */
#include <stdio.h>

#include "harness/allocator.h"
#include "harness/cwc.h"

/* Repetitions before the first reading, and readings compared after it. */
enum { WARMUP = 4, CHECKED = 12 };

/* Run the body WARMUP + CHECKED times and fail when the heap grew after
 * each of the last CHECKED. */
static void run_repeated(const cwc_case *c)
{
    for (int i = 0; i < WARMUP; i++)
        c->body();
    long long first = cwc_heap_live(), last = first;
    for (int i = 0; i < CHECKED; i++) {
        c->body();
        long long now = cwc_heap_live();
        if (now <= last)
            return;
        last = now;
    }
    ck_abort_msg("RUN-008: the memory the process holds grew after each of %d repetitions of "
                 "the case in a row, by %lld bytes (%lld a repetition): memory that grows with "
                 "the runs made, not a bounded amount kept for later ones",
                 CHECKED, last - first, (last - first) / CHECKED);
}

void cwc_case_run(const cwc_case *c)
{
    if ((c->needs & CWC_REPEATED) && cwc_allocator_live())
        run_repeated(c);
    else
        c->body();
    cwc_case_done();
}
