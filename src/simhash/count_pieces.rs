//! Count pieces ([`SimhashConfig::latin_count_pieces`](super::SimhashConfig)): a feature of a
//! non-CJK word seen `c` times, with base `b`, is the features "its occurrences 1 to b - 1",
//! "b to b² - 1", "b² to b³ - 1", ..., as many as `c` reaches, each weighing the occurrences it
//! holds. Piece 0 is the feature itself (its own hash); piece `i >= 1` is hashed by
//! [`piece_hash`].
//!
//! [`PieceSums`] computes the fingerprint under raw TF without a map of features: every
//! occurrence goes to the raw sums (the bit-sliced counters of [`Sums`]), the occurrences of
//! non-CJK features also to a count table, and at the end each feature seen `b` times or
//! more moves the weight beyond its first piece to its other pieces. The weights are
//! integers, so the result is exact and independent of the order of the features.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::count_table::CountTable;
use super::features::Sink;
use super::sums::{Corrections, Sums};
use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;

/// The hash of piece `piece` (>= 1) of the feature of hash `hash`: xxh3-64, with the
/// configuration's seed, of the feature's hash and the piece's number, 8 + 4 bytes
/// little-endian.
pub(crate) fn piece_hash(hash: u64, piece: u32, seed: u64) -> u64 {
    let mut bytes = [0u8; 12];
    bytes[..8].copy_from_slice(&hash.to_le_bytes());
    bytes[8..].copy_from_slice(&piece.to_le_bytes());
    xxh3_64_with_seed(&bytes, seed)
}

/// The pieces of a count `count` with base `base` (>= 2): `(piece number, occurrences in
/// it)` for every piece the count reaches, in order; the occurrences add up to `count`.
pub(crate) fn pieces(count: u32, base: u32) -> impl Iterator<Item = (u32, u32)> {
    let base = u64::from(base.max(2));
    let count = u64::from(count);
    let mut start = 1u64;
    let mut piece = 0u32;
    std::iter::from_fn(move || {
        if start > count {
            return None;
        }
        let next = start.saturating_mul(base);
        let held = count.min(next - 1) - start + 1;
        let item = (piece, held as u32);
        start = next;
        piece += 1;
        Some(item)
    })
}

/// The SimHash sums of one text under raw TF with count pieces for non-CJK features.
pub(crate) struct PieceSums {
    raw: Sums,
    latin: CountTable,
    base: u32,
    seed: u64,
}

impl PieceSums {
    /// Sums for a text of `text_bytes` bytes, with count pieces of base `base` (>= 2) and
    /// piece hashes of seed `seed`.
    pub(crate) fn new(text_bytes: usize, base: u8, seed: u64) -> Self {
        PieceSums {
            raw: Sums::default(),
            // Non-CJK features are a share of the text's: a small table that grows.
            latin: CountTable::with_capacity(text_bytes / 32),
            base: u32::from(base.max(2)),
            seed,
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
        // The raw sums hold every occurrence under the feature's own hash (piece 0): move
        // the occurrences beyond the first piece to theirs.
        let mut correction = Corrections::new();
        for (hash, count) in self.latin.at_least(self.base) {
            for (piece, held) in pieces(count, self.base).skip(1) {
                correction.add(hash, -i64::from(held));
                correction.add(piece_hash(hash, piece, self.seed), i64::from(held));
            }
        }
        Ok((correction.apply(&self.raw, 0), occurrences))
    }
}

impl Sink for PieceSums {
    /// Without IDF (this path is only taken then) `idf` is 1 and is not called.
    #[inline]
    fn add(&mut self, hash: u64, _idf: impl FnOnce() -> f64) {
        self.raw.add(hash, || 1.0);
    }

    #[inline]
    fn add_units(&mut self, hashes: &[u64]) {
        self.raw.add_units(hashes);
    }

    #[inline]
    fn add_latin(&mut self, hash: u64, _idf: impl FnOnce() -> f64) {
        self.raw.add(hash, || 1.0);
        self.latin.bump(hash);
    }

    #[inline]
    fn add_latin_units(&mut self, hashes: &[u64]) {
        self.raw.add_units(hashes);
        for &hash in hashes {
            self.latin.bump(hash);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pieces_split_a_count_at_the_powers_of_the_base() {
        let of = |count, base| pieces(count, base).collect::<Vec<_>>();
        assert_eq!(of(0, 4), []);
        assert_eq!(of(1, 4), [(0, 1)]);
        assert_eq!(of(3, 4), [(0, 3)]);
        assert_eq!(of(4, 4), [(0, 3), (1, 1)]);
        assert_eq!(of(15, 4), [(0, 3), (1, 12)]);
        assert_eq!(of(16, 4), [(0, 3), (1, 12), (2, 1)]);
        assert_eq!(of(100, 4), [(0, 3), (1, 12), (2, 48), (3, 37)]);
        assert_eq!(of(5, 2), [(0, 1), (1, 2), (2, 2)]);
        for base in 2..=16 {
            for count in [0, 1, 2, 7, 63, 64, 1000, u32::MAX] {
                let total: u64 = pieces(count, base).map(|(_, n)| u64::from(n)).sum();
                assert_eq!(total, u64::from(count), "{count} base {base}");
            }
        }
    }

    #[test]
    fn piece_hashes_differ_by_piece_and_seed() {
        let h = 0x1234_5678_9abc_def0;
        assert_ne!(piece_hash(h, 1, 0), piece_hash(h, 2, 0));
        assert_ne!(piece_hash(h, 1, 0), piece_hash(h, 1, 1));
        assert_ne!(piece_hash(h, 1, 0), h);
    }
}
