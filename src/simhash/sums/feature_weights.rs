//! The general path: the fingerprint of a text's distinct features ([`Features`]), each
//! weighed once its whole count is known: `tf(count) · idf`, or, for a feature in count
//! pieces, each piece weighed by the occurrences it holds. Every configuration goes this way
//! but those with a streaming path of their own (`sums/mod.rs`), which give its bits.

use crate::error::Result;
use crate::fingerprint::Fingerprint;
use crate::simhash::config::SimhashConfig;
use crate::simhash::features::count_pieces::{piece_hash, PieceGrid};
use crate::simhash::features::feature_map::Features;

use super::bit_sums::Sums;

/// The fingerprint of the features `features` under `config`, and their number of
/// occurrences.
///
/// # Errors
/// [`Error::NoFeatures`](crate::Error::NoFeatures) if no feature has a positive weight.
pub(crate) fn fingerprint(
    config: &SimhashConfig,
    features: &Features,
) -> Result<(Fingerprint, usize)> {
    let occurrences: u64 = features.values().map(|f| u64::from(f.count)).sum();
    let grid = PieceGrid::of(config.latin_count_pieces, config.latin_count_pieces_ratio);
    let mut weighted: Vec<(u64, f64)> = Vec::with_capacity(features.len());
    for (&hash, f) in features {
        let weight = |count| config.tf.apply(count, occurrences) * f64::from(f.idf);
        if let Some(grid) = grid.filter(|grid| f.latin && f.count >= grid.base) {
            for (piece, held) in grid.pieces(f.count) {
                let hash = if piece == 0 {
                    hash
                } else {
                    piece_hash(hash, piece, config.seed)
                };
                weighted.push((hash, weight(held)));
            }
        } else {
            weighted.push((hash, weight(f.count)));
        }
    }
    // Summed in hash order, so that the result does not depend on the map's iteration order.
    weighted.sort_unstable_by_key(|&(hash, _)| hash);
    let mut sums = Sums::default();
    for (hash, weight) in weighted {
        sums.add_weighted(hash, weight);
    }
    Ok((sums.fingerprint()?, occurrences as usize))
}
