//! Count pieces ([`SimhashConfig::latin_count_pieces`](crate::SimhashConfig) and
//! [`latin_count_pieces_ratio`](crate::SimhashConfig::latin_count_pieces_ratio)): a feature of
//! a non-CJK word seen `c` times, with base `b` and ratio `r`, is the features "its
//! occurrences 1 to b - 1", "b to br - 1", "br to br² - 1", ..., as many as `c` reaches, each
//! weighing the occurrences it holds ([`PieceGrid`]). Piece 0 is the feature itself (its own
//! hash); piece `i >= 1` is hashed by [`piece_hash`]. How the pieces are summed:
//! `sums/piece_sums.rs` (raw TF without IDF) and `sums/feature_weights.rs` (every other case).

use xxhash_rust::xxh3::xxh3_64_with_seed;

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
