//! [`Sums`]: the per-bit weighted sums of SimHash, and how feature hashes are added to them.
//!
//! Bit `i` of the fingerprint is set when the weights of the features whose hash has bit `i`
//! set outweigh those whose hash has it clear.
//!
//! Under the default configuration every feature has weight exactly 1, so the sums are
//! `2 * ones[i] - units`, where `ones[i]` counts the hashes with bit `i` set: an exact integer,
//! whatever the order of the features. Counting those bits is the hot part, done bit-sliced
//! ([`add_units`](Sink::add_units), `bit_counter.rs`): the 64 per-bit counters are kept as bit
//! planes (one `u64` per binary digit of all 64 counters), and a carry-save adder tree adds 16
//! hashes to them in about 80 bitwise operations, instead of 64 additions per hash.

use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::simhash::features::sink::Sink;

use super::bit_counter::BitCounter;

/// The per-bit sums of the features added so far.
pub(crate) struct Sums {
    /// Sums of the features with weights other than 1.
    sums: [f64; 64],
    /// Per bit, the number of unit-weight hashes with that bit set.
    ones: BitCounter,
    /// Unit-weight hashes added in all.
    units: u64,
    /// Features added with a weight other than 1, positive.
    weighted: usize,
    /// Feature occurrences added with a weight that is not positive.
    ignored: usize,
}

impl Default for Sums {
    fn default() -> Self {
        Sums {
            sums: [0.0; 64],
            ones: BitCounter::default(),
            units: 0,
            weighted: 0,
            ignored: 0,
        }
    }
}

impl Sums {
    /// Adds one feature of weight `weight`.
    #[inline]
    pub(crate) fn add_weighted(&mut self, hash: u64, weight: f64) {
        if weight == 1.0 {
            self.ones.add_1(hash);
            self.units += 1;
            return;
        }
        if weight <= 0.0 || !weight.is_finite() {
            self.ignored += 1;
            return;
        }
        self.weighted += 1;
        // Byte j of the hash adds `weight * SIGNS[byte]` to bits 8j..8j+8: eight contiguous
        // lanes, which the compiler vectorizes.
        for (j, lanes) in self.sums.chunks_exact_mut(8).enumerate() {
            let signs = &SIGNS[((hash >> (8 * j)) & 0xff) as usize];
            for (sum, sign) in lanes.iter_mut().zip(signs) {
                *sum += weight * sign;
            }
        }
    }

    /// Per bit, the sum of the unit-weight hashes: `+1` for each with the bit set, `-1` for
    /// each with it clear.
    pub(crate) fn unit_sums(&self) -> [i64; 64] {
        self.ones
            .counts()
            .map(|ones| 2 * ones as i64 - self.units as i64)
    }

    /// Feature occurrences added, whatever their weight.
    pub(crate) fn occurrences(&self) -> usize {
        self.units as usize + self.weighted + self.ignored
    }

    /// # Errors
    /// [`Error::NoFeatures`] if no feature had a positive weight.
    pub(crate) fn fingerprint(&self) -> Result<Fingerprint> {
        if self.units == 0 && self.weighted == 0 {
            return Err(Error::NoFeatures);
        }
        let mut v = 0u64;
        for (bit, (sum, ones)) in self.sums.iter().zip(self.ones.counts()).enumerate() {
            // Exact in f64 below 2^53 unit features.
            let units = 2.0 * ones as f64 - self.units as f64;
            if sum + units > 0.0 {
                v |= 1 << bit;
            }
        }
        Ok(Fingerprint(v))
    }
}

impl Sink for Sums {
    #[inline]
    fn add(&mut self, hash: u64, idf: impl FnOnce() -> f64) {
        self.add_weighted(hash, idf());
    }

    /// Fastest with a multiple of 16 hashes.
    #[inline]
    fn add_units(&mut self, hashes: &[u64]) {
        let mut groups = hashes.chunks_exact(16);
        for group in &mut groups {
            self.ones.add_16(group);
        }
        for &hash in groups.remainder() {
            self.ones.add_1(hash);
        }
        self.units += hashes.len() as u64;
    }
}

/// `SIGNS[b][k]` is `+1.0` if bit `k` of the byte `b` is set, else `-1.0`.
static SIGNS: [[f64; 8]; 256] = {
    let mut table = [[0f64; 8]; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 8 {
            table[b][k] = if (b >> k) & 1 == 1 { 1.0 } else { -1.0 };
            k += 1;
        }
        b += 1;
    }
    table
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::simhash::sums::tests::random_hashes;

    /// The fingerprint of these weighted hashes, one floating-point sum per bit.
    fn reference(features: &[(u64, f64)]) -> Fingerprint {
        let mut sums = [0f64; 64];
        for &(h, w) in features {
            for (bit, s) in sums.iter_mut().enumerate() {
                *s += if (h >> bit) & 1 == 1 { w } else { -w };
            }
        }
        Fingerprint(
            sums.iter()
                .enumerate()
                .fold(0, |v, (bit, s)| if *s > 0.0 { v | 1 << bit } else { v }),
        )
    }

    #[test]
    fn unit_path_matches_float_path() {
        for n in [1usize, 2, 3, 10, 1000, 70_000] {
            let hashes = random_hashes(n, 0x1234_5678_9abc_def0);
            let mut one_at_a_time = Sums::default();
            let mut batch = Sums::default();
            for &h in &hashes {
                one_at_a_time.add_weighted(h, 1.0);
            }
            batch.add_units(&hashes);
            let mut features: Vec<(u64, f64)> = hashes.iter().map(|&h| (h, 1.0)).collect();
            let expected = reference(&features);
            assert_eq!(one_at_a_time.fingerprint().unwrap(), expected, "{n}");
            assert_eq!(batch.fingerprint().unwrap(), expected, "{n}");
            assert_eq!(one_at_a_time.occurrences(), n);
            assert_eq!(batch.occurrences(), n);
            // Mixed with weighted features.
            batch.add_weighted(hashes[0], 2.5);
            batch.add_weighted(hashes[0], 0.0);
            features.push((hashes[0], 2.5));
            assert_eq!(batch.fingerprint().unwrap(), reference(&features), "{n}");
            assert_eq!(batch.occurrences(), n + 2);
        }
    }

    #[test]
    fn no_positive_weight_is_no_features() {
        let mut sums = Sums::default();
        assert!(matches!(sums.fingerprint(), Err(Error::NoFeatures)));
        sums.add_weighted(1, 0.0);
        sums.add_units(&[]);
        assert!(matches!(sums.fingerprint(), Err(Error::NoFeatures)));
        assert_eq!(sums.occurrences(), 1);
    }

    #[test]
    fn sign_table_matches_bits() {
        for (b, signs) in SIGNS.iter().enumerate() {
            for (k, &sign) in signs.iter().enumerate() {
                assert_eq!(sign > 0.0, (b >> k) & 1 == 1);
            }
        }
    }
}
