//! Count pieces ([`SimhashConfig::latin_count_pieces`](super::SimhashConfig) and
//! [`latin_count_pieces_ratio`](super::SimhashConfig::latin_count_pieces_ratio)): a feature of
//! a non-CJK word seen `c` times, with base `b` and ratio `r`, is the features "its
//! occurrences 1 to b - 1", "b to br - 1", "br to br² - 1", ..., as many as `c` reaches, each
//! weighing the occurrences it holds ([`PieceGrid`]). Piece 0 is the feature itself (its own
//! hash); piece `i >= 1` is hashed by [`piece_hash`].
//!
//! [`PieceSums`] computes the fingerprint under raw TF without a map of features: the
//! occurrences of CJK features go to the raw sums (the bit-sliced counters of [`Sums`]) as
//! they come, those of non-CJK features to a count table, and at the end each non-CJK
//! feature's pieces go to the raw sums too, a piece of `n` occurrences as `n` unit
//! occurrences of the piece's hash (the counters' cheapest path) or, for a piece beyond
//! [`MAX_UNIT_COPIES`], as one weighted correction. The weights are integers, so the result
//! is exact and independent of the order of the features.

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::count_table::CountTable;
use super::features::Sink;
use super::sums::{Corrections, Sums};
use super::unit_batch::UnitBatch;
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

/// Where a count is cut into pieces: the first piece holds occurrences `1..base`, and each
/// later piece ends `ratio` times further than the one before (`base..base·ratio`,
/// `base·ratio..base·ratio²`, ...).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PieceGrid {
    /// The first occurrence of piece 1 (>= 2): a feature seen fewer times is one piece.
    pub(crate) base: u32,
    /// How much longer each piece after the first is than the one before (>= 2).
    pub(crate) ratio: u32,
}

impl PieceGrid {
    /// The grid of a configuration's `latin_count_pieces` (`base`) and
    /// `latin_count_pieces_ratio` (`ratio`, 0 for the base itself), or `None` if `base` is 0
    /// (no pieces).
    pub(crate) fn of(base: u8, ratio: u8) -> Option<PieceGrid> {
        let base = u32::from(base);
        if base == 0 {
            return None;
        }
        let ratio = if ratio == 0 { base } else { u32::from(ratio) };
        Some(PieceGrid {
            base: base.max(2),
            ratio: ratio.max(2),
        })
    }

    /// The pieces of a count `count`: `(piece number, occurrences in it)` for every piece the
    /// count reaches, in order; the occurrences add up to `count`.
    pub(crate) fn pieces(self, count: u32) -> impl Iterator<Item = (u32, u32)> {
        let (base, ratio) = (u64::from(self.base), u64::from(self.ratio));
        let count = u64::from(count);
        let mut start = 1u64;
        let mut piece = 0u32;
        std::iter::from_fn(move || {
            if start > count {
                return None;
            }
            let next = if piece == 0 {
                base
            } else {
                start.saturating_mul(ratio)
            };
            let held = count.min(next - 1) - start + 1;
            let item = (piece, held as u32);
            start = next;
            piece += 1;
            Some(item)
        })
    }
}

/// The SimHash sums of one text under raw TF with count pieces for non-CJK features.
pub(crate) struct PieceSums {
    raw: Sums,
    latin: CountTable,
    grid: PieceGrid,
    seed: u64,
}

impl PieceSums {
    /// Sums for a text of `text_bytes` bytes, with count pieces cut by `grid` and piece
    /// hashes of seed `seed`.
    pub(crate) fn new(text_bytes: usize, grid: PieceGrid, seed: u64) -> Self {
        PieceSums {
            raw: Sums::default(),
            // Non-CJK features are a share of the text's: a small table that grows.
            latin: CountTable::with_capacity(text_bytes / 32),
            grid,
            seed,
        }
    }

    /// The fingerprint, and the number of feature occurrences.
    ///
    /// # Errors
    /// [`Error::NoFeatures`] if nothing was added.
    pub(crate) fn fingerprint(mut self) -> Result<(Fingerprint, usize)> {
        let mut batch = UnitBatch::new();
        let mut correction = Corrections::new();
        let mut corrected = 0usize;
        // Counts below this are one piece of at most three occurrences.
        let few = self.grid.base.min(4);
        for (hash, count) in self.latin.slots() {
            if count < few {
                // Most features, and every empty slot (count 0): without a branch on the
                // count, which follows no pattern.
                if batch.push_few(hash, count) {
                    self.raw.add_units(batch.take());
                }
                continue;
            }
            for (piece, held) in self.grid.pieces(count) {
                let piece_hash = if piece == 0 {
                    hash
                } else {
                    piece_hash(hash, piece, self.seed)
                };
                if held <= MAX_UNIT_COPIES {
                    add_copies(&mut batch, &mut self.raw, piece_hash, held);
                } else {
                    correction.add(piece_hash, i64::from(held));
                    corrected += held as usize;
                }
            }
        }
        self.raw.add_units(batch.take());
        let occurrences = self.raw.occurrences() + corrected;
        if occurrences == 0 {
            return Err(Error::NoFeatures);
        }
        Ok((correction.apply(&self.raw, 0), occurrences))
    }
}

/// The most occurrences of a piece that [`PieceSums::fingerprint`] adds as unit copies of
/// its hash; a bigger piece is one weighted correction. The bit counters take a unit hash
/// in a few instructions and a correction costs about as much as a hundred of them.
const MAX_UNIT_COPIES: u32 = 64;

/// `copies` occurrences of `hash` into `batch`, handed over to `sums` when it is full.
fn add_copies(batch: &mut UnitBatch, sums: &mut Sums, hash: u64, copies: u32) {
    for _ in 0..copies {
        if batch.push_if(hash, true) {
            sums.add_units(batch.take());
        }
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

    /// Counted only: its pieces go to the sums at the end.
    #[inline]
    fn add_latin(&mut self, hash: u64, _idf: impl FnOnce() -> f64) {
        self.latin.bump(hash);
    }

    /// Counted only: their pieces go to the sums at the end.
    #[inline]
    fn add_latin_units(&mut self, hashes: &[u64]) {
        for &hash in hashes {
            self.latin.bump(hash);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn of(count: u32, base: u8, ratio: u8) -> Vec<(u32, u32)> {
        PieceGrid::of(base, ratio).unwrap().pieces(count).collect()
    }

    #[test]
    fn pieces_split_a_count_at_the_powers_of_the_base() {
        // Ratio 0: the base's powers (0.4's pieces).
        assert_eq!(of(0, 4, 0), []);
        assert_eq!(of(1, 4, 0), [(0, 1)]);
        assert_eq!(of(3, 4, 0), [(0, 3)]);
        assert_eq!(of(4, 4, 0), [(0, 3), (1, 1)]);
        assert_eq!(of(15, 4, 0), [(0, 3), (1, 12)]);
        assert_eq!(of(16, 4, 0), [(0, 3), (1, 12), (2, 1)]);
        assert_eq!(of(100, 4, 0), [(0, 3), (1, 12), (2, 48), (3, 37)]);
        assert_eq!(of(5, 2, 0), [(0, 1), (1, 2), (2, 2)]);
        assert_eq!(of(100, 4, 4), of(100, 4, 0));
        assert_eq!(PieceGrid::of(0, 2), None);
    }

    #[test]
    fn pieces_after_the_first_grow_by_the_ratio() {
        // The default since 0.5: 1-3, then octaves 4-7, 8-15, 16-31, ...
        assert_eq!(of(3, 4, 2), [(0, 3)]);
        assert_eq!(of(4, 4, 2), [(0, 3), (1, 1)]);
        assert_eq!(of(7, 4, 2), [(0, 3), (1, 4)]);
        assert_eq!(of(8, 4, 2), [(0, 3), (1, 4), (2, 1)]);
        assert_eq!(
            of(100, 4, 2),
            [(0, 3), (1, 4), (2, 8), (3, 16), (4, 32), (5, 37)]
        );
        assert_eq!(of(30, 8, 3), [(0, 7), (1, 16), (2, 7)]);
    }

    #[test]
    fn pieces_add_up_to_the_count() {
        for base in 2..=16 {
            for ratio in [0, 2, 3, 16] {
                for count in [0, 1, 2, 7, 63, 64, 1000, u32::MAX] {
                    let grid = PieceGrid::of(base, ratio).unwrap();
                    let total: u64 = grid.pieces(count).map(|(_, n)| u64::from(n)).sum();
                    assert_eq!(total, u64::from(count), "{count} base {base} ratio {ratio}");
                    let numbers: Vec<u32> = grid.pieces(count).map(|(i, _)| i).collect();
                    assert!(numbers.iter().enumerate().all(|(i, &n)| n == i as u32));
                }
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
