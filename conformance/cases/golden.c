/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * golden.c - golden digests and an independent audit chain (golden.h).
 */
#include <fcntl.h>
#include <openssl/evp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cases/golden.h"
#include "harness/cwc.h"

/* One write with O_APPEND: the cases run in processes of their own. */
static void log_line(const char *name, const char *hex)
{
    const char *path = getenv("CWC_GOLDEN_LOG");
    if (!path || !*path)
        return;
    char line[256];
    int n = snprintf(line, sizeof line, "%s %s\n", name, hex);
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    ck_assert_msg(fd >= 0, "cannot open CWC_GOLDEN_LOG %s", path);
    ck_assert_int_eq(write(fd, line, (size_t)n), n);
    close(fd);
}

void cwc_golden(const char *name, const char *hex, const char *golden)
{
    log_line(name, hex);
    ck_assert_msg(!strcmp(hex, golden), "%s digest %s, expected %s", name, hex, golden);
}

void cwc_hex32(const uint8_t digest[32], char out[65])
{
    static const char digits[] = "0123456789abcdef";
    for (int i = 0; i < 32; i++) {
        out[2 * i] = digits[digest[i] >> 4];
        out[2 * i + 1] = digits[digest[i] & 15];
    }
    out[64] = '\0';
}

void cwc_chain_init(cwc_chain *c)
{
    memset(c->digest, 0, sizeof c->digest);
    c->md = NULL;
}

void cwc_chain_field(cwc_chain *c, const void *data, size_t len)
{
    uint8_t be[8];
    for (int i = 0; i < 8; i++)
        be[i] = (uint8_t)((uint64_t)len >> (56 - 8 * i));
    EVP_DigestUpdate(c->md, be, sizeof be);
    if (len > 0)
        EVP_DigestUpdate(c->md, data, len);
}

void cwc_chain_begin(cwc_chain *c, const char *label)
{
    c->md = EVP_MD_CTX_new();
    ck_assert_ptr_nonnull(c->md);
    ck_assert(EVP_DigestInit_ex(c->md, EVP_sha256(), NULL));
    cwc_chain_field(c, c->digest, sizeof c->digest);
    cwc_chain_str(c, label);
}

void cwc_chain_str(cwc_chain *c, const char *s)
{
    cwc_chain_field(c, s, strlen(s));
}

void cwc_chain_be(cwc_chain *c, int64_t v, size_t n)
{
    uint8_t be[16];
    uint64_t u = (uint64_t)v;
    for (size_t i = 0; i < n; i++) {
        size_t shift = 8 * (n - 1 - i);
        be[i] = shift >= 64 ? (v < 0 ? 0xff : 0) : (uint8_t)(u >> shift);
    }
    cwc_chain_field(c, be, n);
}

void cwc_chain_end(cwc_chain *c)
{
    unsigned len = 0;
    ck_assert(EVP_DigestFinal_ex(c->md, c->digest, &len) && len == sizeof c->digest);
    EVP_MD_CTX_free(c->md);
    c->md = NULL;
}

void cwc_chain_task(cwc_chain *c, uint64_t id, const char *label)
{
    cwc_chain_begin(c, "process_task");
    cwc_chain_be(c, (int64_t)id, 16);
    cwc_chain_str(c, label);
    cwc_chain_end(c);
}

void cwc_chain_hex(const cwc_chain *c, char out[65])
{
    cwc_hex32(c->digest, out);
}
