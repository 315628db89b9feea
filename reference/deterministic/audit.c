/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * audit.c - the audit digest: a SHA-256 hash chain over observable events.
 *
 * Each event hashes the previous digest, the event's label and its fields,
 * every one of them length-prefixed with a big-endian u64, so that no two
 * different event streams can be spliced into the same bytes.
 *
 * An event is recorded at every task resumption, so its cost is the cost of
 * a task switch: one context, made once per run, hashes every event. The
 * digest calls are libcrypto's SHA256_* rather than EVP's: the same
 * assembly (SHA extensions where the CPU has them), without EVP's provider
 * dispatch on every update, which cost as much as the hashing itself for
 * events this small (bench/runtime.c measures both).
 */
#define OPENSSL_SUPPRESS_DEPRECATED /* SHA256_*: deprecated in 3.0, not removed */
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include <openssl/sha.h>

#include "deterministic/det.h"

static void put_field(SHA256_CTX *sha, const void *data, size_t len)
{
    uint8_t be[8];
    cw_be64(be, len);
    SHA256_Update(sha, be, sizeof be);
    if (len)
        SHA256_Update(sha, data, len);
}

int cw_auditor_init(cw_auditor *a)
{
    memset(a->digest, 0, sizeof a->digest);
    cw_auditor_log_to(a, NULL, NULL, NULL);
    a->sha = malloc(sizeof(SHA256_CTX));
    return a->sha ? CW_OK : CW_ERR_NOMEM;
}

void cw_auditor_log_to(cw_auditor *a, cw_event_fn log, void *arg, const cw_time *clock)
{
    a->log = log;
    a->log_arg = arg;
    a->clock = clock;
    a->logged = 0;
}

/* The internal field list is the public one: the log is given it as is. */
_Static_assert(sizeof(cw_field) == sizeof(cw_event_field) &&
                   offsetof(cw_field, data) == offsetof(cw_event_field, data) &&
                   offsetof(cw_field, len) == offsetof(cw_event_field, len),
               "cw_field and cw_event_field differ");

static void log_event(cw_auditor *a, const char *label, const cw_field *fields, size_t n)
{
    cw_event ev = {a->logged++, *a->clock, label, (const cw_event_field *)fields, n, {0}};
    memcpy(ev.digest, a->digest, sizeof ev.digest);
    a->log(a->log_arg, &ev);
}

void cw_auditor_free(cw_auditor *a)
{
    free(a->sha);
    a->sha = NULL;
}

/* An event small enough (a task resumption is about 100 bytes) is encoded
 * into one buffer and hashed with one update: each SHA256_Update call costs
 * about 50 instructions before it hashes a byte, and an event field by field
 * makes ten of them. A larger event is hashed field by field, as it is. */
enum { CW_AUDIT_INLINE = 256 };

static uint8_t *encode_field(uint8_t *out, const void *data, size_t len)
{
    cw_be64(out, len);
    if (len)
        memcpy(out + 8, data, len);
    return out + 8 + len;
}

/* Whether the event's encoding fits the buffer; counted down from the room
 * left, so that no field's length, however large, can wrap the sum. */
static bool fits_inline(size_t label_len, const cw_field *fields, size_t n)
{
    size_t room = CW_AUDIT_INLINE - (8 + 32);
    if (room < 8 || label_len > room - 8)
        return false;
    room -= 8 + label_len;
    for (size_t i = 0; i < n; i++) {
        if (room < 8 || fields[i].len > room - 8)
            return false;
        room -= 8 + fields[i].len;
    }
    return true;
}

static void hash_inline(SHA256_CTX *sha, const uint8_t digest[32], const char *label,
                        size_t label_len, const cw_field *fields, size_t n)
{
    uint8_t bytes[CW_AUDIT_INLINE];
    uint8_t *end = encode_field(bytes, digest, 32);
    end = encode_field(end, label, label_len);
    for (size_t i = 0; i < n; i++)
        end = encode_field(end, fields[i].data, fields[i].len);
    SHA256_Update(sha, bytes, (size_t)(end - bytes));
}

void cw_auditor_event(cw_auditor *a, const char *label, const cw_field *fields, size_t n)
{
    /* The SHA256_* calls cannot fail on a context that exists. */
    SHA256_CTX *sha = a->sha;
    size_t label_len = strlen(label);
    SHA256_Init(sha);
    if (fits_inline(label_len, fields, n)) {
        hash_inline(sha, a->digest, label, label_len, fields, n);
    } else {
        put_field(sha, a->digest, sizeof a->digest);
        put_field(sha, label, label_len);
        for (size_t i = 0; i < n; i++)
            put_field(sha, fields[i].data, fields[i].len);
    }
    SHA256_Final(a->digest, sha);
    if (a->log)
        log_event(a, label, fields, n);
}

void cw_auditor_hex(const cw_auditor *a, char out[65])
{
    static const char hex[] = "0123456789abcdef";
    for (size_t i = 0; i < sizeof a->digest; i++) {
        out[2 * i] = hex[a->digest[i] >> 4];
        out[2 * i + 1] = hex[a->digest[i] & 15];
    }
    out[64] = '\0';
}
