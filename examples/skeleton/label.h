/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * label.h - checks on labels and attribute keys (label.c).
 */
#ifndef SKELETON_LABEL_H
#define SKELETON_LABEL_H

/* Panic the calling task unless `label` matches [a-zA-Z][a-zA-Z0-9_]*. */
void sk_label_check(const char *label);
/* Panic the calling task when the path `parent`_`label` starts with
 * "runtime" (`label` alone under the root, whose path is ""). */
void sk_label_check_reserved(const char *parent, const char *label);

#endif
