//! [`Corrections`]: integer per-bit corrections to the unit sums of a [`Sums`].

use crate::fingerprint::Fingerprint;

use super::bit_sums::Sums;

/// Per-bit corrections to the unit sums of a [`Sums`], for the weights that are known only
/// once the whole text is counted (the big count pieces of `piece_sums.rs`): integers, so that
/// the result is exact and independent of the order they are added in.
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

    /// The fingerprint of `raw`'s unit sums plus these corrections: bit `i` is set when the
    /// sum is positive.
    pub(crate) fn apply(&self, raw: &Sums) -> Fingerprint {
        let mut v = 0u64;
        for (bit, (unit, correction)) in raw.unit_sums().into_iter().zip(self.0).enumerate() {
            if i128::from(unit) + i128::from(correction) > 0 {
                v |= 1 << bit;
            }
        }
        Fingerprint(v)
    }
}
