/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * prng.c - the deterministic backend's one random stream.
 *
 * xoshiro256** is small, fast and fully specified, which matters more here
 * than cryptographic strength: another implementation must be able to
 * reproduce the stream bit for bit from the seed (spec/11 [DET-002]).
 *
 * A run may take its stream from the caller's bytes first [DET-017]: a
 * fuzzer's input then decides the schedule, the jitter and the faults.
 * The generator stays at the seed's first state while they last, so what
 * follows them is the stream a run without them begins with.
 */
#include <string.h>

#include "deterministic/det.h"

static uint64_t splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

void cw_prng_seed(cw_prng *p, uint64_t seed)
{
    p->bytes = NULL;
    p->len = p->at = 0;
    for (int i = 0; i < 4; i++)
        p->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

void cw_prng_take_bytes(cw_prng *p, const uint8_t *bytes, size_t len)
{
    p->bytes = len ? bytes : NULL;
    p->len = len;
    p->at = 0;
}

/* The next 8 of the caller's bytes, little-endian, zeros past their end. */
static uint64_t from_bytes(cw_prng *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8 && p->at < p->len; i++)
        v |= (uint64_t)p->bytes[p->at++] << (8 * i);
    if (p->at == p->len)
        p->bytes = NULL;
    return v;
}

uint64_t cw_prng_next(cw_prng *p)
{
    if (p->bytes)
        return from_bytes(p);
    uint64_t *s = p->s;
    uint64_t result = rotl(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return result;
}

uint64_t cw_prng_below(cw_prng *p, uint64_t bound)
{
    return cw_prng_next(p) % bound;
}

void cw_prng_fill(cw_prng *p, void *buf, size_t len)
{
    unsigned char *out = buf;
    while (len) {
        uint64_t v = cw_prng_next(p);
        unsigned char bytes[8];
        for (int i = 0; i < 8; i++)
            bytes[i] = (unsigned char)(v >> (8 * i)); /* little-endian: specified */
        size_t n = len < 8 ? len : 8;
        memcpy(out, bytes, n);
        out += n;
        len -= n;
    }
}
