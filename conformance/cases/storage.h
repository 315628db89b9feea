/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage.h - what the storage case files share: a configuration whose
 * storage is a directory of the case's own (on a backend that keeps files),
 * and one-line calls that fail the case when storage does.
 */
#ifndef CWC_CASES_STORAGE_H
#define CWC_CASES_STORAGE_H

#include <string.h>

#include "cases/util.h"

#define PERSIST CW_CAP_PERSISTENT_STORAGE

/* A run configuration and the directory it keeps its storage in. */
typedef struct cwc_store {
    cw_config cfg;
    char dir[256]; /* "" on a backend without CW_CAP_PERSISTENT_STORAGE */
} cwc_store;

bool cwc_persistent(void);
/* The default configuration, with storage_directory a fresh directory
 * under /tmp on a backend that keeps files. */
void cwc_store_begin(cwc_store *s);
/* Remove the directory and everything in it. A failing case ends before
 * this, leaving its files to look at. */
void cwc_store_end(cwc_store *s);
/* One run of `root` with its own storage, required to succeed. */
void *cwc_store_run(cw_task_fn root, void *arg);

/* Open `name` (a C string) of `partition`, required to succeed. */
cw_blob *cwc_open(cw_ctx *ctx, const char *partition, const char *name, uint64_t *size);
void cwc_write(cw_blob *b, uint64_t offset, const void *data, size_t len);
void cwc_sync(cw_blob *b);
/* Read `len` bytes at `offset` and require them equal to `expect`. */
void cwc_read_eq(cw_blob *b, uint64_t offset, const void *expect, size_t len);
/* The status of reading `len` bytes at `offset` (the buffer is released). */
int cwc_read_rc(cw_blob *b, uint64_t offset, size_t len);
/* Whether a scan of `partition` lists `name`; the scan must succeed. */
bool cwc_scan_has(cw_ctx *ctx, const char *partition, const void *name, size_t len);

/* The encoded metrics contain `needle` (true when the backend has none). */
bool cwc_metrics_show(cw_ctx *ctx, const char *needle);

/* Write `len` bytes to the file `<dir>/<partition>/<hex>`, making the
 * partition's directory; read a file whole (malloc'd, size in *len). */
void cwc_file_put(const char *dir, const char *partition, const char *hex, const void *data,
                  size_t len);
uint8_t *cwc_file_get(const char *dir, const char *partition, const char *hex, size_t *len);

#endif
