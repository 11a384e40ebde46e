//! SplitMix64: the benchmarks' deterministic random numbers (fingerprints, ids, bit flips).

/// A SplitMix64 generator seeded with its state.
pub struct SplitMix(pub u64);

// Each benchmark uses some of these.
#[allow(dead_code)]
impl SplitMix {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    /// A number below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next()) * u128::from(n)) >> 64) as u64
    }

    /// `fp` with `d` random bits flipped (possibly the same bit twice: at most `d`).
    pub fn flip(&mut self, fp: u64, d: u32) -> u64 {
        (0..d).fold(fp, |acc, _| acc ^ (1 << self.below(64)))
    }
}
