/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * storage_audit.c - a digest of everything a memory storage would keep
 * through a crash (spec/17-storage.md, STOR-036), so that a test can say
 * two runs left the same disk without reading every blob back.
 *
 * Each item enters as the audit digest's fields do, its length first, so
 * no two layouts of partitions, names and bytes hash alike (a partition
 * "ab" holding blob "c" is not partition "a" holding "bc").
 */
#include <openssl/evp.h>
#include <stdio.h>
#include <string.h>

#include "deterministic/det.h"

static void put(EVP_MD_CTX *md, const void *data, size_t len)
{
    uint8_t be[8];
    cw_be64(be, len);
    EVP_DigestUpdate(md, be, sizeof be);
    if (len)
        EVP_DigestUpdate(md, data, len);
}

static void put_partition(void *arg, const char *name, size_t nblobs)
{
    uint8_t n[8];
    cw_be64(n, nblobs);
    put(arg, name, strlen(name));
    put(arg, n, sizeof n);
}

static void put_blob(void *arg, const uint8_t *name, size_t len, const uint8_t *bytes, size_t n)
{
    put(arg, name, len);
    put(arg, bytes, n);
}

int cw_memory_audit(const cw_storage *st, char out[65])
{
    static const char tag[] = "cw-storage-audit";
    static const cw_memory_visitor hash = {put_partition, put_blob};
    EVP_MD_CTX *md = EVP_MD_CTX_new();
    uint8_t digest[32];
    unsigned len = 0;
    if (!md || !EVP_DigestInit_ex(md, EVP_sha256(), NULL)) {
        EVP_MD_CTX_free(md);
        return CW_ERR_NOMEM;
    }
    put(md, tag, sizeof tag - 1);
    cw_memory_walk(st, &hash, md);
    EVP_DigestFinal_ex(md, digest, &len);
    EVP_MD_CTX_free(md);
    for (int i = 0; i < 32; i++)
        snprintf(out + 2 * i, 3, "%02x", digest[i]);
    return CW_OK;
}
