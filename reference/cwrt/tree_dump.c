/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * tree_dump.c - the supervision tree as text or DOT (cwrt/tree.h).
 *
 * The core walks the tree (core/tree_walk.c) and hands each task over in
 * the order a reader expects, its depth and the task above it included;
 * this file only prints. Output errors are collected from the stream at
 * the end, as stdio keeps them.
 */
#include <stdbool.h>

#include "core/ext.h"
#include "cwrt/tree.h"

typedef struct dump {
    FILE *out;
    int format;
    bool begun; /* the graph's header is out (DOT) */
} dump;

/* "label#id", the root as "root#0". */
static void put_name(FILE *out, const cw_tree_entry *e)
{
    fprintf(out, "%s#%llu", e->label, (unsigned long long)e->id);
}

static void put_entry(const cw_tree_entry *e, void *arg)
{
    dump *d = arg;
    if (d->format == CW_TREE_DOT && !d->begun) {
        fputs("digraph tasks {\n  node [shape=box, fontname=\"monospace\"];\n", d->out);
        d->begun = true;
    }
    if (d->format == CW_TREE_TEXT) {
        fprintf(d->out, "%*s", 2 * e->depth, "");
        put_name(d->out, e);
        fprintf(d->out, " (%s)\n", e->state);
        return;
    }
    fprintf(d->out, "  t%llu [label=\"", (unsigned long long)e->id);
    put_name(d->out, e);
    fprintf(d->out, "\\n%s\"];\n", e->state);
    if (e->id != e->parent)
        fprintf(d->out, "  t%llu -> t%llu;\n", (unsigned long long)e->parent,
                (unsigned long long)e->id);
}

int cw_tree_dump(cw_ctx *ctx, FILE *out, int format)
{
    if (format != CW_TREE_TEXT && format != CW_TREE_DOT)
        return CW_ERR_INVALID;
    dump d = {out, format, false};
    /* Nothing is written for a context the core does not own: the header
     * goes out with the first task. */
    int rc = cw_core_tree_walk(ctx, put_entry, &d);
    if (d.begun)
        fputs("}\n", out);
    if (rc == CW_OK && (fflush(out) != 0 || ferror(out)))
        rc = CW_ERR_IO;
    return rc;
}
