/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_killed.c - a process killed while it writes and syncs a blob
 * (STOR-015: a crash is "the process or the machine stopping at any
 * instant"). A child rewrites one blob whole, generation after
 * generation, syncing each, and says in shared memory which generation's
 * sync returned; the case kills it at some instant and opens the blob in a
 * run of its own: it must be whole, with each byte of the generation last
 * synced or of one the child was writing after it.
 *
 * A backend that makes a sync by rewriting its file from the start
 * (truncate, write, flush) has an instant where the synced bytes are gone:
 * a kill that lands there loses them. The instants differ from kill to
 * kill, so such a backend may pass a run of this case; a right one never
 * fails it, wherever the kills land.
 */
#include <errno.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cases/storage.h"
#include "cases/vrng.h"

enum { KILLS = 8, BLOB_LEN = 48 * 1024, MAX_WAIT_US = 4000, RUN_SECONDS = 20 };

/* Memory the writing child shares with the case. */
typedef struct kill_shared {
    _Atomic uint64_t synced; /* the generation whose sync last returned CW_OK */
    char wrong[256];         /* what failed in the child, or "" */
} kill_shared;

static kill_shared *shared;

static uint8_t generation_byte(uint64_t g, size_t i)
{
    return (uint8_t)(g * 37 + i * 7 + (i >> 9));
}

static void fill(uint8_t *buf, uint64_t g)
{
    for (size_t i = 0; i < BLOB_LEN; i++)
        buf[i] = generation_byte(g, i);
}

/* The child's root: generations 1, 2, 3... written whole and synced, each
 * sync announced once it returned, until the kill. */
static void *rewrite_forever(cw_ctx *ctx, void *arg)
{
    (void)arg;
    static uint8_t buf[BLOB_LEN];
    cw_blob *b = cwc_open(ctx, "p", "killed", NULL);
    for (uint64_t g = atomic_load(&shared->synced) + 1;; g++) {
        fill(buf, g);
        cw_storage_error err;
        int rc = cw_blob_write_at(b, 0, buf, BLOB_LEN, CW_WRITE_DEFAULT, &err);
        if (rc == CW_OK)
            rc = cw_blob_sync(b, &err);
        if (rc != CW_OK) {
            snprintf(shared->wrong, sizeof shared->wrong, "generation %llu: %.200s",
                     (unsigned long long)g, err.message);
            return NULL;
        }
        atomic_store(&shared->synced, g);
    }
}

static void child_writes(const cwc_store *s)
{
    cwc_child_alarm(RUN_SECONDS);
    cw_run_result res;
    cwc_run(&s->cfg, rewrite_forever, NULL, &res);
    _exit(3);
}

/* What the blob holds after a kill that followed the sync of generation
 * `g`: its length, and each byte of g, g + 1 or g + 2 [STOR-015]. */
static void *check_after_kill(cw_ctx *ctx, void *arg)
{
    uint64_t g = *(const uint64_t *)arg, size = 0;
    static uint8_t got[BLOB_LEN];
    cw_blob *b = cwc_open(ctx, "p", "killed", &size);
    ck_assert_msg(size == BLOB_LEN,
                  "after a kill that followed the sync of generation %llu, the blob's length is "
                  "%llu, not %d [STOR-015]",
                  (unsigned long long)g, (unsigned long long)size, BLOB_LEN);
    ck_assert_int_eq(cw_blob_read_into(b, 0, got, BLOB_LEN, CW_READ_DEFAULT, NULL), CW_OK);
    for (size_t i = 0; i < BLOB_LEN; i++) {
        bool kept = false;
        for (uint64_t k = g; k <= g + 2 && !kept; k++)
            kept = got[i] == generation_byte(k, i);
        ck_assert_msg(kept,
                      "byte %zu after a kill that followed the sync of generation %llu is of "
                      "none of it or the two after it [STOR-015]",
                      i, (unsigned long long)g);
    }
    cw_blob_close(b);
    return NULL;
}

/* Waits for the child's first sync (the generation after `before`), then
 * `us` microseconds more, kills it and reaps it. The generation last
 * announced. */
static uint64_t kill_child(pid_t pid, uint64_t before, long us)
{
    while (atomic_load(&shared->synced) == before && !shared->wrong[0] &&
           waitpid(pid, NULL, WNOHANG) == 0)
        usleep(100);
    struct timespec pause = {0, us * 1000};
    nanosleep(&pause, NULL);
    kill(pid, SIGKILL);
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    ck_assert_msg(!shared->wrong[0], "the writing child failed: %s", shared->wrong);
    ck_assert_msg(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL,
                  "the writing child ended before the kill (status %#x)", (unsigned)status);
    return atomic_load(&shared->synced);
}

CWC_CASE(storage_files_killed_while_syncing, "storage", "STOR-015 STOR-027", PERSIST)
{
    cwc_store s;
    cwc_store_begin(&s);
    shared = mmap(NULL, sizeof *shared, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    ck_assert(shared != MAP_FAILED);
    vrng r;
    vrng_seed(&r, cwc_seed);
    for (int k = 0; k < KILLS; k++) {
        shared->wrong[0] = '\0';
        uint64_t before = atomic_load(&shared->synced);
        fflush(NULL); /* or the child's buffered output is written twice */
        pid_t pid = fork();
        ck_assert_msg(pid >= 0, "fork: %s", strerror(errno));
        if (pid == 0)
            child_writes(&s);
        uint64_t g = kill_child(pid, before, (long)(vrng_next(&r) % MAX_WAIT_US));
        cwc_run_ok(&s.cfg, check_after_kill, &g);
    }
    munmap(shared, sizeof *shared);
    cwc_store_end(&s);
}
