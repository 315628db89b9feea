/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * blob_integrity.c - one bit flipped in a blob's file between two runs of
 * a backend with CW_CAP_PERSISTENT_STORAGE (the native one, or
 * CW_FUZZ_BACKEND's), then the blob opened again (STOR-015, STOR-022,
 * STOR-023, STOR-027).
 *
 * INPUT. Bytes 0-1 choose the bit (little-endian, taken modulo the file's
 * bits); the rest, at least one byte (a single zero when there is none),
 * is the data the first run writes at offset 0 and syncs. THE MODEL: the
 * file is <storage_directory>/<partition>/<hex name> (STOR-027), its
 * header the bytes before the data. A flip inside the header of a blob
 * holding data must fail the open with CW_ERR_BLOB_CORRUPT: a header's CRC
 * and zero padding see every single-bit error, and a blob with data is
 * never taken for an interrupted creation. A flip in the data must open,
 * with the same size, and read back exactly the file's bytes, the flipped
 * bit included: storage keeps no checksum of its own (a program keeps
 * those, CW_ERR_INVALID_CHECKSUM), so what it returns is what is there.
 */
#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cwrt/cwrt.h"
#define FUZZ_TARGET_NEEDS (FUZZ_NEEDS_STORAGE | FUZZ_NEEDS_PERSISTENT)
#include "driver/candidate.h"
#include "driver/target.h"

enum { DATA_MAX = 2048 };

static struct {
    const uint8_t *data;
    size_t len;
    int open_rc;
    uint64_t size;
    uint8_t back[DATA_MAX];
    int read_rc;
} R;

static _Noreturn void fail(const char *what, size_t byte, unsigned bit)
{
    fprintf(stderr, "blob_integrity: %s (bit %u of byte %zu flipped, %zu data bytes)\n", what, bit,
            byte, R.len);
    abort();
}

static void *write_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b;
    uint64_t size;
    cw_storage_remove(ctx, "p", "blob", 4, NULL); /* the last input's */
    if (cw_storage_open(ctx, "p", "blob", 4, &b, &size, NULL) != CW_OK ||
        cw_blob_write_at(b, 0, R.data, R.len, CW_WRITE_DEFAULT, NULL) != CW_OK ||
        cw_blob_sync(b, NULL) != CW_OK)
        fail("the first run could not write and sync", 0, 0);
    cw_blob_close(b);
    return NULL;
}

static void *read_root(cw_ctx *ctx, void *arg)
{
    (void)arg;
    cw_blob *b = NULL;
    R.open_rc = cw_storage_open(ctx, "p", "blob", 4, &b, &R.size, NULL);
    if (R.open_rc == CW_OK) {
        size_t n = R.size < DATA_MAX ? (size_t)R.size : DATA_MAX;
        R.read_rc = cw_blob_read_into(b, 0, R.back, n, CW_READ_DEFAULT, NULL);
        cw_blob_close(b);
    }
    return NULL;
}

static char dir[64];

static int remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
    (void)sb;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static void remove_dir(void)
{
    nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

/* A directory of this process's own, in memory where there is one, gone
 * at exit. */
static const char *storage_dir(void)
{
    if (!dir[0]) {
        const char *shm = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(dir, sizeof dir, "%s/cw-blob-integrity-XXXXXX", shm);
        if (!mkdtemp(dir))
            fail("no directory for the blob", 0, 0);
        atexit(remove_dir);
    }
    return dir;
}

static void run(const cw_backend *b, cw_task_fn root)
{
    cw_config cfg;
    cw_config_default(&cfg);
    cfg.storage_directory = storage_dir();
    cw_run_result res;
    if (cw_start(b, &cfg, root, NULL, &res) != CW_OK)
        fail(res.message, 0, 0);
}

/* Flip the chosen bit of the blob's file; the file's size and the byte. */
static size_t flip(uint16_t choice, size_t *byte, unsigned *bit)
{
    char path[128];
    snprintf(path, sizeof path, "%s/p/626c6f62", storage_dir()); /* "blob" in hex */
    int fd = open(path, O_RDWR | O_CLOEXEC);
    struct stat sb;
    if (fd < 0 || fstat(fd, &sb) != 0 || sb.st_size <= 0)
        fail("the blob's file is not where STOR-027 puts it", 0, 0);
    size_t bits = (size_t)sb.st_size * 8, at = choice % bits;
    *byte = at / 8;
    *bit = (unsigned)(at % 8);
    uint8_t v;
    if (pread(fd, &v, 1, (off_t)*byte) != 1)
        fail("cannot read the file", *byte, *bit);
    v ^= (uint8_t)(1u << *bit);
    if (pwrite(fd, &v, 1, (off_t)*byte) != 1)
        fail("cannot write the file", *byte, *bit);
    close(fd);
    return (size_t)sb.st_size;
}

int LLVMFuzzerTestOneInput(const uint8_t *in, size_t size)
{
    static const uint8_t zero[1];
    const cw_backend *b = getenv("CW_FUZZ_BACKEND") ? fuzz_candidate(NULL) : cw_backend_native();
    if (!(b->capabilities & CW_CAP_PERSISTENT_STORAGE))
        return 0;
    uint16_t choice = (uint16_t)(size > 0 ? in[0] : 0) | (uint16_t)(size > 1 ? in[1] << 8 : 0);
    memset(&R, 0, sizeof R);
    R.data = size > 2 ? in + 2 : zero;
    R.len = size > 2 ? size - 2 : 1;
    if (R.len > DATA_MAX)
        R.len = DATA_MAX;
    run(b, write_root);
    size_t byte;
    unsigned bit;
    size_t file = flip(choice, &byte, &bit);
    size_t header = file - R.len;
    run(b, read_root);
    if (byte < header) {
        if (R.open_rc != CW_ERR_BLOB_CORRUPT)
            fail("a flipped header bit did not fail the open with CW_ERR_BLOB_CORRUPT", byte, bit);
        return 0;
    }
    if (R.open_rc != CW_OK || R.size != R.len || R.read_rc != CW_OK)
        fail("a flipped data bit failed the open or the read, or changed the size", byte, bit);
    for (size_t i = 0; i < R.len; i++) {
        uint8_t want = R.data[i] ^ (uint8_t)(i == byte - header ? 1u << bit : 0);
        if (R.back[i] != want)
            fail("a read did not give the file's bytes", byte, bit);
    }
    return 0;
}
