/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * file_storage.c - storage in files, for the native backend: the directory tree,
 * and opening, removing and listing blobs. The reads and writes of an open
 * blob are in file_io.c.
 *
 * Layout: <root>/<partition>/<name in lowercase hex>, one regular file per
 * blob holding its physical bytes (header, then data). Hex makes any byte
 * string a safe file name and gives each name exactly one spelling, so a
 * scan can tell our files from anything else in the directory.
 *
 * Durability: a blob is created by syncing the partition directory and
 * the root (so the entries naming it are durable), truncating the file to
 * zero (so a torn header can never splice with old bytes), writing the
 * header region and syncing the file. A header that parses therefore
 * implies durable directory entries, and reopening never syncs a
 * directory. A removal syncs the directory it changed. An open that fails
 * after it made the blob's file or its partition's directory (its
 * directory syncs need descriptors of their own, which may be gone)
 * removes them again, so a scan lists nothing of it (NAT-007).
 *
 * Every call runs its system calls on the I/O threads (io_threads.c), one
 * job per call (but a blob's transfers and syncs, which go through the
 * run's io_uring when it has one: file_io.c), and open, remove and scan
 * hold the storage's lock for the whole job, so a partition is never
 * removed halfway through an open.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "native/file_storage.h"
#include "native/os.h"

/* ---- Paths and directories ------------------------------------------------------------ */

/* a/b or a/b/c; NULL when memory is exhausted. */
static char *path_join(const char *a, const char *b, const char *c)
{
    size_t n = strlen(a) + strlen(b) + (c ? strlen(c) : 0) + 3;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, c ? "%s/%s/%s" : "%s/%s", a, b, c);
    return p;
}

/* mkdir -p: every missing directory of `path`. 0 or an errno; `*made`
 * tells whether `path` itself was made by this call. */
static int make_dirs(const char *path, bool *made)
{
    char *p = cw_strdup(path);
    *made = false;
    if (!p)
        return ENOMEM;
    int rc = 0;
    for (char *s = p + 1;; s++) {
        if (*s != '/' && *s != '\0')
            continue;
        char c = *s;
        *s = '\0';
        bool last = c == '\0';
        if (mkdir(p, 0755) == 0) {
            *made = last;
        } else if (errno != EEXIST) {
            rc = errno;
            break;
        }
        *s = c;
        if (c == '\0')
            break;
    }
    free(p);
    return rc;
}

int cw_file_sync_dir(const char *path)
{
    int fd = cw_file_open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    if (fd < 0)
        return errno;
    int rc;
    while ((rc = cw_os.fsync(fd)) != 0 && errno == EINTR)
        continue; /* as cw_file_datasync: an interruption reported nothing */
    rc = rc == 0 ? 0 : errno;
    close(fd);
    return rc;
}

/* rm -r of the tree at `fd`'s entry `name`. 0 or an errno. */
static int remove_tree_at(int dirfd, const char *name)
{
    if (unlinkat(dirfd, name, 0) == 0)
        return 0;
    if (errno != EISDIR && errno != EPERM)
        return errno;
    int fd;
    while ((fd = openat(dirfd, name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)) < 0 &&
           errno == EINTR)
        continue; /* a signal's handler interrupted it: nothing was opened [NAT-005] */
    if (fd < 0)
        return errno;
    DIR *d = fdopendir(fd);
    if (!d) {
        int e = errno;
        close(fd);
        return e;
    }
    int rc = 0;
    struct dirent *e;
    while (rc == 0 && (e = readdir(d)))
        if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
            rc = remove_tree_at(fd, e->d_name);
    closedir(d);
    if (rc == 0 && unlinkat(dirfd, name, AT_REMOVEDIR) != 0)
        rc = errno;
    return rc;
}

int cw_file_remove_tree(const char *path)
{
    return remove_tree_at(AT_FDCWD, path);
}

/* ---- Open --------------------------------------------------------------------------- */

typedef struct open_job {
    cw_job job;
    cw_bfile *f;
    cw_blob_range versions;
    uint64_t size;
    int rc;
    cw_storage_error *err;
} open_job;

/* Write a new header over whatever `fd` holds (the creation order above). */
static int create(cw_bfile *f, int fd, uint16_t version, const char *dir, cw_storage_error *err)
{
    file_storage *fs = f->st->impl;
    uint8_t region[CW_BLOB_HEADER_MAX];
    size_t len;
    uint16_t layout = f->st->layouts.last;
    cw_header_create(layout, version, region, sizeof region, &len);
    int e = cw_file_sync_dir(dir);
    if (e)
        return cw_fail_os(err, CW_ERR_BLOB_OPEN_FAILED, f->partition, f->hex, e,
                          "syncing the partition directory");
    if ((e = cw_file_sync_dir(fs->root)))
        return cw_fail_os(err, CW_ERR_BLOB_OPEN_FAILED, f->partition, f->hex, e,
                          "syncing the storage directory");
    if (cw_file_truncate(fd, 0) != 0 || (e = cw_file_pwrite_all(fd, region, len, 0)) ||
        cw_file_datasync(fd) != 0)
        return cw_fail_os(err, CW_ERR_BLOB_OPEN_FAILED, f->partition, f->hex, e ? e : errno,
                          "writing the header");
    f->layout = layout;
    f->version = version;
    f->data_offset = len;
    return CW_OK;
}

/* Read the header region of `fd` and resolve it; create when fresh. */
static int settle(cw_bfile *f, int fd, cw_blob_range versions, const char *dir, uint64_t *size,
                  cw_storage_error *err)
{
    struct stat sb;
    if (fstat(fd, &sb) != 0)
        return cw_fail_os(err, CW_ERR_BLOB_OPEN_FAILED, f->partition, f->hex, errno, "fstat");
    uint64_t raw_len = (uint64_t)sb.st_size;
    uint8_t raw[CW_BLOB_HEADER_MAX];
    size_t want = raw_len < sizeof raw ? (size_t)raw_len : sizeof raw;
    int e = cw_file_pread_all(fd, raw, want, 0);
    if (e)
        return cw_fail_os(err, CW_ERR_BLOB_OPEN_FAILED, f->partition, f->hex, e,
                          "reading the header");
    cw_blob_header h;
    int rc = cw_header_resolve(raw, raw_len, f->st->layouts, versions, &h);
    if (rc != CW_OK)
        return cw_header_error(f, rc, &h, err);
    if (h.fresh) {
        *size = 0;
        return create(f, fd, versions.last, dir, err);
    }
    f->layout = h.layout;
    f->version = h.version;
    f->data_offset = h.data_offset;
    *size = h.size;
    return CW_OK;
}

/* The blob's file, made when missing (`*made` says so); -1 with errno. */
static int open_or_create(const char *path, bool *made)
{
    *made = false;
    int fd = cw_file_open(path, O_RDWR | O_CLOEXEC, 0);
    if (fd >= 0 || errno != ENOENT)
        return fd;
    fd = cw_file_open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd >= 0)
        *made = true;
    else if (errno == EEXIST) /* made meanwhile by another process: it is not ours */
        fd = cw_file_open(path, O_RDWR | O_CLOEXEC, 0);
    return fd;
}

/* A failed open changes nothing [NAT-007]: the file it made (an empty or
 * half-created blob a scan would list) and the partition directory it
 * made go again. A directory that is not empty stays (rmdir refuses). */
static void undo_open(const char *dir, const char *path, bool made_dir, bool made_file)
{
    if (made_file)
        (void)unlink(path); /* nothing else to do if it fails: the open failed anyway */
    if (made_dir)
        (void)rmdir(dir);
}

static void open_fn(cw_job *job)
{
    open_job *j = (open_job *)job;
    cw_bfile *f = j->f;
    file_storage *fs = f->st->impl;
    char *dir = path_join(fs->root, f->partition, NULL);
    char *path = path_join(fs->root, f->partition, f->hex);
    file_file *ff = calloc(1, sizeof *ff);
    if (!dir || !path || !ff) {
        j->rc = cw_fail_nomem(j->err, f->partition, f->hex);
        free(ff);
        free(dir);
        free(path);
        return;
    }
    pthread_mutex_lock(&fs->lock);
    bool made_dir = false, made_file = false;
    int e = make_dirs(dir, &made_dir);
    int fd = -1;
    if (e) {
        j->rc = cw_fail_os(j->err, CW_ERR_PARTITION_CREATION_FAILED, f->partition, NULL, e, dir);
    } else if ((fd = open_or_create(path, &made_file)) < 0) {
        j->rc = cw_fail_os(j->err, CW_ERR_BLOB_OPEN_FAILED, f->partition, f->hex, errno, path);
    } else {
        j->rc = settle(f, fd, j->versions, dir, &j->size, j->err);
    }
    if (j->rc != CW_OK)
        undo_open(dir, path, made_dir, made_file);
    pthread_mutex_unlock(&fs->lock);
    if (j->rc == CW_OK) {
        ff->fd = fd;
        atomic_init(&ff->no_dontcache, false);
        atomic_init(&ff->no_nowait, false);
        f->impl = ff;
    } else {
        free(ff);
        if (fd >= 0)
            close(fd);
    }
    free(dir);
    free(path);
}

static int file_open(cw_bfile *f, cw_blob_range versions, uint64_t *size, cw_storage_error *err)
{
    open_job j = {.job.fn = open_fn, .f = f, .versions = versions, .err = err};
    cw_offload_run(((file_storage *)f->st->impl)->io, &j.job);
    *size = j.size;
    return j.rc;
}

/* ---- Remove ------------------------------------------------------------------------- */

typedef struct remove_job {
    cw_job job;
    cw_storage *st;
    const char *partition;
    const uint8_t *name;
    size_t len;
    int rc;
    cw_storage_error *err;
} remove_job;

static int remove_blob(remove_job *j, const char *dir)
{
    file_storage *fs = j->st->impl;
    char hex[2 * CW_BLOB_NAME_MAX + 1];
    cw_hex_encode(j->name, j->len, hex);
    char *path = path_join(fs->root, j->partition, hex);
    if (!path)
        return cw_fail_nomem(j->err, j->partition, hex);
    int e = unlink(path) == 0 ? 0 : errno;
    free(path);
    if (e == ENOENT)
        return cw_fail_blob_missing(j->err, j->partition, hex);
    if (e || (e = cw_file_sync_dir(dir)))
        return cw_fail_os(j->err, CW_ERR_IO, j->partition, hex, e, "removing the blob");
    return CW_OK;
}

static void remove_fn(cw_job *job)
{
    remove_job *j = (remove_job *)job;
    file_storage *fs = j->st->impl;
    char *dir = path_join(fs->root, j->partition, NULL);
    if (!dir) {
        j->rc = cw_fail_nomem(j->err, j->partition, NULL);
        return;
    }
    pthread_mutex_lock(&fs->lock);
    struct stat sb;
    int e;
    if (stat(dir, &sb) != 0 || !S_ISDIR(sb.st_mode))
        j->rc = cw_fail_partition_missing(j->err, j->partition);
    else if (j->name)
        j->rc = remove_blob(j, dir);
    else if ((e = cw_file_remove_tree(dir)) || (e = cw_file_sync_dir(fs->root)))
        j->rc = cw_fail_os(j->err, CW_ERR_IO, j->partition, NULL, e, "removing the partition");
    else
        j->rc = CW_OK;
    pthread_mutex_unlock(&fs->lock);
    free(dir);
}

static int file_remove(cw_storage *st, const char *partition, const uint8_t *name, size_t len,
                       cw_storage_error *err)
{
    remove_job j = {.job.fn = remove_fn,
                    .st = st,
                    .partition = partition,
                    .name = name,
                    .len = len,
                    .err = err};
    cw_offload_run(((file_storage *)st->impl)->io, &j.job);
    return j.rc;
}

/* ---- Scan ---------------------------------------------------------------------------- */

typedef struct scan_job {
    cw_job job;
    cw_storage *st;
    const char *partition;
    cw_blob_names *out;
    int rc;
    cw_storage_error *err;
} scan_job;

static int corrupt_entry(scan_job *j, const char *entry, const char *what)
{
    return cw_storage_fail(j->err, CW_ERR_PARTITION_CORRUPT, j->partition, NULL, 0,
                           "partition corrupt: %s: entry '%s' %s", j->partition, entry, what);
}

/* Add one directory entry: it must be one of our blob files. */
static int scan_entry(scan_job *j, int dirfd, const char *entry)
{
    struct stat sb;
    if (fstatat(dirfd, entry, &sb, AT_SYMLINK_NOFOLLOW) != 0)
        return cw_fail_os(j->err, CW_ERR_IO, j->partition, NULL, errno, entry);
    if (!S_ISREG(sb.st_mode))
        return corrupt_entry(j, entry, "is not a regular file");
    uint8_t name[CW_BLOB_NAME_MAX + 1];
    size_t len;
    if (strlen(entry) > 2 * CW_BLOB_NAME_MAX || !cw_hex_decode(entry, name, &len))
        return corrupt_entry(j, entry, "is not a blob name in lowercase hex");
    if (!cw_names_add(j->out, name, len))
        return cw_fail_nomem(j->err, j->partition, NULL);
    return CW_OK;
}

static void scan_fn(cw_job *job)
{
    scan_job *j = (scan_job *)job;
    file_storage *fs = j->st->impl;
    char *dir = path_join(fs->root, j->partition, NULL);
    if (!dir) {
        j->rc = cw_fail_nomem(j->err, j->partition, NULL);
        return;
    }
    pthread_mutex_lock(&fs->lock);
    DIR *d = opendir(dir);
    if (!d) {
        j->rc = errno == ENOENT || errno == ENOTDIR
                    ? cw_fail_partition_missing(j->err, j->partition)
                    : cw_fail_os(j->err, CW_ERR_IO, j->partition, NULL, errno, dir);
    } else {
        j->rc = CW_OK;
        struct dirent *e;
        while (j->rc == CW_OK && (e = readdir(d)))
            if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0)
                j->rc = scan_entry(j, dirfd(d), e->d_name);
        closedir(d);
    }
    pthread_mutex_unlock(&fs->lock);
    free(dir);
}

static int file_scan(cw_storage *st, const char *partition, cw_blob_names *out,
                     cw_storage_error *err)
{
    scan_job j = {.job.fn = scan_fn, .st = st, .partition = partition, .out = out, .err = err};
    cw_offload_run(((file_storage *)st->impl)->io, &j.job);
    return j.rc;
}

/* ---- The storage itself --------------------------------------------------------------- */

static int file_init(cw_storage *st, char *why, size_t whylen)
{
    file_storage *fs = calloc(1, sizeof *fs);
    if (!fs)
        return ENOMEM;
    const cw_config *cfg = &st->rt->cfg;
    const char *tmp = getenv("TMPDIR");
    fs->io = cw_offload_new(st->rt, cfg->blocking_threads);
    fs->ring = cw_container_of(st->rt, cw_native, rt)->uring;
    /* No directory given: one of the run's own, gone with the run. */
    fs->root = cfg->storage_directory
                   ? cw_strdup(cfg->storage_directory)
                   : path_join(tmp && tmp[0] ? tmp : "/tmp", "cwrt-storage-XXXXXX", NULL);
    if (!fs->io || !fs->root) {
        cw_offload_free(fs->io);
        free(fs->root);
        free(fs);
        return ENOMEM;
    }
    st->impl = fs;
    pthread_mutex_init(&fs->lock, NULL);
    atomic_init(&fs->inline_from, 0);
    if (cfg->storage_directory)
        return 0;
    if (!mkdtemp(fs->root)) {
        int e = errno;
        snprintf(why, whylen, "cannot make a directory %s: %s", fs->root, strerror(e));
        return e;
    }
    fs->ephemeral = true;
    return 0;
}

static void file_close(cw_bfile *f)
{
    file_file *ff = f->impl;
    close(ff->fd);
    free(ff);
}

static void file_drain(cw_storage *st)
{
    cw_offload_drain(((file_storage *)st->impl)->io);
}

static void file_free(cw_storage *st)
{
    file_storage *fs = st->impl;
    cw_offload_free(fs->io);
    if (fs->ephemeral)
        cw_file_remove_tree(fs->root);
    pthread_mutex_destroy(&fs->lock);
    free(fs->root);
    free(fs);
}

const cw_storage_driver cw_file_driver = {
    .init = file_init,
    .open = file_open,
    .remove = file_remove,
    .scan = file_scan,
    .read = cw_file_read,
    .write = cw_file_write,
    .resize = cw_file_resize,
    .sync = cw_file_sync,
    .start_sync = cw_file_start_sync,
    .close = file_close,
    .drain = file_drain,
    .free = file_free,
};
