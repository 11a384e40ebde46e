//! [`PieceSums`]: the fingerprint under raw TF without IDF, with count pieces for the
//! features of non-CJK words (`features/count_pieces.rs`), without a map of features: the
//! occurrences of CJK features go to the raw sums (the bit-sliced counters of [`Sums`]) as
//! they come, those of non-CJK features to a count table, and at the end each non-CJK
//! feature's pieces go to the raw sums too, a piece of `n` occurrences as `n` unit
//! occurrences of the piece's hash (the counters' cheapest path) or, for a piece beyond
//! [`MAX_UNIT_COPIES`], as one weighted correction. The weights are integers, so the result
//! is exact and independent of the order of the features: the bits of the general path
//! (`feature_weights.rs`).

use crate::error::{Error, Result};
use crate::fingerprint::Fingerprint;
use crate::simhash::features::count_pieces::{piece_hash, PieceGrid};
use crate::simhash::features::sink::Sink;
use crate::simhash::features::unit_batch::UnitBatch;

use super::bit_sums::Sums;
use super::corrections::Corrections;
use super::count_table::CountTable;

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

    /// The fingerprint, and the number of feature occurrences. Inlined into the hasher: out
    /// of line, the English bench ran 1.4% more instructions (callgrind).
    ///
    /// # Errors
    /// [`Error::NoFeatures`] if nothing was added.
    #[inline]
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
        Ok((correction.apply(&self.raw), occurrences))
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
