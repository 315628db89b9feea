/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * memory_storage.c - storage in memory, for the deterministic backend, keeping
 * apart exactly what a crash would keep and what it could lose.
 *
 * Each name of a partition has its *durable* bytes (what a crash keeps:
 * header included) and a generation number, unique in the storage, that a
 * creation, a healing and a crash renew. Each open file has its own *live*
 * bytes, which its handles read and write: they start as a copy of the
 * durable bytes, and another open of the same name does not see them.
 *
 *   write          live only, and the change is journaled as unsynced
 *   write + SYNC   live, and that range of the durable bytes; the part of
 *                  earlier unsynced writes it covers leaves the journal
 *   resize         live only, journaled
 *   sync           the durable bytes become the live bytes (copying only the
 *                  range the open changed, when nothing else changed them);
 *                  the file's journal is emptied
 *   open (create)  the header is written to the durable bytes at once
 *
 * The journal lists every unsynced change of the storage in issue order,
 * so a crash (cw_memory_crash) can replay any part of it onto the durable
 * bytes: drop it all, keep it all, or tear a write byte by byte, while
 * bytes outside every unsynced write never change. A change or a sync
 * through a file whose generation is no longer its name's (the blob was
 * removed, recreated, or crashed) changes nothing durable: such a sync or
 * SYNC write fails with CW_ERR_BLOB_MISSING.
 *
 * Partitions and names are kept sorted, so scans list names in order.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deterministic/det.h"

/* ---- Growing byte strings ----------------------------------------------------------- */

typedef struct bytes {
    uint8_t *data;
    size_t len, cap;
} bytes;

/* Set the length to n, adding zeros; CW_ERR_NOMEM when it cannot grow. */
static int bytes_resize(bytes *b, uint64_t n)
{
    if (!cw_grow(&b->data, &b->cap, n, 1, 64))
        return CW_ERR_NOMEM;
    if (n > b->len)
        memset(b->data + b->len, 0, (size_t)n - b->len);
    b->len = (size_t)n;
    return CW_OK;
}

/* Room for n bytes, so that a write up to there cannot fail. */
static bool bytes_reserve(bytes *b, uint64_t n)
{
    return n <= SIZE_MAX && cw_grow(&b->data, &b->cap, (size_t)n, 1, 64);
}

/* Write the iovecs at `offset`, extending with zeros as needed: after
 * bytes_reserve(b, offset + total), it cannot fail. */
static void bytes_write(bytes *b, uint64_t offset, const struct iovec *iov, int n, size_t total)
{
    if (offset + total > b->len) {
        int rc = bytes_resize(b, offset + total);
        (void)rc; /* within the reserved room */
    }
    size_t at = (size_t)offset;
    for (int i = 0; i < n; i++) {
        memcpy(b->data + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
}

/* The iovecs' bytes in one new block; NULL when memory is exhausted. */
static uint8_t *gather(const struct iovec *iov, int n, size_t total)
{
    uint8_t *out = malloc(total ? total : 1);
    size_t at = 0;
    for (int i = 0; out && i < n; i++) {
        memcpy(out + at, iov[i].iov_base, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    return out;
}

static int bytes_assign(bytes *b, const uint8_t *src, size_t len)
{
    b->len = 0;
    int rc = bytes_resize(b, len);
    if (rc == CW_OK && len > 0)
        memcpy(b->data, src, len);
    return rc;
}

/* ---- The storage -------------------------------------------------------------------- */

typedef struct mem_blob {
    uint8_t *name;
    size_t len;
    bytes durable;
    uint64_t generation;
    uint64_t stamp; /* counts the changes of `durable` */
} mem_blob;

typedef struct mem_partition {
    char *name;
    mem_blob **blobs; /* sorted by name */
    size_t n, cap;
} mem_partition;

/* An unsynced change, as the journal keeps it. */
typedef struct mem_change {
    uint64_t generation; /* of the blob it changed */
    bool resize;
    uint64_t offset, len; /* a write's range, or a resize's new length in len */
    uint8_t *data;        /* a write's bytes */
} mem_change;

typedef struct mem_storage {
    mem_partition **parts; /* sorted by name */
    size_t n, cap;
    uint64_t generations; /* the last one handed out */
    mem_change *changes;  /* the journal, in issue order */
    size_t nchanges, cap_changes;
} mem_storage;

/* An open. Its live bytes equal the durable ones outside [dirty_lo,
 * dirty_hi) while `stamp` is the blob's: a sync then copies only that
 * range, not the whole blob. */
typedef struct mem_file {
    bytes live;
    uint64_t generation;
    uint64_t stamp;
    uint64_t dirty_lo, dirty_hi;
} mem_file;

static void dirty(mem_file *mf, uint64_t lo, uint64_t hi)
{
    if (mf->dirty_lo >= mf->dirty_hi) {
        mf->dirty_lo = lo;
        mf->dirty_hi = hi;
        return;
    }
    mf->dirty_lo = lo < mf->dirty_lo ? lo : mf->dirty_lo;
    mf->dirty_hi = hi > mf->dirty_hi ? hi : mf->dirty_hi;
}

static int name_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen)
{
    size_t n = alen < blen ? alen : blen;
    int c = memcmp(a, b, n);
    return c ? c : (alen > blen) - (alen < blen);
}

/* Make room for one more pointer in a sorted array and put `item` at
 * `at`; false, with nothing changed, when memory is exhausted. */
static bool insert_at(void ***items, size_t *n, size_t *cap, size_t at, void *item)
{
    if (!cw_grow(items, cap, *n + 1, sizeof **items, 8))
        return false;
    memmove(*items + at + 1, *items + at, (*n - at) * sizeof **items);
    (*items)[at] = item;
    (*n)++;
    return true;
}

static void remove_at(void **items, size_t *n, size_t at)
{
    memmove(items + at, items + at + 1, (*n - at - 1) * sizeof *items);
    (*n)--;
}

static int partition_cmp(const void *key, const void *elem)
{
    return strcmp(key, (*(mem_partition *const *)elem)->name);
}

/* The partition named `name` (its index in *at), or NULL with *at where it would go. */
static mem_partition *partition_find(const mem_storage *ms, const char *name, size_t *at)
{
    bool found;
    *at = cw_sorted_find(ms->parts, ms->n, sizeof *ms->parts, name, partition_cmp, &found);
    return found ? ms->parts[*at] : NULL;
}

typedef struct blob_key {
    const uint8_t *name;
    size_t len;
} blob_key;

static int blob_cmp(const void *key, const void *elem)
{
    const blob_key *k = key;
    const mem_blob *b = *(mem_blob *const *)elem;
    return name_cmp(k->name, k->len, b->name, b->len);
}

static mem_blob *blob_find(const mem_partition *p, const uint8_t *name, size_t len, size_t *at)
{
    bool found;
    blob_key k = {name, len};
    *at = cw_sorted_find(p->blobs, p->n, sizeof *p->blobs, &k, blob_cmp, &found);
    /* found only in a partition that has blobs: p->blobs is set then */
    return found ? p->blobs[*at] : NULL; // NOLINT(clang-analyzer-core.NullDereference)
}

static void blob_free(mem_blob *b);
static void partition_free(mem_partition *p);

/* The partition, made if missing; NULL when memory is exhausted. */
static mem_partition *partition_get(mem_storage *ms, const char *partition)
{
    size_t at;
    mem_partition *p = partition_find(ms, partition, &at);
    if (p)
        return p;
    p = calloc(1, sizeof *p);
    if (p && (p->name = cw_strdup(partition)) &&
        insert_at((void ***)&ms->parts, &ms->n, &ms->cap, at, p))
        return p;
    if (p)
        partition_free(p);
    return NULL;
}

/* The blob, made empty if missing; NULL when memory is exhausted, with
 * nothing made. */
static mem_blob *blob_get(mem_storage *ms, const char *partition, const uint8_t *name, size_t len)
{
    size_t at;
    bool existed = partition_find(ms, partition, &at) != NULL;
    mem_partition *p = partition_get(ms, partition);
    mem_blob *b = p ? blob_find(p, name, len, &at) : NULL;
    if (!p || b)
        return b;
    b = calloc(1, sizeof *b);
    if (b && (b->name = malloc(len))) {
        memcpy(b->name, name, len);
        b->len = len;
        if (insert_at((void ***)&p->blobs, &p->n, &p->cap, at, b))
            return b;
    }
    if (b)
        blob_free(b);
    if (!existed) { /* made just now for this blob */
        partition_find(ms, partition, &at);
        remove_at((void **)ms->parts, &ms->n, at);
        partition_free(p);
    }
    return NULL;
}

/* The blob `f` opened, if its name still refers to it. */
static mem_blob *blob_current(const cw_bfile *f)
{
    const mem_storage *ms = f->st->impl;
    const mem_file *mf = f->impl;
    size_t at;
    const mem_partition *p = partition_find(ms, f->partition, &at);
    mem_blob *b = p ? blob_find(p, f->name, f->name_len, &at) : NULL;
    return b && b->generation == mf->generation ? b : NULL;
}

/* ---- The journal of unsynced changes ------------------------------------------------ */

/* Room for `more` changes, so that the pushes after it cannot fail. */
static bool journal_reserve(mem_storage *ms, size_t more)
{
    return cw_grow(&ms->changes, &ms->cap_changes, ms->nchanges + more, sizeof *ms->changes, 16);
}

/* After journal_reserve. */
static void journal_push(mem_storage *ms, mem_change c)
{
    ms->changes[ms->nchanges++] = c;
}

/* NULL when memory is exhausted. */
static uint8_t *copy_range(const uint8_t *src, size_t len)
{
    uint8_t *copy = malloc(len ? len : 1);
    if (copy && len)
        memcpy(copy, src, len);
    return copy;
}

/* Forget the changes `gone` picks (synced, or their blob is gone). */
static void journal_drop_if(mem_storage *ms, bool (*gone)(const void *arg, uint64_t generation),
                            const void *arg)
{
    size_t kept = 0;
    for (size_t i = 0; i < ms->nchanges; i++) {
        mem_change c = ms->changes[i];
        if (gone(arg, c.generation))
            free(c.data);
        else
            ms->changes[kept++] = c;
    }
    ms->nchanges = kept;
}

static bool is_generation(const void *arg, uint64_t generation)
{
    return *(const uint64_t *)arg == generation;
}

static void journal_drop(mem_storage *ms, uint64_t generation)
{
    journal_drop_if(ms, is_generation, &generation);
}

/* A SYNC write made [lo, hi) of `generation` durable: the bytes earlier
 * unsynced writes had there can no longer land over it. What is left of
 * each write keeps its place in the issue order. Everything the new
 * journal needs is made first (retire_prepare), so that a retire either
 * happens whole or not at all. */
typedef struct retire_plan {
    uint64_t generation, lo, hi;
    mem_change *fresh; /* the new journal */
    size_t cap;
    uint8_t **tails; /* copies of the tails of the writes cut in two */
} retire_plan;

static bool overlaps(const retire_plan *r, const mem_change *c)
{
    return c->generation == r->generation && !c->resize && c->offset + c->len > r->lo &&
           c->offset < r->hi;
}

static bool cut_in_two(const retire_plan *r, const mem_change *c)
{
    return overlaps(r, c) && c->offset < r->lo && c->offset + c->len > r->hi;
}

static void retire_discard(retire_plan *r, size_t ntails)
{
    for (size_t i = 0; r->tails && i < ntails; i++)
        free(r->tails[i]);
    free(r->tails);
    free(r->fresh);
}

static bool retire_prepare(const mem_storage *ms, retire_plan *r)
{
    size_t ntails = 0;
    for (size_t i = 0; i < ms->nchanges; i++)
        ntails += cut_in_two(r, &ms->changes[i]);
    r->cap = ms->nchanges + ntails;
    r->fresh = malloc((r->cap ? r->cap : 1) * sizeof *r->fresh);
    r->tails = calloc(ntails ? ntails : 1, sizeof *r->tails);
    bool made = r->fresh && r->tails;
    for (size_t i = 0, k = 0; made && i < ms->nchanges; i++) {
        const mem_change *c = &ms->changes[i];
        if (!cut_in_two(r, c))
            continue;
        r->tails[k] =
            copy_range(c->data + (r->hi - c->offset), (size_t)(c->offset + c->len - r->hi));
        made = r->tails[k++] != NULL;
    }
    if (!made)
        retire_discard(r, ntails);
    return made;
}

static void retire_commit(mem_storage *ms, retire_plan *r)
{
    size_t m = 0, k = 0;
    for (size_t i = 0; i < ms->nchanges; i++) {
        mem_change c = ms->changes[i];
        uint64_t end = c.offset + c.len;
        if (!overlaps(r, &c)) {
            r->fresh[m++] = c;
            continue;
        }
        bool head = c.offset<r->lo, tail = end> r->hi;
        if (head) /* a prefix of its own bytes: they stay where they are */
            r->fresh[m++] = (mem_change){c.generation, false, c.offset, r->lo - c.offset, c.data};
        if (head && tail)
            r->fresh[m++] = (mem_change){c.generation, false, r->hi, end - r->hi, r->tails[k++]};
        if (!head && tail) {
            memmove(c.data, c.data + (r->hi - c.offset), (size_t)(end - r->hi));
            r->fresh[m++] = (mem_change){c.generation, false, r->hi, end - r->hi, c.data};
        }
        if (!head && !tail)
            free(c.data);
    }
    free(ms->changes);
    free(r->tails);
    ms->changes = r->fresh;
    ms->nchanges = m;
    ms->cap_changes = r->cap;
}

static mem_blob *blob_of_generation(const mem_storage *ms, uint64_t generation)
{
    for (size_t i = 0; i < ms->n; i++)
        for (size_t j = 0; j < ms->parts[i]->n; j++)
            if (ms->parts[i]->blobs[j]->generation == generation)
                return ms->parts[i]->blobs[j];
    return NULL;
}

/* Within the room the write or resize reserved (durable_reserve): a
 * crash allocates nothing. */
static void replay(mem_blob *b, const mem_change *c, size_t index, const cw_crash_policy *policy)
{
    if (c->resize) {
        if (policy->keep_resize(policy->arg, index))
            (void)bytes_resize(&b->durable, c->len);
        return;
    }
    for (uint64_t i = 0; i < c->len; i++) {
        if (!policy->keep_byte(policy->arg, index, i))
            continue;
        if (c->offset + i >= b->durable.len)
            (void)bytes_resize(&b->durable, c->offset + i + 1);
        b->durable.data[c->offset + i] = c->data[i];
    }
}

void cw_memory_crash(cw_storage *st, const cw_crash_policy *policy)
{
    mem_storage *ms = st->impl;
    for (size_t i = 0; i < ms->nchanges; i++) {
        mem_blob *b = blob_of_generation(ms, ms->changes[i].generation);
        if (b)
            replay(b, &ms->changes[i], i, policy);
        free(ms->changes[i].data);
    }
    ms->nchanges = 0;
    /* Every file open before the crash now refers to a blob that is gone. */
    for (size_t i = 0; i < ms->n; i++)
        for (size_t j = 0; j < ms->parts[i]->n; j++) {
            ms->parts[i]->blobs[j]->generation = ++ms->generations;
            ms->parts[i]->blobs[j]->stamp++;
        }
}

/* The run's storage faults decide what a crash keeps [STOR-033]: one
 * cw_keep per write, begun at its first byte. */
typedef struct fault_policy {
    cw_storage *st;
    cw_keep keep;
    size_t change; /* the write `keep` is for */
    bool begun;
} fault_policy;

static bool keep_faulty_byte(void *arg, size_t change, uint64_t byte)
{
    fault_policy *p = arg;
    (void)byte;
    if (!p->begun || p->change != change) {
        cw_keep_begin(&p->keep, p->st);
        p->change = change;
        p->begun = true;
    }
    return cw_keep_next(&p->keep);
}

static bool keep_faulty_resize(void *arg, size_t change)
{
    fault_policy *p = arg;
    (void)change;
    return cw_rt_chance(p->st->rt, p->st->faults.resize_kept);
}

void cw_storage_crash(cw_storage *st)
{
    fault_policy p = {st, {0}, 0, false};
    const cw_crash_policy faulty = {keep_faulty_byte, keep_faulty_resize, &p};
    cw_memory_crash(st, &faulty);
}

/* ---- The driver ----------------------------------------------------------------------- */

/* The partitions of a memory storage, moved between runs as they are. */
struct cw_mem_image {
    mem_partition **parts;
    size_t n, cap;
    uint64_t generations;
};

static int mem_init(cw_storage *st, char *why, size_t whylen)
{
    (void)why;
    (void)whylen;
    mem_storage *ms = calloc(1, sizeof *ms);
    if (!ms)
        return ENOMEM;
    cw_mem_image *img = cw_det_of(st->rt)->inherit_storage;
    if (img) {
        /* A recovered run: its storage is what the crashed one made durable. */
        ms->parts = img->parts;
        ms->n = img->n;
        ms->cap = img->cap;
        ms->generations = img->generations;
        free(img);
        cw_det_of(st->rt)->inherit_storage = NULL;
    }
    st->impl = ms;
    return 0;
}

/* Write the header of a new blob into the durable bytes: a fresh blob
 * replaces whatever was there, so its old changes go too. */
static int create(mem_storage *ms, mem_blob *b, cw_bfile *f, cw_blob_range versions)
{
    uint8_t region[CW_BLOB_HEADER_MAX];
    size_t len;
    int rc = cw_header_create(f->st->layouts.last, versions.last, region, sizeof region, &len);
    if (rc != CW_OK)
        return rc;
    rc = bytes_assign(&b->durable, region, len);
    if (rc != CW_OK)
        return rc;
    journal_drop(ms, b->generation);
    b->generation = ++ms->generations;
    b->stamp++;
    f->layout = f->st->layouts.last;
    f->version = versions.last;
    f->data_offset = len;
    return CW_OK;
}

static int mem_open(cw_bfile *f, cw_blob_range versions, uint64_t *size, cw_storage_error *err)
{
    mem_storage *ms = f->st->impl;
    mem_blob *b = blob_get(ms, f->partition, f->name, f->name_len);
    if (!b)
        return cw_fail_nomem(err, f->partition, f->hex);
    cw_blob_header h;
    int rc = cw_header_resolve(b->durable.data, b->durable.len, f->st->layouts, versions, &h);
    if (rc != CW_OK)
        return cw_header_error(f, rc, &h, err);
    if (h.fresh) {
        rc = create(ms, b, f, versions);
        *size = 0;
    } else {
        f->layout = h.layout;
        f->version = h.version;
        f->data_offset = h.data_offset;
        *size = h.size;
    }
    mem_file *mf = calloc(1, sizeof *mf);
    if (!mf)
        rc = CW_ERR_NOMEM;
    if (rc == CW_OK) {
        mf->generation = b->generation;
        mf->stamp = b->stamp;
        rc = bytes_assign(&mf->live, b->durable.data, b->durable.len);
    }
    if (rc != CW_OK) {
        if (mf)
            free(mf->live.data);
        free(mf);
        return cw_storage_fail(err, rc, f->partition, f->hex, 0, "%s", cw_strerror(rc));
    }
    f->impl = mf;
    return CW_OK;
}

static void blob_free(mem_blob *b)
{
    free(b->durable.data);
    free(b->name);
    free(b);
}

static void partition_free(mem_partition *p)
{
    for (size_t i = 0; i < p->n; i++)
        blob_free(p->blobs[i]);
    free(p->blobs);
    free(p->name);
    free(p);
}

cw_mem_image *cw_mem_image_new(void)
{
    return calloc(1, sizeof(cw_mem_image));
}

cw_mem_image *cw_memory_take(cw_rt *rt, cw_mem_image *spare)
{
    cw_storage *st = cw_ext_state(rt, CW_EXT_STORAGE);
    if (!st) {
        cw_mem_image *img = cw_det_of(rt)->inherit_storage;
        cw_det_of(rt)->inherit_storage = NULL;
        if (!img)
            return spare;
        free(spare);
        return img;
    }
    if (st->driver != &cw_memory_driver)
        cw_fatal("a checkpoint needs memory storage");
    cw_storage_crash(st);
    mem_storage *ms = st->impl;
    cw_mem_image *img = spare;
    img->parts = ms->parts;
    img->n = ms->n;
    img->cap = ms->cap;
    img->generations = ms->generations;
    ms->parts = NULL;
    ms->n = ms->cap = 0;
    return img;
}

void cw_mem_image_free(cw_mem_image *img)
{
    for (size_t i = 0; i < img->n; i++)
        partition_free(img->parts[i]);
    free(img->parts);
    free(img);
}

static bool in_partition(const void *arg, uint64_t generation)
{
    const mem_partition *p = arg;
    for (size_t i = 0; i < p->n; i++)
        if (p->blobs[i]->generation == generation)
            return true;
    return false;
}

static int mem_remove(cw_storage *st, const char *partition, const uint8_t *name, size_t len,
                      cw_storage_error *err)
{
    mem_storage *ms = st->impl;
    size_t pat, bat;
    mem_partition *p = partition_find(ms, partition, &pat);
    if (!p)
        return cw_fail_partition_missing(err, partition);
    if (!name) {
        journal_drop_if(ms, in_partition, p);
        remove_at((void **)ms->parts, &ms->n, pat);
        partition_free(p);
        return CW_OK;
    }
    mem_blob *b = blob_find(p, name, len, &bat);
    if (!b) {
        char hex[2 * CW_BLOB_NAME_MAX + 1];
        cw_hex_encode(name, len, hex);
        return cw_fail_blob_missing(err, partition, hex);
    }
    journal_drop(ms, b->generation);
    remove_at((void **)p->blobs, &p->n, bat);
    blob_free(b);
    return CW_OK;
}

static int mem_scan(cw_storage *st, const char *partition, cw_blob_names *out,
                    cw_storage_error *err)
{
    size_t at;
    mem_partition *p = partition_find(st->impl, partition, &at);
    if (!p)
        return cw_fail_partition_missing(err, partition);
    for (size_t i = 0; i < p->n; i++)
        if (!cw_names_add(out, p->blobs[i]->name, p->blobs[i]->len))
            return cw_fail_nomem(err, partition, NULL);
    return CW_OK;
}

static int mem_read(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t total,
                    cw_read_options options, cw_storage_error *err)
{
    (void)options;
    const bytes *live = &((mem_file *)f->impl)->live;
    if (offset > live->len || total > live->len - offset)
        return cw_storage_fail(err, CW_ERR_BLOB_INSUFFICIENT_LENGTH, f->partition, f->hex, 0,
                               "blob insufficient length");
    size_t at = (size_t)offset;
    for (int i = 0; i < n; i++) {
        memcpy(iov[i].iov_base, live->data + at, iov[i].iov_len);
        at += iov[i].iov_len;
    }
    return CW_OK;
}

/* Room in the durable bytes of f's blob for `n`, so that neither a synced
 * write nor a crash replaying an unsynced one (cw_memory_crash) has to
 * allocate. A removed blob's file has nothing to reserve. */
static bool durable_reserve(cw_bfile *f, uint64_t n)
{
    mem_blob *b = blob_current(f);
    return !b || bytes_reserve(&b->durable, n);
}

static int mem_write(cw_bfile *f, uint64_t offset, const struct iovec *iov, int n, size_t total,
                     cw_write_options options, cw_storage_error *err)
{
    mem_storage *ms = f->st->impl;
    mem_file *mf = f->impl;
    mem_blob *b = NULL;
    if (options & CW_WRITE_SYNC) {
        b = blob_current(f);
        if (!b)
            return cw_fail_blob_missing(err, f->partition, f->hex);
    }
    /* Everything the write needs is had before anything changes, even the
     * room a crash needs to replay it onto the durable bytes. */
    retire_plan plan = {b ? b->generation : 0, offset, offset + total, NULL, 0, NULL};
    uint8_t *copy = b ? NULL : gather(iov, n, total);
    if (!bytes_reserve(&mf->live, offset + total) || !durable_reserve(f, offset + total) ||
        (b ? !retire_prepare(ms, &plan) : !copy || !journal_reserve(ms, 1))) {
        free(copy);
        return cw_fail_nomem(err, f->partition, f->hex);
    }
    /* A gap before the bytes reads as zeros here; the durable bytes may
     * still hold what a resize took away, so the gap is dirty too. */
    uint64_t from = offset < mf->live.len ? offset : mf->live.len;
    bytes_write(&mf->live, offset, iov, n, total);
    if (b) {
        bytes_write(&b->durable, offset, iov, n, total);
        /* The same bytes on both sides: still equal outside the dirty range. */
        if (mf->stamp == b->stamp++)
            mf->stamp = b->stamp;
        if (from < offset)
            dirty(mf, from, offset);
        retire_commit(ms, &plan);
    } else {
        dirty(mf, from, offset + total);
        journal_push(ms, (mem_change){mf->generation, false, offset, total, copy});
    }
    return CW_OK;
}

static int mem_resize(cw_bfile *f, uint64_t len, cw_storage_error *err)
{
    mem_file *mf = f->impl;
    uint64_t old = mf->live.len;
    if (!journal_reserve(f->st->impl, 1) || !durable_reserve(f, len) ||
        bytes_resize(&mf->live, len) != CW_OK)
        return cw_fail_nomem(err, f->partition, f->hex);
    /* Either way the bytes between the two lengths differ from the
     * durable ones: zeros now, or gone (and zeros once they come back). */
    if (len != old)
        dirty(mf, len < old ? len : old, len < old ? old : len);
    mem_change c = {mf->generation, true, 0, len, NULL};
    journal_push(f->st->impl, c);
    return CW_OK;
}

static int mem_sync(cw_bfile *f, cw_storage_error *err)
{
    mem_file *mf = f->impl;
    mem_blob *b = blob_current(f);
    if (!b)
        return cw_fail_blob_missing(err, f->partition, f->hex);
    if (mf->stamp != b->stamp) {
        if (bytes_assign(&b->durable, mf->live.data, mf->live.len) != CW_OK)
            return cw_fail_nomem(err, f->partition, f->hex);
    } else {
        /* Only what this open changed differs: the new length, the dirty range. */
        if (bytes_resize(&b->durable, mf->live.len) != CW_OK)
            return cw_fail_nomem(err, f->partition, f->hex);
        uint64_t hi = mf->dirty_hi < mf->live.len ? mf->dirty_hi : mf->live.len;
        if (mf->dirty_lo < hi)
            memcpy(b->durable.data + mf->dirty_lo, mf->live.data + mf->dirty_lo,
                   (size_t)(hi - mf->dirty_lo));
    }
    mf->stamp = ++b->stamp;
    mf->dirty_lo = mf->dirty_hi = 0;
    journal_drop(f->st->impl, b->generation);
    return CW_OK;
}

static void mem_start_sync(cw_bfile *f, cw_handle *h)
{
    cw_blob_sync_done(f, h, mem_sync(f, NULL));
}

static void mem_close(cw_bfile *f)
{
    mem_file *mf = f->impl;
    free(mf->live.data);
    free(mf);
}

static void mem_drain(cw_storage *st)
{
    (void)st; /* start_sync completes before it returns */
}

static void mem_free(cw_storage *st)
{
    mem_storage *ms = st->impl;
    for (size_t i = 0; i < ms->nchanges; i++)
        free(ms->changes[i].data);
    free(ms->changes);
    for (size_t i = 0; i < ms->n; i++)
        partition_free(ms->parts[i]);
    free(ms->parts);
    free(ms);
}

void cw_memory_walk(const cw_storage *st, const cw_memory_visitor *v, void *arg)
{
    const mem_storage *ms = st->impl;
    for (size_t i = 0; i < ms->n; i++) {
        const mem_partition *p = ms->parts[i];
        v->partition(arg, p->name, p->n);
        for (size_t j = 0; j < p->n; j++) {
            const mem_blob *b = p->blobs[j];
            v->blob(arg, b->name, b->len, b->durable.data, b->durable.len);
        }
    }
}

static int mem_audit(cw_storage *st, char out[65])
{
    return cw_memory_audit(st, out);
}

static uint64_t mem_length(const cw_bfile *f)
{
    return ((const mem_file *)f->impl)->live.len;
}

const cw_storage_driver cw_memory_driver = {
    .init = mem_init,
    .open = mem_open,
    .remove = mem_remove,
    .scan = mem_scan,
    .read = mem_read,
    .write = mem_write,
    .resize = mem_resize,
    .sync = mem_sync,
    .start_sync = mem_start_sync,
    .close = mem_close,
    .drain = mem_drain,
    .free = mem_free,
    .length = mem_length,
    .audit = mem_audit,
};
