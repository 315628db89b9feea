/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * label.c - the label grammar [CTX-002] and the reserved prefix [CTX-003].
 *
 * A bad label is the caller's mistake, found where it is made: the calling
 * task panics with a message naming the rule, as spec/00-conventions.md
 * asks for misuse the caller could have checked.
 */
#include <stdio.h>
#include <string.h>

#include "label.h"
#include "skeleton.h"

/* isalpha and friends depend on the locale; the grammar is ASCII only. */
static bool is_alpha(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}

static bool is_word(char c)
{
    return is_alpha(c) || (c >= '0' && c <= '9') || c == '_';
}

void sk_label_check(const char *label)
{
    if (!is_alpha(label[0]))
        sk_panic("label must start with [a-zA-Z]: %s", label);
    for (const char *p = label; *p; p++)
        if (!is_word(*p))
            sk_panic("label must only contain [a-zA-Z0-9_]: %s", label);
}

/* Only the head of the joined path is built, in a small buffer, so the
 * panic leaves nothing allocated behind. */
void sk_label_check_reserved(const char *parent, const char *label)
{
    const char *sep = parent[0] ? "_" : "";
    char head[8];
    snprintf(head, sizeof head, "%s%s%s", parent, sep, label);
    if (strcmp(head, "runtime") == 0)
        sk_panic("using runtime label is not allowed: %s%s%s", parent, sep, label);
}
