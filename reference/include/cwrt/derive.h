/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cwrt/derive.h - a copy of a reference backend's table that stays in force.
 *
 * Every object a run hands out (context, handle, channel, signal, waker,
 * buffer, pool, metric, blob, listener, stream, checkpoint...) names a
 * table, and every call made on the object goes through that table. A plain
 * copy of a reference table with one entry replaced is therefore bypassed:
 * its start entry begins a run whose objects name the original table.
 *
 * cw_backend_derive makes the copy a table of its own: a run started through
 * it (cw_start, cw_start_checkpoint, or cw_recover of one of its
 * checkpoints) stamps each of its objects with the copy, so every entry the
 * caller replaces in the copy, or in the nested tables (buffers, metrics,
 * storage, network) it points to, is the one called.
 *
 *     static cw_backend mine;
 *     static cw_buffer_ops my_buffers;
 *     cw_backend_derive(cw_backend_deterministic(), &mine);
 *     my_buffers = *mine.buffers;
 *     my_buffers.iobuf_slice = my_slice;     // calls the saved original inside
 *     mine.buffers = &my_buffers;
 *     mine.name = "mine";
 *     cw_start(&mine, NULL, root, NULL, &out);
 *
 * Limits: the start, start_checkpoint and recover entries of a derived table
 * are fixed functions, one set per slot, so a process derives at most
 * CW_DERIVE_MAX tables at once (deriving the same copy again reuses its
 * slot). A buffer or pool made outside any run names the table it was made
 * with (cw_iobuf_copy(&mine, ...)), as with any backend.
 */
#ifndef CWRT_DERIVE_H
#define CWRT_DERIVE_H

#include "cw/cw.h"

#ifdef __cplusplus
extern "C" {
#endif

/* How many derived tables a process can hold at once. */
#define CW_DERIVE_MAX 32

/* Fill `copy` with `base` (a reference backend, or a table derived from one)
 * and make its start, start_checkpoint and recover entries begin runs whose
 * objects name `copy`. Replace other entries afterwards; a replacement for
 * one of those three must end by calling the entry it replaced.
 * Ownership: the caller owns `copy`, which must stay at its address, and
 * unchanged in the entries a run may call, while any run or object of it
 * lives; `base` is only read. Returns CW_OK; CW_ERR_INVALID (copy left
 * alone) when an argument is NULL or `base` is neither a reference backend
 * nor derived from one; CW_ERR_NOMEM when all CW_DERIVE_MAX slots are in use. */
CW_EXTERN int cw_backend_derive(const cw_backend *base, cw_backend *copy);

/* Give back the slot of `copy`, which must have no run and no object left;
 * its start entries must not be called afterwards. A copy that was not
 * derived is ignored. */
CW_EXTERN void cw_backend_underive(cw_backend *copy);

#ifdef __cplusplus
}
#endif
#endif
