/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * http_request.c - reading the request line of a metrics scrape (MET-020).
 *
 * The line is read strictly, as RFC 9112 writes it: a method token, one
 * space, a target of visible characters, one space, HTTP/1. and a digit,
 * then the line's end. A scraper sends exactly that; anything looser is
 * refused with 400 rather than guessed at.
 */
#include <string.h>

#include "native/http_request.h"

enum { METHOD_MAX = 15, TARGET_MAX = 1023 };

size_t cw_http_head_len(const char *buf, size_t len)
{
    for (size_t i = 0; i + 1 < len; i++) {
        if (buf[i] == '\n' && buf[i + 1] == '\n')
            return i + 2;
        if (i + 3 < len && memcmp(buf + i, "\r\n\r\n", 4) == 0)
            return i + 4;
    }
    return 0;
}

/* RFC 9110's tchar: what a method token is made of. */
static bool token_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
           (c != '\0' && strchr("!#$%&'*+-.^_`|~", c) != NULL);
}

static bool visible(char c)
{
    return c > ' ' && c < 0x7f;
}

/* The length of the run of `ok` characters at `p`, at most `max` + 1. */
static size_t span(const char *p, const char *end, bool (*ok)(char), size_t max)
{
    size_t n = 0;
    while (p + n < end && n <= max && ok(p[n]))
        n++;
    return n;
}

/* "HTTP/1.x" then the line's end, at `p`. */
static bool version_and_end(const char *p, const char *end)
{
    size_t left = (size_t)(end - p);
    if (left < 9 || memcmp(p, "HTTP/1.", 7) != 0 || p[7] < '0' || p[7] > '9')
        return false;
    return p[8] == '\n' || (left >= 10 && p[8] == '\r' && p[9] == '\n');
}

/* Whether the target's path (before any '?') is exactly /metrics. */
static bool is_metrics(const char *target, size_t len)
{
    const char *q = memchr(target, '?', len);
    size_t path = q ? (size_t)(q - target) : len;
    return path == 8 && memcmp(target, "/metrics", 8) == 0;
}

cw_http_ask cw_http_request_read(const char *head, size_t len, bool *head_only)
{
    const char *p = head, *end = head + len;
    *head_only = false;
    size_t m = span(p, end, token_char, METHOD_MAX);
    if (m == 0 || m > METHOD_MAX || p + m >= end || p[m] != ' ')
        return CW_HTTP_UNREADABLE;
    const char *target = p + m + 1;
    size_t t = span(target, end, visible, TARGET_MAX);
    if (t == 0 || t > TARGET_MAX || target + t >= end || target[t] != ' ' ||
        !version_and_end(target + t + 1, end))
        return CW_HTTP_UNREADABLE;
    bool is_head = m == 4 && memcmp(p, "HEAD", 4) == 0;
    if (!is_head && !(m == 3 && memcmp(p, "GET", 3) == 0))
        return CW_HTTP_METHOD;
    *head_only = is_head;
    return is_metrics(target, t) ? CW_HTTP_METRICS : CW_HTTP_ELSEWHERE;
}
