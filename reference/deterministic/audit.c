/*
 * audit.c - the audit digest: a SHA-256 hash chain over observable events.
 *
 * Each event hashes the previous digest, the event's label and its fields,
 * every one of them length-prefixed with a big-endian u64, so that no two
 * different event streams can be spliced into the same bytes.
 *
 * An event is recorded at every task resumption, so the hashing context and
 * the digest implementation are set up once per run, not once per event.
 */
#include <stddef.h>
#include <string.h>

#include <openssl/evp.h>

#include "deterministic/det.h"

static void put_field(EVP_MD_CTX *md, const void *data, size_t len)
{
    uint8_t be[8];
    cw_be64(be, len);
    EVP_DigestUpdate(md, be, sizeof be);
    if (len)
        EVP_DigestUpdate(md, data, len);
}

int cw_auditor_init(cw_auditor *a)
{
    memset(a->digest, 0, sizeof a->digest);
    cw_auditor_log_to(a, NULL, NULL, NULL);
    a->md = EVP_MD_fetch(NULL, "SHA256", NULL);
    a->md_ctx = EVP_MD_CTX_new();
    /* OpenSSL reports exhausted memory and a missing provider alike. */
    return a->md && a->md_ctx ? CW_OK : CW_ERR_NOMEM;
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
    EVP_MD_CTX_free(a->md_ctx);
    EVP_MD_free(a->md);
    a->md = a->md_ctx = NULL;
}

void cw_auditor_event(cw_auditor *a, const char *label, const cw_field *fields, size_t n)
{
    EVP_MD_CTX *md = a->md_ctx;
    if (!EVP_DigestInit_ex2(md, a->md, NULL))
        cw_fatal("cannot start a SHA-256 digest");
    put_field(md, a->digest, sizeof a->digest);
    put_field(md, label, strlen(label));
    for (size_t i = 0; i < n; i++)
        put_field(md, fields[i].data, fields[i].len);
    unsigned int len = 0;
    if (!EVP_DigestFinal_ex(md, a->digest, &len) || len != sizeof a->digest)
        cw_fatal("cannot finish a SHA-256 digest");
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
