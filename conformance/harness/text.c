/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * text.c - UTF-8 validation by the table of well-formed sequences in the
 * Unicode standard (Table 3-7), and XML escaping.
 */
#include <string.h>

#include "harness/text.h"

/* The length of the well-formed sequence at `s`, or 0. */
static size_t sequence_length(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c < 0x80)
        return 1;
    size_t n = c >= 0xC2 && c <= 0xDF   ? 2
               : c >= 0xE0 && c <= 0xEF ? 3
               : c >= 0xF0 && c <= 0xF4 ? 4
                                        : 0;
    if (!n)
        return 0;
    /* The second byte's range depends on the first; the rest are 80..BF. */
    unsigned char lo = c == 0xE0 ? 0xA0 : c == 0xF0 ? 0x90 : 0x80;
    unsigned char hi = c == 0xED ? 0x9F : c == 0xF4 ? 0x8F : 0xBF;
    if (s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < n; i++)
        if (s[i] < 0x80 || s[i] > 0xBF)
            return 0;
    return n;
}

static int is_control(unsigned char c)
{
    return (c < 0x20 && c != '\t' && c != '\n') || c == 0x7F;
}

char *cwc_clean_utf8(const char *in, int keep_controls, char *out, size_t len)
{
    static const char replacement[] = "\xEF\xBF\xBD";
    const unsigned char *s = (const unsigned char *)in;
    size_t o = 0;
    while (*s) {
        size_t n = sequence_length(s);
        const char *piece = (const char *)s;
        size_t take = n;
        if (!n || (!keep_controls && n == 1 && is_control(*s)))
            piece = replacement, take = 3;
        if (o + take + 1 > len)
            break;
        memcpy(out + o, piece, take);
        o += take;
        s += n ? n : 1;
    }
    out[o] = '\0';
    return out;
}

void cwc_xml_escape(FILE *f, const char *s)
{
    for (; *s; s++)
        switch (*s) {
        case '&':
            fputs("&amp;", f);
            break;
        case '<':
            fputs("&lt;", f);
            break;
        case '>':
            fputs("&gt;", f);
            break;
        case '"':
            fputs("&quot;", f);
            break;
        case '\'':
            fputs("&apos;", f);
            break;
        case '\n':
            fputs("&#10;", f);
            break;
        case '\t':
            fputs("&#9;", f);
            break;
        default:
            fputc(*s, f);
        }
}
