//! [`SketchKind`]: whether a store keeps a sketch per document, and which.

use serde::{Deserialize, Serialize};

/// Which [`Sketch`](crate::Sketch) a store keeps in each document record, recorded in its
/// settings ([`SimhashConfig::sketch`](crate::SimhashConfig::sketch)). Only a store that
/// keeps sketches answers verified queries ([`Store::query_verified`](crate::Store::query_verified)).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
pub enum SketchKind {
    /// No sketch: document records hold the fingerprint, key, text length and time only.
    /// The default.
    #[default]
    None,
    /// One-permutation one-bit MinHash of the text's token bigrams, 512 bins: 64 bytes per
    /// document.
    ///
    /// The text is what the fingerprint reads (boilerplate lines left out with
    /// [`drop_boilerplate`](crate::SimhashConfig::drop_boilerplate), normalized as with
    /// [`normalize`](crate::SimhashConfig::normalize)); its tokens are each ideograph alone
    /// and each maximal run of other letters and digits (no jieba, stop words kept), so the
    /// shingles, every pair of consecutive tokens, are ideograph bigrams in Chinese and word
    /// bigrams in other scripts. Each distinct shingle is hashed from its tokens' hashes (the
    /// fingerprint's xxh3-64 of each, with the configuration's seed, mixed by MurmurHash3's
    /// finalizer); the top 9 bits of a hash choose one of 512 bins, which
    /// keeps its smallest hash; the sketch's bit `j` is the lowest bit of bin `j`'s minimum
    /// (an empty bin takes a non-empty one's, chosen by a seeded hash of its index: optimal
    /// densification). [`Sketch::similarity`](crate::Sketch::similarity) is then
    /// `1 - D / 256` for the Hamming distance `D` of two sketches, an estimate of the
    /// Jaccard similarity of their bigram sets. Chosen on the labelled development set over
    /// character 2- to 5-grams, token 1- to 3-grams, other bin and bit counts and a second
    /// SimHash (`docs/guide.md`, "Verified near-duplicates").
    MinHash,
}
