/*
 * prng.c - the deterministic backend's one random stream.
 *
 * xoshiro256** is small, fast and fully specified, which matters more here
 * than cryptographic strength: another implementation must be able to
 * reproduce the stream bit for bit from the seed (spec/11 [DET-002]).
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
    for (int i = 0; i < 4; i++)
        p->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t cw_prng_next(cw_prng *p)
{
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
