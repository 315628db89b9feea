/* SPDX-License-Identifier: Apache-2.0 OR MIT */
/*
 * vrng.h - the PRNG of spec/11-deterministic.md (xoshiro256** seeded by
 * splitmix64), written out again for the conformance vectors, so that the
 * cases that generate operations from a seed do not depend on the
 * implementation they check.
 */
#ifndef CWC_VRNG_H
#define CWC_VRNG_H

#include <stddef.h>
#include <stdint.h>

typedef struct vrng {
    uint64_t s[4];
} vrng;

static inline uint64_t vrng_splitmix64(uint64_t *x)
{
    uint64_t z = (*x += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static inline void vrng_seed(vrng *r, uint64_t seed)
{
    for (int i = 0; i < 4; i++)
        r->s[i] = vrng_splitmix64(&seed);
}

static inline uint64_t vrng_rotl(uint64_t v, int k)
{
    return (v << k) | (v >> (64 - k));
}

static inline uint64_t vrng_next(vrng *r)
{
    uint64_t *s = r->s;
    uint64_t out = vrng_rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = vrng_rotl(s[3], 45);
    return out;
}

/* A value in [0, n): next() % n, as the spec reduces. */
static inline uint64_t vrng_below(vrng *r, uint64_t n)
{
    return vrng_next(r) % n;
}

/* Bytes taken from next() eight at a time, least significant first. */
static inline void vrng_fill(vrng *r, uint8_t *out, size_t n)
{
    for (size_t i = 0; i < n; i += 8) {
        uint64_t v = vrng_next(r);
        for (size_t b = 0; b < 8 && i + b < n; b++, v >>= 8)
            out[i + b] = (uint8_t)v;
    }
}

#endif
