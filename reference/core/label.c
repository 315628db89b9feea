/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * label.c - the rules for context labels and attribute keys.
 *
 * Labels become metric name prefixes, so they follow the metric name
 * grammar: an ASCII letter, then letters, digits or '_'. The prefix
 * "runtime" is reserved for the runtime's own metrics and is checked on the
 * joined path, so "runtime" and "runtime_x" are refused at the top level
 * while "a_runtime" is fine.
 */
#include <stdlib.h>
#include <string.h>

#include "core/internal.h"

static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_alnum_(char c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '_';
}

const char *cw_label_check(const char *label)
{
    if (!label || !is_alpha(label[0]))
        return "label must start with [a-zA-Z]";
    for (const char *p = label + 1; *p; p++)
        if (!is_alnum_(*p))
            return "label must only contain [a-zA-Z0-9_]";
    return NULL;
}

char *cw_label_join(const char *prefix, const char *label)
{
    size_t plen = strlen(prefix), llen = strlen(label);
    char *out = malloc(plen + 1 + llen + 1);
    if (!out)
        return NULL;
    if (plen) {
        memcpy(out, prefix, plen);
        out[plen] = '_';
        memcpy(out + plen + 1, label, llen);
    } else {
        memcpy(out, label, llen);
    }
    out[plen ? plen + 1 + llen : llen] = '\0';
    return out;
}
