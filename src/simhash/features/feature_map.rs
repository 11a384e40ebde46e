//! [`Features`]: the distinct features of a text by hash, with their counts and IDF factors:
//! the accumulator of the general path, which weighs each feature once the whole text is
//! counted (`sums/feature_weights.rs`).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use super::sink::Sink;

/// One distinct feature of a text.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Feature {
    /// How many times it occurs.
    pub(crate) count: u32,
    /// Its IDF factor (1 without IDF weighting).
    pub(crate) idf: f32,
    /// Whether `idf` came from an occurrence with an IDF ([`Sink::add`]) rather than from a
    /// unit one ([`Sink::add_units`]). Units are handed over in batches, so a unit occurrence
    /// can come first; the IDF of the first occurrence with one wins all the same.
    idf_given: bool,
    /// Whether it is a feature of a non-CJK word, counted in pieces (only under
    /// [`SimhashConfig::latin_count_pieces`](crate::SimhashConfig::latin_count_pieces)).
    pub(crate) latin: bool,
}

impl Feature {
    const NEW: Feature = Feature {
        count: 0,
        idf: 1.0,
        idf_given: false,
        latin: false,
    };
}

/// A `Hasher` for keys that are already uniform 64-bit hashes: the key is its own hash.
#[derive(Default)]
pub(crate) struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        // Not used for u64 keys; a simple fold keeps it correct for anything else.
        for &b in bytes {
            self.0 = self.0.rotate_left(8) ^ u64::from(b);
        }
    }

    fn write_u64(&mut self, n: u64) {
        self.0 = n;
    }
}

pub(crate) type BuildIdentity = BuildHasherDefault<IdentityHasher>;

/// The distinct features of a text, by hash.
pub(crate) type Features = HashMap<u64, Feature, BuildIdentity>;

/// One occurrence of the feature `hash` with an IDF factor, a non-CJK one if `latin`.
#[inline]
fn add_with_idf(features: &mut Features, hash: u64, idf: impl FnOnce() -> f64, latin: bool) {
    let f = features.entry(hash).or_insert(Feature::NEW);
    f.count = f.count.saturating_add(1);
    f.latin |= latin;
    if !f.idf_given {
        f.idf = idf() as f32;
        f.idf_given = true;
    }
}

impl Sink for Features {
    #[inline]
    fn add(&mut self, hash: u64, idf: impl FnOnce() -> f64) {
        add_with_idf(self, hash, idf, false);
    }

    fn add_units(&mut self, hashes: &[u64]) {
        for &hash in hashes {
            let f = self.entry(hash).or_insert(Feature::NEW);
            f.count = f.count.saturating_add(1);
        }
    }

    fn add_latin(&mut self, hash: u64, idf: impl FnOnce() -> f64) {
        add_with_idf(self, hash, idf, true);
    }

    fn add_latin_units(&mut self, hashes: &[u64]) {
        for &hash in hashes {
            let f = self.entry(hash).or_insert(Feature::NEW);
            f.count = f.count.saturating_add(1);
            f.latin = true;
        }
    }
}
