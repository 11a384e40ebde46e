//! [`Sums`]: the per-bit weighted sums of SimHash, and how feature hashes are added to them.
//!
//! Bit `i` of the fingerprint is set when the weights of the features whose hash has bit `i`
//! set outweigh those whose hash has it clear.
//!
//! Under the default configuration every feature has weight exactly 1, so the sums are
//! `2 * ones[i] - units`, where `ones[i]` counts the hashes with bit `i` set: an exact integer,
//! whatever the order of the features. Counting those bits is the hot part, done bit-sliced
//! ([`add_units`](Sink::add_units)): the 64 per-bit counters are kept as bit planes (one
//! `u64` per binary digit of all 64 counters), and a carry-save adder tree adds 16 hashes to
//! them in about 80 bitwise operations, instead of 64 additions per hash.

use super::features::Sink;
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;

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

/// Per-bit corrections to the unit sums of a [`Sums`], for the weights that are known only
/// once the whole text is counted (`adaptive.rs`, `count_pieces.rs`): integers, so that the
/// result is exact and independent of the order they are added in.
pub(crate) struct Corrections([i64; 64]);

impl Corrections {
    pub(crate) fn new() -> Self {
        Corrections([0; 64])
    }

    /// Adds `weight` for the feature of hash `hash`: `+weight` to the bits it has set,
    /// `-weight` to the others.
    #[inline]
    pub(crate) fn add(&mut self, hash: u64, weight: i64) {
        for (bit, sum) in self.0.iter_mut().enumerate() {
            let clear = ((hash >> bit) & 1) as i64 - 1;
            *sum += (weight ^ clear) - clear;
        }
    }

    /// The fingerprint of `raw`'s unit sums plus these corrections, which are in units of
    /// `2^-shift` (the unit sums are shifted to match): bit `i` is set when the sum is
    /// positive.
    pub(crate) fn apply(&self, raw: &Sums, shift: u32) -> Fingerprint {
        let mut v = 0u64;
        for (bit, (unit, correction)) in raw.unit_sums().into_iter().zip(self.0).enumerate() {
            if (i128::from(unit) << shift) + i128::from(correction) > 0 {
                v |= 1 << bit;
            }
        }
        Fingerprint(v)
    }
}

/// 64 counters, one per bit position, of the hashes with that bit set, bit-sliced: bit `i` of
/// `ones`, `twos`, `fours` and `eights` are the four low binary digits of counter `i`, byte
/// `i % 8` of `lanes[i / 8]` counts its recent sixteens, and `total[i]` the rest.
struct BitCounter {
    ones: u64,
    twos: u64,
    fours: u64,
    eights: u64,
    lanes: [u64; 8],
    /// Additions to `lanes` since they were moved to `total`: each adds at most 1 to a byte
    /// lane, so they are moved at 255.
    lane_adds: u32,
    total: [u64; 64],
}

impl Default for BitCounter {
    fn default() -> Self {
        BitCounter {
            ones: 0,
            twos: 0,
            fours: 0,
            eights: 0,
            lanes: [0; 8],
            lane_adds: 0,
            total: [0; 64],
        }
    }
}

/// Carry-save adder: `a + b + c` per bit position, as a carry (weight 2) and a sum (weight 1).
#[inline(always)]
fn csa(a: u64, b: u64, c: u64) -> (u64, u64) {
    let u = a ^ b;
    ((a & b) | (u & c), u ^ c)
}

impl BitCounter {
    /// Adds 16 hashes (Harley-Seal): 15 carry-save adders leave at most one carry of weight
    /// 16 per bit, which goes to the byte lanes.
    #[inline]
    fn add_16(&mut self, h: &[u64]) {
        let &[h0, h1, h2, h3, h4, h5, h6, h7, h8, h9, h10, h11, h12, h13, h14, h15] = h else {
            return;
        };
        let (twos_a, ones) = csa(self.ones, h0, h1);
        let (twos_b, ones) = csa(ones, h2, h3);
        let (fours_a, twos) = csa(self.twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, h4, h5);
        let (twos_b, ones) = csa(ones, h6, h7);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (eights_a, fours) = csa(self.fours, fours_a, fours_b);
        let (twos_a, ones) = csa(ones, h8, h9);
        let (twos_b, ones) = csa(ones, h10, h11);
        let (fours_a, twos) = csa(twos, twos_a, twos_b);
        let (twos_a, ones) = csa(ones, h12, h13);
        let (twos_b, ones) = csa(ones, h14, h15);
        let (fours_b, twos) = csa(twos, twos_a, twos_b);
        let (eights_b, fours) = csa(fours, fours_a, fours_b);
        let (sixteens, eights) = csa(self.eights, eights_a, eights_b);
        self.ones = ones;
        self.twos = twos;
        self.fours = fours;
        self.eights = eights;
        self.add_sixteens(sixteens);
    }

    /// Adds one hash: a carry rippling through the four planes.
    #[inline]
    fn add_1(&mut self, hash: u64) {
        let mut carry = hash;
        for plane in [
            &mut self.ones,
            &mut self.twos,
            &mut self.fours,
            &mut self.eights,
        ] {
            let next = *plane & carry;
            *plane ^= carry;
            carry = next;
        }
        if carry != 0 {
            self.add_sixteens(carry);
        }
    }

    /// Adds 16 to the counter of each bit set in `bits`.
    #[inline]
    fn add_sixteens(&mut self, bits: u64) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            *lane += SPREAD[((bits >> (8 * j)) & 0xff) as usize];
        }
        self.lane_adds += 1;
        if self.lane_adds == 255 {
            self.empty_lanes();
        }
    }

    fn empty_lanes(&mut self) {
        for (j, lane) in self.lanes.iter_mut().enumerate() {
            for (k, total) in self.total.iter_mut().skip(8 * j).take(8).enumerate() {
                *total += 16 * ((*lane >> (8 * k)) & 0xff);
            }
            *lane = 0;
        }
        self.lane_adds = 0;
    }

    /// The 64 counts, bit 0 first.
    fn counts(&self) -> [u64; 64] {
        let mut counts = self.total;
        for (bit, count) in counts.iter_mut().enumerate() {
            let digit = |plane: u64| (plane >> bit) & 1;
            let lane = self
                .lanes
                .get(bit / 8)
                .map_or(0, |l| (l >> (8 * (bit % 8))) & 0xff);
            *count += digit(self.ones)
                + 2 * digit(self.twos)
                + 4 * digit(self.fours)
                + 8 * digit(self.eights)
                + 16 * lane;
        }
        counts
    }
}

/// `SPREAD[b]` has byte `k` equal to bit `k` of `b`: one byte's bits as eight 8-bit lanes.
static SPREAD: [u64; 256] = {
    let mut table = [0u64; 256];
    let mut b = 0;
    while b < 256 {
        let mut k = 0;
        while k < 8 {
            table[b] |= (((b >> k) & 1) as u64) << (8 * k);
            k += 1;
        }
        b += 1;
    }
    table
};

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

    fn random_hashes(n: usize, mut rng: u64) -> Vec<u64> {
        (0..n)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng
            })
            .collect()
    }

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
    fn bit_counts_match_a_plain_count() {
        // Sizes around the group of 16 and the lane limit of 255 sixteens.
        for n in [
            0usize,
            1,
            15,
            16,
            17,
            255,
            4079,
            4080,
            4081,
            16 * 255 * 3 + 7,
        ] {
            let hashes = random_hashes(n, 0x0123_4567_89ab_cdef ^ n as u64);
            let mut counter = BitCounter::default();
            let mut groups = hashes.chunks_exact(16);
            for group in &mut groups {
                counter.add_16(group);
            }
            for &h in groups.remainder() {
                counter.add_1(h);
            }
            for (bit, &count) in counter.counts().iter().enumerate() {
                let expected = hashes.iter().filter(|&&h| (h >> bit) & 1 == 1).count();
                assert_eq!(count, expected as u64, "{n} hashes, bit {bit}");
            }
        }
        // All ones: every counter reaches n.
        let mut counter = BitCounter::default();
        for _ in 0..300 {
            counter.add_16(&[u64::MAX; 16]);
            counter.add_1(u64::MAX);
        }
        assert!(counter.counts().iter().all(|&c| c == 300 * 17));
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
    fn spread_table_matches_bits() {
        for (b, spread) in SPREAD.iter().enumerate() {
            for k in 0..8 {
                assert_eq!((spread >> (8 * k)) & 0xff, ((b >> k) & 1) as u64);
            }
        }
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
