/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage.c - costs of storage, each next to a baseline measured in the
 * same run on the same file system:
 *
 *   write   sequential 4 KiB writes with an fdatasync every 16, and 1 MiB
 *           writes with one every 4, through a blob on the native backend,
 *           against pwrite + fdatasync from a plain thread; then 4 KiB
 *           writes with no sync at all, where the hand-off to an I/O
 *           thread (or the ring) is the whole difference.
 *   read    random 4 KiB reads of a 64 MiB blob in the page cache, into the
 *           caller's memory and into a pooled buffer, against pread.
 *
 * The blob side runs twice, with io_backend CW_IO_THREADS and CW_IO_URING,
 * and where liburing was found there is a second baseline: the same
 * workload through a ring of its own from a plain thread (one entry
 * submitted and waited for at a time, as the blob does).
 *   memory  memory storage on the deterministic backend: a 4 KiB write, a
 *           4 KiB read and, every 16, a sync; operations per second, with
 *           and without the audit digest.
 *
 * Each figure is the best of a few runs. Files go to a directory made
 * under $TMPDIR (default /tmp) and removed at the end.
 *
 * Each `--peer NAME=PROGRAM` (bench/peers/: Go's, tokio's, libuv's) runs
 * the synced writes too, as `PROGRAM write DIR SIZE COUNT SYNC_EVERY`,
 * in turn with the sides above, so that a disk shared with other work
 * weighs on all alike; a line per synced load gives each peer's best.
 *
 * usage: storage [--peer NAME=PROGRAM ...] [write|read|memory ...]   (default: all)
 */
#include <fcntl.h>
#include <ftw.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "cwrt/cwrt.h"
#include "peer_arg.h"

#ifdef CW_HAVE_LIBURING
#include <liburing.h>
#endif

enum { REPEATS = 3, FILE_SIZE = 64 << 20, READS = 100000 };

static char dir[256];

static double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static void die(const char *what)
{
    fprintf(stderr, "storage bench: %s\n", what);
    exit(1);
}

static uint64_t rng = 0x9e3779b97f4a7c15u;

static uint64_t next(void)
{
    rng ^= rng << 13;
    rng ^= rng >> 7;
    rng ^= rng << 17;
    return rng;
}

/* ---- One workload, run both ways ------------------------------------------------------- */

typedef struct load {
    size_t size;    /* bytes per write or read */
    int count;      /* writes or reads */
    int sync_every; /* writes per fdatasync; 0: none */
    bool read;      /* random reads of a prefilled blob */
    bool pooled;    /* reads: into a pooled buffer (cw_blob_read_at) */
    uint8_t *buf;
    cw_io_backend io; /* the blob side's */
    double ns;        /* per operation */
} load;

static uint64_t read_offset(size_t size)
{
    return (next() % (FILE_SIZE / size)) * size;
}

/* The baselines' file, prefilled for reads. */
static int raw_open(load *l, const char *path)
{
    int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    if (fd < 0)
        die("open");
    if (l->read && (ftruncate(fd, FILE_SIZE) != 0 || pwrite(fd, l->buf, 1, FILE_SIZE - 1) != 1))
        die("prefill");
    if (l->read)
        for (off_t at = 0; at < FILE_SIZE; at += 1 << 20)
            if (pwrite(fd, l->buf, 1 << 20, at) != 1 << 20)
                die("prefill");
    return fd;
}

#ifdef CW_HAVE_LIBURING
/* Submit the one entry prepared and wait for it: its result. */
static int ring_call(struct io_uring *ring)
{
    struct io_uring_cqe *cqe;
    if (io_uring_submit_and_wait(ring, 1) < 0 || io_uring_wait_cqe(ring, &cqe) != 0)
        die("io_uring");
    int res = cqe->res;
    io_uring_cqe_seen(ring, cqe);
    return res;
}

static void ring_run(load *l, const char *path)
{
    int fd = raw_open(l, path);
    struct io_uring ring;
    if (io_uring_queue_init(8, &ring, 0) != 0)
        die("io_uring_queue_init");
    double start = now_ns();
    for (int i = 0; i < l->count; i++) {
        struct io_uring_sqe *sqe = io_uring_get_sqe(&ring);
        if (l->read)
            io_uring_prep_read(sqe, fd, l->buf, (unsigned)l->size, read_offset(l->size));
        else
            io_uring_prep_write(sqe, fd, l->buf, (unsigned)l->size, (uint64_t)i * l->size);
        if (ring_call(&ring) != (int)l->size)
            die("ring transfer");
        if (l->sync_every && (i + 1) % l->sync_every == 0) {
            io_uring_prep_fsync(io_uring_get_sqe(&ring), fd, IORING_FSYNC_DATASYNC);
            if (ring_call(&ring) != 0)
                die("ring fdatasync");
        }
    }
    l->ns = (now_ns() - start) / l->count;
    io_uring_queue_exit(&ring);
    close(fd);
    unlink(path);
}
#endif

static void raw_run(load *l, const char *path)
{
    int fd = raw_open(l, path);
    double start = now_ns();
    for (int i = 0; i < l->count; i++) {
        ssize_t n = l->read ? pread(fd, l->buf, l->size, (off_t)read_offset(l->size))
                            : pwrite(fd, l->buf, l->size, (off_t)i * (off_t)l->size);
        if (n != (ssize_t)l->size)
            die("raw transfer");
        if (l->sync_every && (i + 1) % l->sync_every == 0 && fdatasync(fd) != 0)
            die("fdatasync");
    }
    l->ns = (now_ns() - start) / l->count;
    close(fd);
    unlink(path);
}

static void *cw_root(cw_ctx *ctx, void *arg)
{
    load *l = arg;
    cw_blob *b;
    uint64_t size;
    if (cw_storage_open(ctx, "bench", "blob", 4, &b, &size, NULL) != CW_OK)
        die("open a blob");
    if (l->read)
        for (uint64_t at = 0; at < FILE_SIZE; at += 1 << 20)
            if (cw_blob_write_at(b, at, l->buf, 1 << 20, CW_WRITE_DEFAULT, NULL) != CW_OK)
                die("prefill");
    double start = now_ns();
    for (int i = 0; i < l->count; i++) {
        int rc;
        if (l->read && l->pooled) {
            cw_iobuf_mut out;
            rc = cw_blob_read_at(b, read_offset(l->size), l->size, CW_READ_DEFAULT, &out, NULL);
            cw_iobuf_mut_release(&out);
        } else if (l->read) {
            rc = cw_blob_read_into(b, read_offset(l->size), l->buf, l->size, CW_READ_DEFAULT, NULL);
        } else {
            rc =
                cw_blob_write_at(b, (uint64_t)i * l->size, l->buf, l->size, CW_WRITE_DEFAULT, NULL);
        }
        if (rc != CW_OK)
            die("blob transfer");
        if (l->sync_every && (i + 1) % l->sync_every == 0 && cw_blob_sync(b, NULL) != CW_OK)
            die("sync");
    }
    l->ns = (now_ns() - start) / l->count;
    cw_blob_close(b);
    cw_storage_remove(ctx, "bench", "blob", 4, NULL);
    return NULL;
}

static void cw_run(load *l)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.storage_directory = dir;
    cfg.worker_threads = 1;
    cfg.io_backend = l->io;
    cw_run_result res;
    if (cw_start(cw_backend_native(), &cfg, cw_root, l, &res) != CW_OK)
        die(res.message);
}

/* ---- The peers' synced writes ---------------------------------------------------------- */

extern char **environ;

enum { MAX_PEERS = 4 };

static struct {
    const char *name, *program;
} peers[MAX_PEERS];
static int npeers;

/* `--peer NAME=PROGRAM`: false when the argument is malformed. */
static bool peer_add(const char *spec)
{
    char *name;
    if (npeers == MAX_PEERS || !cw_peer_arg(spec, &name, &peers[npeers].program))
        return false;
    peers[npeers++].name = name;
    return true;
}

/* One run of `l`'s writes by peer `i`, in a process of its own: us per
 * write, or -1 (and why, on stderr) when it fails. */
static double peer_write_us(int i, const load *l)
{
    char size[24], count[24], every[24], line[128];
    snprintf(size, sizeof size, "%zu", l->size);
    snprintf(count, sizeof count, "%d", l->count);
    snprintf(every, sizeof every, "%d", l->sync_every);
    char *argv[] = {(char *)peers[i].program, "write", dir, size, count, every, NULL};
    int out[2];
    if (pipe(out) != 0)
        die("pipe");
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, out[1], STDOUT_FILENO);
    posix_spawn_file_actions_addclose(&fa, out[0]);
    pid_t pid;
    int rc = posix_spawn(&pid, peers[i].program, &fa, NULL, argv, environ);
    posix_spawn_file_actions_destroy(&fa);
    close(out[1]);
    FILE *f = fdopen(out[0], "r");
    bool got = rc == 0 && f && fgets(line, sizeof line, f);
    const char *at = got ? strstr(line, "us=") : NULL; /* its row: "peer NAME write: us=X" */
    double us = at ? strtod(at + 3, NULL) : -1;
    if (f)
        fclose(f);
    else
        close(out[0]);
    int status = 0;
    if (rc == 0 &&
        (waitpid(pid, &status, 0) != pid || !WIFEXITED(status) || WEXITSTATUS(status) != 0))
        us = -1;
    if (rc != 0)
        fprintf(stderr, "storage bench: peer %s: %s: %s\n", peers[i].name, peers[i].program,
                strerror(rc));
    else if (us <= 0)
        fprintf(stderr, "storage bench: peer %s: its write run failed\n", peers[i].name);
    return us;
}

enum { THREADS, URING, RAW, RAW_URING, SIDES };

/* One run of side `side` of `proto`: ns per operation, or -1 when this
 * build has no ring. */
static double run_side(int side, load proto, const char *path)
{
    proto.io = side == URING ? CW_IO_URING : CW_IO_THREADS;
    if (side == THREADS || side == URING)
        cw_run(&proto);
    else if (side == RAW)
        raw_run(&proto, path);
#ifdef CW_HAVE_LIBURING
    else
        ring_run(&proto, path);
#else
    else
        return -1;
#endif
    return proto.ns;
}

/* Best of REPEATS of each side, alternating them so drift hits all. */
static void compare(const char *label, load proto)
{
    proto.buf = malloc(proto.size > (1 << 20) ? proto.size : 1 << 20);
    memset(proto.buf, 0x5A, proto.size > (1 << 20) ? proto.size : 1 << 20);
    char path[300];
    snprintf(path, sizeof path, "%s/raw", dir);
    double best[SIDES] = {1e30, 1e30, 1e30, 1e30}, peer_best[MAX_PEERS];
    bool synced = proto.sync_every > 0 && !proto.read;
    for (int i = 0; i < npeers; i++)
        peer_best[i] = -1;
    for (int r = 0; r < REPEATS; r++) {
        for (int side = 0; side < SIDES; side++) {
            double ns = run_side(side, proto, path);
            best[side] = ns < best[side] ? ns : best[side];
        }
        for (int i = 0; synced && i < npeers; i++) {
            double us = peer_write_us(i, &proto);
            if (us > 0 && (peer_best[i] < 0 || us < peer_best[i]))
                peer_best[i] = us;
        }
    }
    printf("storage %-34s threads %8.2f us  uring %8.2f us  raw %8.2f us  raw ring %8.2f us  "
           "ratio threads %.2f uring %.2f (raw ring: %.2f)\n",
           label, best[THREADS] / 1e3, best[URING] / 1e3, best[RAW] / 1e3, best[RAW_URING] / 1e3,
           best[THREADS] / best[RAW], best[URING] / best[RAW], best[URING] / best[RAW_URING]);
    if (synced && npeers) {
        printf("storage peers %-28s", label);
        for (int i = 0; i < npeers; i++)
            if (peer_best[i] > 0)
                printf("  %s %.2f us", peers[i].name, peer_best[i]);
        printf("\n");
    }
    free(proto.buf);
}

static void bench_write(void)
{
    compare("write 4 KiB, fdatasync every 16",
            (load){.size = 4096, .count = 4096, .sync_every = 16});
    compare("write 1 MiB, fdatasync every 4",
            (load){.size = 1 << 20, .count = 64, .sync_every = 4});
    compare("write 4 KiB, no sync", (load){.size = 4096, .count = 16384});
}

static void bench_read(void)
{
    compare("random read 4 KiB (cached)", (load){.size = 4096, .count = READS, .read = true});
    compare("random read 4 KiB, pooled buffer",
            (load){.size = 4096, .count = READS, .read = true, .pooled = true});
}

/* ---- Memory storage on the deterministic backend ----------------------------------------- */

enum { MEM_ROUNDS = 200000 };

static void *mem_root(cw_ctx *ctx, void *arg)
{
    double *ops_per_s = arg;
    static uint8_t block[4096];
    cw_blob *b;
    uint64_t size;
    if (cw_storage_open(ctx, "bench", "blob", 4, &b, &size, NULL) != CW_OK)
        die("open");
    double start = now_ns();
    uint64_t ops = 0;
    for (int i = 0; i < MEM_ROUNDS; i++) {
        uint64_t at = (uint64_t)(i % 1024) * sizeof block;
        if (cw_blob_write_at(b, at, block, sizeof block, CW_WRITE_DEFAULT, NULL) != CW_OK ||
            cw_blob_read_into(b, at, block, sizeof block, CW_READ_DEFAULT, NULL) != CW_OK)
            die("memory transfer");
        ops += 2;
        if (i % 16 == 15) {
            if (cw_blob_sync(b, NULL) != CW_OK)
                die("memory sync");
            ops++;
        }
    }
    *ops_per_s = (double)ops / ((now_ns() - start) / 1e9);
    cw_blob_close(b);
    return NULL;
}

static void bench_memory(void)
{
    for (int audit = 1; audit >= 0; audit--) {
        double best = 0;
        for (int r = 0; r < REPEATS; r++) {
            cw_config cfg;
            cw_config_default(&cfg);
            cfg.audit = audit;
            double ops;
            cw_run_result res;
            if (cw_start(cw_backend_deterministic(), &cfg, mem_root, &ops, &res) != CW_OK)
                die(res.message);
            best = ops > best ? ops : best;
        }
        printf("storage memory 4 KiB write+read, sync/16, audit %-3s %10.0f ops/s\n",
               audit ? "on" : "off", best);
    }
}

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb, (void)flag, (void)ftw;
    return remove(path);
}

int main(int argc, char **argv)
{
    const char *tmp = getenv("TMPDIR");
    snprintf(dir, sizeof dir, "%s/cw-bench-storage-XXXXXX", tmp && tmp[0] ? tmp : "/tmp");
    if (!mkdtemp(dir))
        die("mkdtemp");
    int first = 1;
    for (; first + 1 < argc && strcmp(argv[first], "--peer") == 0; first += 2)
        if (!peer_add(argv[first + 1])) {
            fprintf(stderr, "storage bench: --peer wants NAME=PROGRAM (at most %d), not %s\n",
                    MAX_PEERS, argv[first + 1]);
            return 2;
        }
    bool all = argc <= first;
    for (int i = all ? 0 : first; i < (all ? 1 : argc); i++) {
        const char *what = all ? NULL : argv[i];
        if (!what || !strcmp(what, "write"))
            bench_write();
        if (!what || !strcmp(what, "read"))
            bench_read();
        if (!what || !strcmp(what, "memory"))
            bench_memory();
    }
    nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}
