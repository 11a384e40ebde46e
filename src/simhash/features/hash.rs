//! xxh3-64, the hash of every feature, as the fingerprinter calls it.
//!
//! Nearly all features are short: an ideograph is 3 bytes of UTF-8, a Chinese word 6 to 12, a
//! Latin trigram 3. xxhash-rust's `xxh3_64_with_seed` serves every length; inlined whole into
//! a loop, its seed-dependent setup for long inputs is computed on every call. Here inputs
//! of up to 16 bytes are hashed with the keys of xxh3's short paths computed once per seed
//! ([`SeededXxh3`]), and longer ones by xxhash-rust out of line. The values are exactly
//! xxh3's (tested against xxhash-rust below, for every input of up to 2 bytes, every
//! character and every length up to 300): fingerprints do not depend on this file.

use xxhash_rust::xxh3::xxh3_64_with_seed;

/// `xxh3_64_with_seed(bytes, seed)` out of line, for the inputs [`SeededXxh3`] has no short
/// path for: inlined, its setup would be computed in every loop that hashes.
#[inline(never)]
fn xxh3_long(bytes: &[u8], seed: u64) -> u64 {
    xxh3_64_with_seed(bytes, seed)
}

/// Words of xxh3's default secret XORed as its paths for inputs of up to 16 bytes use them
/// (little-endian bytes 0..4 ^ 4..8; 8..16 ^ 16..24; 24..32 ^ 32..40; 40..48 ^ 48..56),
/// before the seed is applied.
const SECRET_1TO3: u32 = 0x8727_5a9b;
const SECRET_4TO8: u64 = 0xc73a_b174_c5ec_d5a2;
const SECRET_9TO16: [u64; 2] = [0x6782_737b_ea42_39b9, 0xaf56_bc3b_0996_523a];

/// xxh3-64 under one seed, `xxh3_64_with_seed(bytes, seed)`, with the keys of its paths for
/// inputs of 1 to 16 bytes (nearly all features: an ideograph is 3 bytes, a Chinese word 6 to
/// 12, a Latin trigram 3) computed once instead of on every call.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SeededXxh3 {
    seed: u64,
    key_1to3: u64,
    key_4to8: u64,
    key_9to16: [u64; 2],
}

impl SeededXxh3 {
    pub(crate) fn new(seed: u64) -> SeededXxh3 {
        SeededXxh3 {
            seed,
            key_1to3: u64::from(SECRET_1TO3).wrapping_add(seed),
            key_4to8: SECRET_4TO8
                .wrapping_sub(seed ^ (u64::from((seed as u32).swap_bytes()) << 32)),
            key_9to16: [
                SECRET_9TO16[0].wrapping_add(seed),
                SECRET_9TO16[1].wrapping_sub(seed),
            ],
        }
    }

    /// `xxh3_64_with_seed(bytes, seed)`.
    #[inline(always)]
    pub(crate) fn hash(&self, bytes: &[u8]) -> u64 {
        match *bytes {
            [a] => self.hash_1to3(a, a, a, 1),
            [a, b] => self.hash_1to3(a, b, b, 2),
            [a, b, c] => self.hash_1to3(a, b, c, 3),
            _ => match (bytes.first_chunk::<4>(), bytes.last_chunk::<4>()) {
                (Some(first), Some(last)) if bytes.len() <= 8 => {
                    self.hash_4to8(*first, *last, bytes.len())
                }
                _ => match (bytes.first_chunk::<8>(), bytes.last_chunk::<8>()) {
                    (Some(first), Some(last)) if bytes.len() <= 16 => {
                        self.hash_9to16(*first, *last, bytes.len())
                    }
                    _ => xxh3_long(bytes, self.seed),
                },
            },
        }
    }

    /// 1 to 3 bytes: the first, middle and last one and the length, keyed, through xxh64's
    /// avalanche.
    #[inline(always)]
    fn hash_1to3(&self, first: u8, middle: u8, last: u8, len: u32) -> u64 {
        let combo =
            (u32::from(first) << 16) | (u32::from(middle) << 24) | u32::from(last) | (len << 8);
        xxh64_avalanche(u64::from(combo) ^ self.key_1to3)
    }

    /// 4 to 8 bytes: the first and the last four, keyed, through xxh3's strong avalanche.
    #[inline(always)]
    fn hash_4to8(&self, first: [u8; 4], last: [u8; 4], len: usize) -> u64 {
        let input = u64::from(u32::from_le_bytes(last))
            .wrapping_add(u64::from(u32::from_le_bytes(first)) << 32);
        let mut h = input ^ self.key_4to8;
        h ^= h.rotate_left(49) ^ h.rotate_left(24);
        h = h.wrapping_mul(0x9FB2_1C65_1E98_DF25);
        h ^= (h >> 35).wrapping_add(len as u64);
        h = h.wrapping_mul(0x9FB2_1C65_1E98_DF25);
        h ^ (h >> 28)
    }

    /// 9 to 16 bytes: the first and the last eight, keyed, folded with their 128-bit product
    /// and through xxh3's avalanche.
    #[inline(always)]
    fn hash_9to16(&self, first: [u8; 8], last: [u8; 8], len: usize) -> u64 {
        let lo = u64::from_le_bytes(first) ^ self.key_9to16[0];
        let hi = u64::from_le_bytes(last) ^ self.key_9to16[1];
        let product = u128::from(lo) * u128::from(hi);
        let folded = (product as u64) ^ ((product >> 64) as u64);
        let mut h = (len as u64)
            .wrapping_add(lo.swap_bytes())
            .wrapping_add(hi)
            .wrapping_add(folded);
        h ^= h >> 37;
        h = h.wrapping_mul(0x1656_6791_9E37_79F9);
        h ^ (h >> 32)
    }
}

/// xxh64's final mix.
#[inline(always)]
fn xxh64_avalanche(mut h: u64) -> u64 {
    h ^= h >> 33;
    h = h.wrapping_mul(0xC2B2_AE3D_27D4_EB4F);
    h ^= h >> 29;
    h = h.wrapping_mul(0x1656_67B1_9E37_79F9);
    h ^ (h >> 32)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEEDS: [u64; 5] = [0, 1, 7, 0x9e37_79b9_7f4a_7c15, u64::MAX];

    #[test]
    fn seeded_xxh3_is_xxh3_for_every_short_input() {
        for seed in SEEDS {
            let hasher = SeededXxh3::new(seed);
            let check = |bytes: &[u8]| {
                assert_eq!(
                    hasher.hash(bytes),
                    xxh3_64_with_seed(bytes, seed),
                    "{bytes:?} seed {seed}"
                );
            };
            check(&[]);
            for a in 0..=255u8 {
                check(&[a]);
                for b in 0..=255u8 {
                    check(&[a, b]);
                }
            }
            // Every character of three bytes, and some of four.
            for c in ('\u{800}'..='\u{FFFF}').chain('\u{20000}'..='\u{20100}') {
                check(c.encode_utf8(&mut [0; 4]).as_bytes());
            }
            // Every length up to 300, pseudo-random bytes.
            let mut rng = seed | 1;
            let bytes: Vec<u8> = (0..300)
                .map(|_| {
                    rng ^= rng << 13;
                    rng ^= rng >> 7;
                    rng ^= rng << 17;
                    rng as u8
                })
                .collect();
            for start in 0..8 {
                for len in 0..bytes.len() - start {
                    check(&bytes[start..start + len]);
                }
            }
        }
    }
}
