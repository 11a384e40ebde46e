//! The sums stage: feature occurrences -> the per-bit weighted sums -> the fingerprint.
//!
//! Three paths give the same bits (unit tests compare them; `docs/benchmarks.md`, "Fingerprint
//! throughput", has what each saves):
//! - raw TF without count pieces: the occurrences go straight to the bit sums ([`Sums`] as
//!   the [`Sink`](super::features::sink::Sink), `bit_sums.rs` on `bit_counter.rs`);
//! - raw TF with count pieces, without IDF (the default): [`PieceSums`] (`piece_sums.rs`, on
//!   `count_table.rs` and `corrections.rs`);
//! - every other configuration: the map of distinct features
//!   ([`Features`](super::features::feature_map::Features)), each weighed once
//!   (`feature_weights.rs`).

mod bit_counter;
pub(crate) mod bit_sums;
mod corrections;
mod count_table;
pub(crate) mod feature_weights;
pub(crate) mod piece_sums;

pub(crate) use bit_sums::Sums;
pub(crate) use piece_sums::PieceSums;

#[cfg(test)]
pub(crate) mod tests {
    /// `n` xorshift64 hashes from `rng` (not 0): test input for the accumulators.
    pub(crate) fn random_hashes(n: usize, mut rng: u64) -> Vec<u64> {
        (0..n)
            .map(|_| {
                rng ^= rng << 13;
                rng ^= rng >> 7;
                rng ^= rng << 17;
                rng
            })
            .collect()
    }
}
