/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * http_request.h - what a request head asks of the metrics endpoint
 * (MET-020): a pure function of its bytes, apart from the sockets so that
 * it can be tested and fuzzed on its own.
 */
#ifndef CW_NATIVE_HTTP_REQUEST_H
#define CW_NATIVE_HTTP_REQUEST_H

#include <stdbool.h>
#include <stddef.h>

/* The largest request head the endpoint reads, its final empty line
 * included. */
#define CW_HTTP_HEAD_MAX 8192

typedef enum cw_http_ask {
    CW_HTTP_UNREADABLE, /* 400: no request line the rule reads */
    CW_HTTP_METHOD,     /* 405: a method other than GET and HEAD */
    CW_HTTP_ELSEWHERE,  /* 404: another path than /metrics */
    CW_HTTP_METRICS,    /* 200: the registry's text */
} cw_http_ask;

/* The length of the head at the start of `buf` (through its empty line,
 * CRLF CRLF or LF LF), or 0 while `len` bytes hold no complete head. */
size_t cw_http_head_len(const char *buf, size_t len);

/* What the head `head` (`len` bytes, as cw_http_head_len measured it)
 * asks; *head_only tells a HEAD from a GET. */
cw_http_ask cw_http_request_read(const char *head, size_t len, bool *head_only);

#endif
