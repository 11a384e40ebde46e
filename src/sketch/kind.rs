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
    /// One-permutation b-bit MinHash of the text's character 4-grams: the text lowercased,
    /// with everything but letters, digits and `_` left out (so spacing, punctuation and line
    /// breaks do not count), cut into every run of 4 consecutive characters; each distinct
    /// 4-gram hashed with xxh3-64 (the configuration's seed, salted); 64 bins by the top 6
    /// bits of the hash, each keeping the lowest 8 bits of its smallest hash; an empty bin
    /// takes the code of a non-empty one chosen by a seeded hash of its index (densification).
    /// 64 bytes per document.
    MinHash,
}
