// SPDX-License-Identifier: Apache-2.0 OR MIT
//! The run's one random stream (spec/11-deterministic.md, "PRNG").
//!
//! xoshiro256** seeded by four splitmix64 outputs; the caller's
//! `random_bytes`, when given, are consumed first, 8 little-endian bytes an
//! output (DET-017). Every draw of the run (shuffle, `cw_random`) comes from
//! here, in call order, so a seed fixes the schedule.

pub struct Rng {
    s: [u64; 4],
    bytes: *const u8,
    left: usize,
}

fn splitmix64(x: &mut u64) -> u64 {
    *x = x.wrapping_add(0x9e37_79b9_7f4a_7c15);
    let mut z = *x;
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

impl Rng {
    /// `bytes`/`len` must stay readable for the life of the run (DET-017).
    pub fn new(seed: u64, bytes: *const u8, len: usize) -> Rng {
        let mut x = seed;
        let s = [
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
            splitmix64(&mut x),
        ];
        let left = if bytes.is_null() { 0 } else { len };
        Rng { s, bytes, left }
    }

    pub fn next(&mut self) -> u64 {
        if self.left > 0 {
            let n = self.left.min(8);
            let mut v = 0u64;
            for i in 0..n {
                // SAFETY: the caller keeps `left` bytes readable at `bytes`
                // (cw_config.random_bytes, DET-017), and i < n <= left.
                let b = unsafe { *self.bytes.add(i) };
                v |= (b as u64) << (8 * i);
            }
            // SAFETY: advancing within (or to the end of) the caller's buffer.
            self.bytes = unsafe { self.bytes.add(n) };
            self.left -= n;
            return v;
        }
        let s = &mut self.s;
        let result = s[1].wrapping_mul(5).rotate_left(7).wrapping_mul(9);
        let t = s[1] << 17;
        s[2] ^= s[0];
        s[3] ^= s[1];
        s[1] ^= s[2];
        s[0] ^= s[3];
        s[2] ^= t;
        s[3] = s[3].rotate_left(45);
        result
    }

    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}
