/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * Crash consistency of file storage (reference/native/file_storage.c): a child
 * process runs a seeded sequence of storage calls on the native backend
 * and is killed with SIGKILL at a random instant; the parent reopens every
 * blob and compares it with a model of the same sequence.
 *
 * The child reports, through a pipe, each call that returned. One trial in
 * eight kills it while it is still creating its blobs; the others wait for
 * its first report, then up to 20 ms. A killed
 * process loses nothing the kernel already has, so every call that
 * returned, synced or not, must be visible after the kill; the call in
 * flight may be visible in part (a write torn at any byte, a resize, a
 * removal or a creation done or not). Every blob must open: a creation the
 * kill interrupted heals; nothing may be reported corrupt, and no byte may
 * differ from what the model allows.
 *
 * CW_CRASH_TRIALS sets the number of trials (default 20; the benchmarks
 * run 1,000). Each trial uses a directory of its own under $TMPDIR.
 */
#include <check.h>
#include <errno.h>
#include <ftw.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cwrt/cwrt.h"

enum { BLOBS = 3, OPS = 160, MAX_END = 64 * 1024, MAX_WRITE = 12 * 1024 };

enum op_kind { OP_WRITE, OP_SYNC_WRITE, OP_RESIZE, OP_SYNC, OP_RECREATE };

typedef struct op {
    enum op_kind kind;
    int blob;
    uint64_t offset, len; /* a write's range; a resize's length in len */
    uint64_t seed;        /* a write's bytes */
} op;

static uint64_t mix(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

/* Operation i of the trial seeded `seed`: the same in child and parent. */
static op op_at(uint64_t seed, int i)
{
    uint64_t x = seed * 1000003u + (uint64_t)i;
    uint64_t r = mix(&x);
    op o = {.blob = (int)(mix(&x) % BLOBS), .seed = mix(&x)};
    unsigned pick = (unsigned)(r % 16);
    o.kind = pick < 8    ? OP_WRITE
             : pick < 10 ? OP_SYNC_WRITE
             : pick < 12 ? OP_RESIZE
             : pick < 15 ? OP_SYNC
                         : OP_RECREATE;
    o.len = 1 + mix(&x) % MAX_WRITE;
    o.offset = mix(&x) % (MAX_END - o.len);
    if (o.kind == OP_RESIZE)
        o.len = mix(&x) % MAX_END;
    return o;
}

static void op_bytes(const op *o, uint8_t *out)
{
    uint64_t x = o->seed;
    for (uint64_t i = 0; i < o->len; i++)
        out[i] = (uint8_t)(mix(&x) >> 56);
}

static const char *names[BLOBS] = {"alpha", "beta", "gamma"};

/* ---- The child: run the sequence, report each call that returned ------------------------- */

typedef struct child_arg {
    uint64_t seed;
    int report; /* the pipe's write end */
} child_arg;

static void report(int fd, int done)
{
    if (write(fd, &done, sizeof done) != sizeof done)
        _exit(3);
}

static cw_blob *open_or_die(cw_ctx *ctx, int blob)
{
    cw_blob *b;
    uint64_t size;
    cw_storage_error err;
    if (cw_storage_open(ctx, "p", names[blob], strlen(names[blob]), &b, &size, &err) != CW_OK) {
        fprintf(stderr, "child: %s\n", err.message);
        _exit(4);
    }
    return b;
}

static void *child_root(cw_ctx *ctx, void *arg)
{
    child_arg *a = arg;
    cw_blob *blobs[BLOBS];
    for (int i = 0; i < BLOBS; i++)
        blobs[i] = open_or_die(ctx, i);
    report(a->report, 0);
    uint8_t *data = malloc(MAX_WRITE);
    for (int i = 0; i < OPS; i++) {
        op o = op_at(a->seed, i);
        cw_blob *b = blobs[o.blob];
        int rc = CW_OK;
        switch (o.kind) {
        case OP_WRITE:
        case OP_SYNC_WRITE:
            op_bytes(&o, data);
            rc = cw_blob_write_at(b, o.offset, data, o.len,
                                  o.kind == OP_SYNC_WRITE ? CW_WRITE_SYNC : CW_WRITE_DEFAULT, NULL);
            break;
        case OP_RESIZE:
            rc = cw_blob_resize(b, o.len, NULL);
            break;
        case OP_SYNC:
            rc = cw_blob_sync(b, NULL);
            break;
        case OP_RECREATE:
            cw_blob_close(b);
            rc = cw_storage_remove(ctx, "p", names[o.blob], strlen(names[o.blob]), NULL);
            blobs[o.blob] = open_or_die(ctx, o.blob);
            break;
        }
        if (rc != CW_OK)
            _exit(5);
        report(a->report, i + 1);
    }
    free(data);
    pause(); /* wait for the kill */
    return NULL;
}

static void child_main(const char *dir, uint64_t seed, int fd)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.storage_directory = dir;
    cfg.worker_threads = 2;
    child_arg a = {seed, fd};
    cw_run_result res;
    cw_start(cw_backend_native(), &cfg, child_root, &a, &res);
    _exit(6);
}

/* ---- The model --------------------------------------------------------------------------- */

typedef struct model {
    uint8_t bytes[MAX_END];
    uint64_t len;
} model;

static void model_apply(model *m, const op *o, const uint8_t *data)
{
    switch (o->kind) {
    case OP_WRITE:
    case OP_SYNC_WRITE:
        if (o->offset + o->len > m->len) {
            memset(m->bytes + m->len, 0, o->offset + o->len - m->len);
            m->len = o->offset + o->len;
        }
        memcpy(m->bytes + o->offset, data, o->len);
        break;
    case OP_RESIZE:
        if (o->len > m->len)
            memset(m->bytes + m->len, 0, o->len - m->len);
        m->len = o->len;
        break;
    case OP_SYNC:
        break;
    case OP_RECREATE:
        m->len = 0;
        break;
    }
}

/* Is `got` (len bytes) what `m` allows, with `flight` possibly done in part? */
static bool allowed(const model *m, const op *flight, const uint8_t *data, const uint8_t *got,
                    uint64_t len)
{
    if (!flight || flight->kind == OP_SYNC)
        return len == m->len && memcmp(got, m->bytes, len) == 0;
    if (flight->kind == OP_RECREATE)
        return len == 0 || (len == m->len && memcmp(got, m->bytes, len) == 0);
    if (flight->kind == OP_RESIZE) {
        if (len != m->len && len != flight->len)
            return false;
        for (uint64_t i = 0; i < len; i++)
            if (got[i] != (i < m->len ? m->bytes[i] : 0))
                return false;
        return true;
    }
    /* A write torn anywhere: each byte old or new, the length anywhere between. */
    uint64_t end = flight->offset + flight->len;
    if (len < m->len || len > (end > m->len ? end : m->len))
        return false;
    for (uint64_t i = 0; i < len; i++) {
        bool in = i >= flight->offset && i < end;
        uint8_t old = i < m->len ? m->bytes[i] : 0;
        if (got[i] != old && !(in && got[i] == data[i - flight->offset]))
            return false;
    }
    return true;
}

/* ---- The parent: kill, reopen, compare --------------------------------------------------- */

typedef struct check_arg {
    model *models;
    const op *flight;
    const uint8_t *flight_data;
    char failure[1024];
} check_arg;

static void *check_root(cw_ctx *ctx, void *arg)
{
    check_arg *c = arg;
    uint8_t *got = malloc(MAX_END);
    for (int i = 0; i < BLOBS && !c->failure[0]; i++) {
        cw_blob *b;
        uint64_t size;
        cw_storage_error err;
        if (cw_storage_open(ctx, "p", names[i], strlen(names[i]), &b, &size, &err) != CW_OK) {
            snprintf(c->failure, sizeof c->failure, "%s does not open: %s", names[i], err.message);
            break;
        }
        if (size > MAX_END || cw_blob_read_into(b, 0, got, size, CW_READ_DEFAULT, &err) != CW_OK) {
            snprintf(c->failure, sizeof c->failure, "%s: size %llu unreadable", names[i],
                     (unsigned long long)size);
        } else {
            const op *flight = c->flight && c->flight->blob == i ? c->flight : NULL;
            if (!allowed(&c->models[i], flight, c->flight_data, got, size))
                snprintf(c->failure, sizeof c->failure,
                         "%s: %llu bytes, not what the model allows (%llu bytes)", names[i],
                         (unsigned long long)size, (unsigned long long)c->models[i].len);
        }
        cw_blob_close(b);
    }
    free(got);
    return NULL;
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

/* One trial; returns the number of calls the child completed. The kill
 * comes `kill_after_us` after the child's blobs are open, or after the
 * fork when `early` (to interrupt creations). */
static int trial(uint64_t seed, unsigned kill_after_us, bool early)
{
    char dir[256];
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cw-crash-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        child_main(dir, seed, fds[1]);
    }
    close(fds[1]);
    int done = -1, value;
    if (!early && read(fds[0], &value, sizeof value) == sizeof value)
        done = value;
    struct timespec pause_for = {0, (long)kill_after_us * 1000};
    nanosleep(&pause_for, NULL);
    kill(pid, SIGKILL);
    int status;
    ck_assert_int_eq(waitpid(pid, &status, 0), pid);
    ck_assert_msg(WIFSIGNALED(status), "the child ended by itself: status %d", status);
    while (read(fds[0], &value, sizeof value) == sizeof value)
        done = value;
    close(fds[0]);

    /* done == -1: killed before the first open returned. Otherwise calls
     * 0 .. done-1 returned, and call `done` may have begun. */
    model *models = calloc(BLOBS, sizeof *models);
    uint8_t *data = malloc(MAX_WRITE);
    for (int i = 0; i < done; i++) {
        op o = op_at(seed, i);
        if (o.kind == OP_WRITE || o.kind == OP_SYNC_WRITE)
            op_bytes(&o, data);
        model_apply(&models[o.blob], &o, data);
    }
    op flight = op_at(seed, done < 0 ? 0 : done);
    if (flight.kind == OP_WRITE || flight.kind == OP_SYNC_WRITE)
        op_bytes(&flight, data);
    check_arg c = {models, done >= 0 && done < OPS ? &flight : NULL, data, ""};
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.storage_directory = dir;
    cfg.worker_threads = 1;
    cw_run_result res;
    ck_assert_int_eq(cw_start(cw_backend_native(), &cfg, check_root, &c, &res), CW_OK);
    ck_assert_msg(!c.failure[0], "seed %llu, killed after %d calls: %s", (unsigned long long)seed,
                  done, c.failure);
    free(models);
    free(data);
    ck_assert_int_eq(nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS), 0);
    return done;
}

START_TEST(killed_writer_loses_nothing_it_was_told)
{
    const char *env = getenv("CW_CRASH_TRIALS");
    int trials = env && atoi(env) > 0 ? atoi(env) : 20;
    uint64_t x = (uint64_t)time(NULL);
    const char *seed_env = getenv("CW_CRASH_SEED");
    if (seed_env)
        x = strtoull(seed_env, NULL, 0);
    printf("storage crash: %d trials from seed %llu\n", trials, (unsigned long long)x);
    int killed_midway = 0, before_open = 0, finished = 0;
    for (int t = 0; t < trials; t++) {
        uint64_t seed = mix(&x);
        bool early = mix(&x) % 8 == 0;
        int done = trial(seed, (unsigned)(mix(&x) % (early ? 5000 : 20000)), early);
        before_open += done < 0;
        finished += done == OPS;
        killed_midway += done >= 0 && done < OPS;
    }
    printf("storage crash: %d trials: %d killed mid-sequence, %d before the first open "
           "returned, %d after the last call; every blob opened and matched\n",
           trials, killed_midway, before_open, finished);
}
END_TEST

int main(void)
{
    Suite *s = suite_create("storage_crash");
    TCase *tc = tcase_create("crash");
    tcase_set_timeout(tc, 3600);
    tcase_add_test(tc, killed_writer_loses_nothing_it_was_told);
    suite_add_tcase(s, tc);
    SRunner *sr = srunner_create(s);
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed ? 1 : 0;
}
