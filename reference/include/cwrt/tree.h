/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * cwrt/tree.h - the supervision tree of a run of the reference, as text or
 * as a Graphviz graph, at any point of the run.
 *
 * Each task is shown as "label#id" ("root#0" for the root) with its state
 * (new, running, aborting, done), below the task that supervises it: the
 * task whose context, or a context derived from it with cw_child, it was
 * spawned from. Contexts not yet spawned from are not shown.
 */
#ifndef CWRT_TREE_H
#define CWRT_TREE_H

#include <stdio.h>

#include "cw/cw.h"

#ifdef __cplusplus
extern "C" {
#endif

enum cw_tree_format {
    CW_TREE_TEXT = 0, /* one task per line, two spaces of indent per level */
    CW_TREE_DOT = 1,  /* a digraph for Graphviz's dot, an edge from supervisor to task */
};

/* Write the tree of ctx's run to `out` (the caller's). CW_OK, CW_ERR_INVALID
 * for an unknown format or a context of a backend not of the reference,
 * CW_ERR_IO when writing failed. Call it from a task of the run. */
CW_EXTERN int cw_tree_dump(cw_ctx *ctx, FILE *out, int format);

#ifdef __cplusplus
}
#endif
#endif
