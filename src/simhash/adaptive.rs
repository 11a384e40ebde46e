//! [`AdaptiveSums`]: the SimHash sums under [`TfScaling::LengthAdaptive`] (without IDF),
//! without the general path's map of features, sort and per-feature weighing
//! (`docs/design.md`, fingerprint speed).
//!
//! A feature seen `c` times weighs `c^a`, where the exponent `a` depends on the number of
//! occurrences in the whole text, known only at the end. Written as
//! `c^a = c + (c^a - c)`, the sums are those of raw TF (every occurrence adds its hash with
//! weight 1: the bit-sliced counters of [`Sums`]) plus a correction for the features seen
//! more than once (for `c = 1` the two agree whatever `a`). So every occurrence goes to the
//! raw sums and to a count table (open addressing on the feature hash, which is already
//! uniform), and at the end only the repeated features are weighed, once each.
//!
//! The corrections are rounded to multiples of 2^-24 and added as integers, so the result
//! is exact and does not depend on the order of the features (the table's order depends on
//! the order of insertion): a bit is set when `2 ones - units + correction > 0`, as under raw
//! TF. The rounding changes a bit only when its sum is within about `repeated * 2^-25` of
//! zero.

use super::config::TfScaling;
use super::count_table::CountTable;
use super::features::Sink;
use super::sums::{Corrections, Sums};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;

/// Corrections are integers in units of `2^-CORRECTION_BITS`.
const CORRECTION_BITS: u32 = 24;

/// Sums and counts of the feature occurrences of one text.
pub(crate) struct AdaptiveSums {
    raw: Sums,
    counts: CountTable,
}

impl AdaptiveSums {
    /// Sums sized for a text of `text_bytes` bytes (a guess at its distinct features: the
    /// table grows when it is wrong).
    pub(crate) fn with_text_len(text_bytes: usize) -> Self {
        AdaptiveSums {
            raw: Sums::default(),
            // A character is 1 to 3 bytes and gives one to three occurrences, of which a
            // share are new features: about one distinct feature per 8 bytes, and the table
            // grows when there are more.
            counts: CountTable::with_capacity(text_bytes / 8),
        }
    }

    /// The fingerprint, and the number of feature occurrences.
    ///
    /// # Errors
    /// [`Error::NoFeatures`] if nothing was added.
    pub(crate) fn fingerprint(&self) -> Result<(Fingerprint, usize)> {
        let occurrences = self.raw.occurrences();
        if occurrences == 0 {
            return Err(Error::NoFeatures);
        }
        let a = TfScaling::adaptive_exponent(occurrences as u64);
        let mut weights = PowerCache::new(a);
        let mut correction = Corrections::new();
        for (hash, count) in self.counts.repeated() {
            let delta = weights.get(count) - f64::from(count);
            // count <= n, and n^a(n) never exceeds 4,400 (its peak, near n = 300): so
            // |delta| < count + 4,400, and a bit's corrections sum to less than
            // 2 n + 4,400: inside i64 once scaled, for texts of up to 2^37 occurrences.
            let delta = (delta * f64::from(1u32 << CORRECTION_BITS)).round() as i64;
            correction.add(hash, delta);
        }
        Ok((correction.apply(&self.raw, CORRECTION_BITS), occurrences))
    }
}

impl Sink for AdaptiveSums {
    /// Without IDF (this path is only taken then) `idf` is 1 and is not called.
    #[inline]
    fn add(&mut self, hash: u64, _idf: impl FnOnce() -> f64) {
        self.raw.add(hash, || 1.0);
        self.counts.bump(hash);
    }

    #[inline]
    fn add_units(&mut self, hashes: &[u64]) {
        self.raw.add_units(hashes);
        for &hash in hashes {
            self.counts.bump(hash);
        }
    }
}

/// `count^a`, computed once per count below [`PowerCache::CACHED`].
struct PowerCache {
    a: f64,
    cached: [f64; PowerCache::CACHED],
}

impl PowerCache {
    const CACHED: usize = 64;

    fn new(a: f64) -> Self {
        PowerCache {
            a,
            cached: [f64::NAN; Self::CACHED],
        }
    }

    fn get(&mut self, count: u32) -> f64 {
        let a = self.a;
        match self.cached.get_mut(count as usize) {
            Some(w) if w.is_nan() => {
                *w = f64::from(count).powf(a);
                *w
            }
            Some(w) => *w,
            None => f64::from(count).powf(a),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn powers_are_cached_and_exact_beyond_the_cache() {
        let mut p = PowerCache::new(1.3);
        for c in [1u32, 2, 7, 63, 64, 65, 1000] {
            // Within rounding: the compiler may fold the expected value with another `pow`.
            let expected = f64::from(c).powf(1.3);
            let first = p.get(c);
            assert!((first - expected).abs() <= expected * 1e-14, "{c}");
            assert_eq!(p.get(c), first, "{c}");
        }
    }
}
