/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * alloc_sweep.c - the sweep of cases/alloc_sweep.h, shared by the case
 * files of allocation faults so that each workload is swept the same way.
 *
 * A workload runs first with every allocation allowed, recording the places
 * it allocates at (harness/allocator.h); then once per place, in a child
 * process of its own, with the first allocation at that place refused, and
 * at some places with every allocation from then on refused as well (memory
 * gone for good). A place refused once is refused again in the runs that
 * follow in the same process, which must not hold more memory after each
 * (refused_run_after_run, RUN-008): a leak on the path of a refusal. Each
 * such run must end with its checks passed and cw_start returning CW_OK or
 * CW_ERR_NOMEM: no crash, no abort, no hang, no call answering with another
 * error.
 */
#include <errno.h>
#include <execinfo.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cases/alloc_sweep.h"
#include "cases/fds.h"
#include "harness/allocator.h"

/* Places a workload is swept at, at most (chosen evenly among them), and
 * every how many of those the rest of the run gets no memory either. */
enum { SWEEP_PLACES = 256, SWEEP_FOR_GOOD_EVERY = 4, RUN_SECONDS = 10 };
/* Runs after the first in which a place refused once is refused again
 * (RUN-008 after a refusal: refused_run_after_run). */
enum { REPEATED_RUNS = 3 };

/* CWC_ALLOC_PLACES=N sweeps at most N places instead (at least 1): for
 * the project's own repeated certifications of backends already swept in
 * full, where the sweep would be most of their time. The report does not
 * say that a sweep was cut short, so a certificate meant for others must
 * come from a run without it. */
static size_t sweep_places(void)
{
    const char *e = getenv("CWC_ALLOC_PLACES");
    long n = e ? strtol(e, NULL, 10) : SWEEP_PLACES;
    return n < 1 ? 1 : n > SWEEP_PLACES ? SWEEP_PLACES : (size_t)n;
}

/* Memory shared with the run's child process. */
typedef struct sweep_shared {
    cwc_places places;
    char wrong[256]; /* the first check a run failed, or "" */
    int ran;         /* the root began */
} sweep_shared;

static sweep_shared *shared;

/* ---- Checks inside a run ----------------------------------------------------------- */

void cwc_sweep_expect(bool ok, const char *what, const char *file, int line)
{
    const char *base = strrchr(file, '/');
    if (!ok && !shared->wrong[0])
        snprintf(shared->wrong, sizeof shared->wrong, "%s:%d: %s", base ? base + 1 : file, line,
                 what);
}

bool cwc_ok_or_nomem(int rc)
{
    return rc == CW_OK || rc == CW_ERR_NOMEM;
}

void cwc_sweep_root_began(void)
{
    shared->ran = 1;
}

bool cwc_sweep_root_has_begun(void)
{
    return shared->ran != 0;
}

/* ---- One run ------------------------------------------------------------------------- */

void cwc_sweep_check_checkpoint(int rc, const cw_run_result *res, cw_checkpoint *cp)
{
    /* Once the run started (its root began), a checkpoint is handed back
     * whatever the memory, so a backend that cannot have it must refuse
     * the run before it starts [DET-008]. */
    EXPECT(rc == res->status);
    EXPECT(cwc_ok_or_nomem(rc));
    EXPECT(cp != (cw_checkpoint *)res);
    EXPECT(!shared->ran || cp != NULL);
    EXPECT(cp != NULL || rc == CW_ERR_NOMEM);
    if (cp && cp != (cw_checkpoint *)res)
        cw_checkpoint_free(cp);
}

void cwc_sweep_run_config(const cw_config *cfg, cw_task_fn root)
{
    cw_run_result res;
    memset(&res, 0, sizeof res);
    int rc = cwc_run(cfg, root, NULL, &res);
    EXPECT(rc == res.status);
    if (!cwc_ok_or_nomem(rc) && !shared->wrong[0]) /* what the run said: the first clue */
        snprintf(shared->wrong, sizeof shared->wrong, "the run ended with %s: %.150s",
                 cw_strerror(rc), res.message);
    EXPECT(rc != CW_ERR_NOMEM || res.message[0] != '\0');
}

static void run_plain(cw_task_fn root, void *prepared)
{
    (void)prepared;
    cw_config cfg = cwc_config();
    cwc_sweep_run_config(&cfg, root);
}

static void *prepare_nothing(void)
{
    return NULL;
}

static void run_checked(const cwc_workload *w, void *prepared)
{
    (w->run ? w->run : run_plain)(w->root, prepared);
}

static void *prepared_for(const cwc_workload *w)
{
    return (w->prepare ? w->prepare : prepare_nothing)();
}

typedef enum refusal { REFUSE_NONE, REFUSE_ONCE, REFUSE_FOR_GOOD } refusal;

/* NAT-006 where an allocation was refused: a descriptor open after the
 * second run that was not after the first was kept by a run (one that a
 * library opens once per process stays from the first on). A backend
 * that opens none is checked for nothing. */
static void no_descriptor_kept(const cwc_fdset *after_first)
{
    cwc_fdset now;
    cwc_open_fds(&now);
    int fd = cwc_next_new_fd(after_first, &now, 0);
    if (fd >= 0 && !shared->wrong[0])
        snprintf(shared->wrong, sizeof shared->wrong,
                 "NAT-006: descriptor %d, opened by the second run with this allocation "
                 "refused, is still open after it: what the refusal left undone kept it",
                 fd);
}

/* A place refused once: the run, then RUN-008 where an allocation was
 * refused: what the run did not do must not leave memory behind. The
 * same allocation is refused in the runs that follow in the same process,
 * and the memory held may not rise after each of the REPEATED_RUNS after
 * the first (which lets the backend fill what it keeps on that path): a
 * count that falls or stays once ends the check, so a cache that fills is
 * no failure. The first run is made in a process that ran nothing, so an
 * allocation made once per process is refused too. */
static void refused_run_after_run(const cwc_workload *w, uint64_t place)
{
    long long first = 0, last = 0;
    cwc_fdset after_first;
    for (int i = 0; i <= REPEATED_RUNS && !shared->wrong[0]; i++) {
        void *prepared = prepared_for(w);
        cwc_allocator_refuse(&shared->places, place, false);
        shared->ran = 0; /* each run's root begins anew */
        run_checked(w, prepared);
        cwc_allocator_off();
        if (i == 0)
            cwc_open_fds(&after_first);
        else if (i == 1)
            no_descriptor_kept(&after_first);
        long long now = cwc_heap_live();
        if (i > 0 && now <= last)
            return;
        first = i == 0 ? now : first;
        last = now;
    }
    if (!shared->wrong[0])
        snprintf(shared->wrong, sizeof shared->wrong,
                 "RUN-008: the memory held grew after each of %d runs with this allocation "
                 "refused, by %lld bytes a run: what the refusal left undone was not given back",
                 REPEATED_RUNS, (last - first) / REPEATED_RUNS);
}

/* One run of the workload in a child process; its wait status. The child
 * exits 0 when every check passed and 3 when one failed (shared->wrong). */
static int run_child(const cwc_workload *w, refusal how, uint64_t place)
{
    shared->wrong[0] = '\0';
    shared->ran = 0;
    fflush(NULL); /* or the child's buffered output is written twice */
    pid_t pid = fork();
    ck_assert_msg(pid >= 0, "fork failed");
    if (pid == 0) {
        cwc_child_alarm(RUN_SECONDS);
        if (how == REFUSE_ONCE) {
            refused_run_after_run(w, place);
            _exit(shared->wrong[0] ? 3 : 0);
        }
        void *prepared = prepared_for(w);
        if (how == REFUSE_NONE)
            cwc_allocator_record(&shared->places);
        else
            cwc_allocator_refuse(&shared->places, place, how == REFUSE_FOR_GOOD);
        run_checked(w, prepared);
        cwc_allocator_off();
        _exit(shared->wrong[0] ? 3 : 0);
    }
    int status = 0;
    pid_t got;
    while ((got = waitpid(pid, &status, 0)) < 0 && errno == EINTR)
        ;
    ck_assert_msg(got == pid, "waitpid: %s", strerror(errno));
    return status;
}

/* What went wrong in a run that ended with `status`, or NULL. */
static const char *run_fault(int status, char *buf, size_t len)
{
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return NULL;
    if (WIFSIGNALED(status) && WTERMSIG(status) == SIGALRM)
        snprintf(buf, len, "it hung (no end within %d s)", RUN_SECONDS);
    else if (WIFSIGNALED(status))
        snprintf(buf, len, "the process died of signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WEXITSTATUS(status) == 3)
        snprintf(buf, len, "a check failed: %s", shared->wrong);
    else
        snprintf(buf, len, "the process exited with status %d", WEXITSTATUS(status));
    return buf;
}

/* ---- The sweep -------------------------------------------------------------------------- */

/* Place `i` of the recorded run, as "fn+off <- fn+off <- ..." */
static void describe_place(size_t i, char *buf, size_t len)
{
    char **names = backtrace_symbols(shared->places.frames[i], CWC_PLACE_FRAMES);
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; names && k < CWC_PLACE_FRAMES && used < len; k++)
        if (shared->places.frames[i][k])
            used += (size_t)snprintf(buf + used, len - used, "%s%s", k ? " <- " : "", names[k]);
    free(names);
}

static void fail_at_place(size_t i, refusal how, const char *fault)
{
    char where[1024];
    describe_place(i, where, sizeof where);
    ck_abort_msg("with the allocation at [%s] refused%s: %s [RUN-007]", where,
                 how == REFUSE_FOR_GOOD ? " and every one after it" : "", fault);
}

static void sweep_place(const cwc_workload *w, size_t i, refusal how)
{
    char fault[512];
    const char *f = run_fault(run_child(w, how, shared->places.id[i]), fault, sizeof fault);
    if (f)
        fail_at_place(i, how, f);
}

void cwc_sweep_workload(const cwc_workload *w)
{
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert(shared != MAP_FAILED);
    char fault[512];
    const char *f = run_fault(run_child(w, REFUSE_NONE, 0), fault, sizeof fault);
    ck_assert_msg(!f, "with every allocation allowed: %s", f);
    if (!cwc_allocator_live())
        return; /* nothing was recorded: the runs would refuse nothing */
    /* A backend with an allocator of its own may allocate nothing here:
     * then there is nothing to refuse. */
    size_t n = shared->places.n;
    size_t most = sweep_places(), runs = n < most ? n : most;
    for (size_t r = 0; r < runs; r++) {
        size_t i = r * n / runs;
        sweep_place(w, i, REFUSE_ONCE);
        if (r % SWEEP_FOR_GOOD_EVERY == 0)
            sweep_place(w, i, REFUSE_FOR_GOOD);
    }
    munmap(shared, sizeof *shared);
}

void cwc_sweep(cw_task_fn root)
{
    cwc_workload w = {root, NULL, NULL};
    cwc_sweep_workload(&w);
}

/* `text` from `sink` to `stream`: it arrives whole, or a call said it
 * found no memory (NET-034). */
void cwc_sweep_exchange(cw_sink *sink, cw_stream *stream, const char *text)
{
    size_t len = strlen(text);
    cw_iobufs *l = cw_iobufs_new(cwc_backend);
    cw_iobuf buf;
    if (!l || cw_iobuf_static(cwc_backend, text, len, &buf) != CW_OK ||
        cw_iobufs_append(l, &buf) != CW_OK) {
        cw_iobufs_release(l);
        return;
    }
    int rc = cw_sink_send(sink, l);
    cw_iobufs_release(l);
    EXPECT(cwc_ok_or_nomem(rc));
    if (rc != CW_OK)
        return;
    cw_iobufs *got = NULL;
    rc = cw_stream_recv(stream, len, &got);
    EXPECT(cwc_ok_or_nomem(rc) && (rc != CW_OK || cw_iobufs_equal_bytes(got, text, len)));
    cw_iobufs_release(got);
}
