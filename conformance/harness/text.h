/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * text.h - making any bytes safe to write into a report: a backend's name
 * or a failure message may hold anything, and each format has its rules.
 */
#ifndef CWC_TEXT_H
#define CWC_TEXT_H

#include <stdio.h>

/* Copy `in` to `out` (of `len` bytes, NUL-terminated) as valid UTF-8: each
 * byte that does not start a well-formed sequence (overlong forms,
 * surrogates and code points past U+10FFFF included) becomes U+FFFD, and so
 * does each control character (C0 but tab and newline, DEL) unless
 * `keep_controls`. Truncates on a character boundary. Returns `out`. */
char *cwc_clean_utf8(const char *in, int keep_controls, char *out, size_t len);
/* Write `s` (already clean) as XML character data or attribute value. */
void cwc_xml_escape(FILE *f, const char *s);

#endif
