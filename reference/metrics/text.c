/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * text.c - building OpenMetrics text: a growing string, escaping, and the
 * exact spelling of numbers.
 *
 * Escaping is where a hostile label value could break the output, so it
 * is total: every string becomes a valid escaped-string of the OpenMetrics
 * grammar. Backslash, double quote and newline are escaped, and any byte
 * that does not start a well-formed UTF-8 sequence is written as U+FFFD.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "metrics/metrics.h"

/* A put that finds no memory marks the text failed, and the encoder gives
 * up on it at the end: one check instead of one after every put. */
void cw_text_put(cw_text *t, const char *s, size_t n)
{
    if (t->failed || !cw_grow(&t->buf, &t->cap, t->len + n + 1, 1, 256)) {
        t->failed = true;
        return;
    }
    memcpy(t->buf + t->len, s, n);
    t->len += n;
    t->buf[t->len] = '\0';
}

void cw_text_puts(cw_text *t, const char *s)
{
    cw_text_put(t, s, strlen(s));
}

static bool is_cont(unsigned char c, unsigned char lo, unsigned char hi)
{
    return c >= lo && c <= hi;
}

/* The length of the well-formed UTF-8 sequence at `s` (RFC 3629: no
 * overlong forms, no surrogates, nothing above U+10FFFF), or 0. */
static size_t utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    if (c >= 0xc2 && c <= 0xdf)
        return is_cont(s[1], 0x80, 0xbf) ? 2 : 0;
    if (c >= 0xe0 && c <= 0xef) {
        unsigned char lo = c == 0xe0 ? 0xa0 : 0x80, hi = c == 0xed ? 0x9f : 0xbf;
        return is_cont(s[1], lo, hi) && is_cont(s[2], 0x80, 0xbf) ? 3 : 0;
    }
    if (c >= 0xf0 && c <= 0xf4) {
        unsigned char lo = c == 0xf0 ? 0x90 : 0x80, hi = c == 0xf4 ? 0x8f : 0xbf;
        return is_cont(s[1], lo, hi) && is_cont(s[2], 0x80, 0xbf) && is_cont(s[3], 0x80, 0xbf) ? 4
                                                                                               : 0;
    }
    return 0;
}

void cw_text_escaped(cw_text *t, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        /* Copy the longest run that needs nothing done in one go. */
        const unsigned char *run = p;
        size_t n;
        while (*p && *p != '\\' && *p != '"' && *p != '\n' && (n = utf8_len(p)) != 0)
            p += n;
        cw_text_put(t, (const char *)run, (size_t)(p - run));
        if (!*p)
            break;
        if (*p == '\\')
            cw_text_put(t, "\\\\", 2);
        else if (*p == '"')
            cw_text_put(t, "\\\"", 2);
        else if (*p == '\n')
            cw_text_put(t, "\\n", 2);
        else
            cw_text_put(t, "\xef\xbf\xbd", 3); /* U+FFFD for a byte that is not UTF-8 */
        p++;
    }
}

void cw_text_u64(cw_text *t, uint64_t v)
{
    char buf[24];
    cw_text_put(t, buf, (size_t)snprintf(buf, sizeof buf, "%" PRIu64, v));
}

void cw_text_i64(cw_text *t, int64_t v)
{
    char buf[24];
    cw_text_put(t, buf, (size_t)snprintf(buf, sizeof buf, "%" PRId64, v));
}

/* The fewest significant digits that read back as `v`: writes them to
 * `digits` (no point, no sign) and returns the decimal exponent of the
 * first one. */
static int shortest_digits(double v, char digits[20])
{
    char buf[32];
    for (int prec = 1; prec <= 17; prec++) {
        snprintf(buf, sizeof buf, "%.*e", prec - 1, v);
        if (strtod(buf, NULL) == v)
            break;
    }
    size_t n = 0;
    const char *p = buf;
    for (; *p && *p != 'e'; p++)
        if (*p >= '0' && *p <= '9')
            digits[n++] = *p;
    while (n > 1 && digits[n - 1] == '0')
        n--;
    digits[n] = '\0';
    return atoi(p + 1);
}

void cw_text_double(cw_text *t, double v)
{
    if (isnan(v)) {
        cw_text_puts(t, "NaN");
        return;
    }
    if (isinf(v)) {
        cw_text_puts(t, v > 0 ? "+Inf" : "-Inf");
        return;
    }
    if (signbit(v)) {
        cw_text_puts(t, "-");
        v = -v;
    }
    if (v == 0) {
        cw_text_puts(t, "0.0");
        return;
    }
    char d[20];
    int exp = shortest_digits(v, d);
    size_t n = strlen(d);
    if (exp < -6 || exp >= 21) {
        /* d[0], then the rest after a point, then the exponent: 1e-7, 1.5e21. */
        char tail[16];
        cw_text_put(t, d, 1);
        if (n > 1) {
            cw_text_puts(t, ".");
            cw_text_put(t, d + 1, n - 1);
        }
        cw_text_put(t, tail, (size_t)snprintf(tail, sizeof tail, "e%d", exp));
    } else if (exp < 0) {
        cw_text_puts(t, "0.");
        for (int i = -1; i > exp; i--)
            cw_text_puts(t, "0");
        cw_text_put(t, d, n);
    } else {
        size_t whole = (size_t)exp + 1;
        cw_text_put(t, d, n < whole ? n : whole);
        for (size_t i = n; i < whole; i++)
            cw_text_puts(t, "0");
        cw_text_puts(t, ".");
        if (n > whole)
            cw_text_put(t, d + whole, n - whole);
        else
            cw_text_puts(t, "0");
    }
}
