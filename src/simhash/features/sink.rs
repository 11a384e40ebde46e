//! [`Sink`]: where feature extraction hands the occurrences of features, the boundary between
//! the features stage and the sums stage (`sums/`): the bit sums of the streaming paths, or the
//! map of distinct features ([`Features`](super::feature_map::Features)) that the general path
//! weighs once the text is counted.

/// Where extracted feature occurrences go.
pub(crate) trait Sink {
    /// One occurrence of the feature with this hash; `idf` gives its IDF factor.
    fn add(&mut self, hash: u64, idf: impl FnOnce() -> f64);

    /// One occurrence of each of these features, of IDF factor 1. The order of occurrences
    /// must not matter.
    fn add_units(&mut self, hashes: &[u64]);

    /// [`add`](Self::add) for a feature of a non-CJK word, under
    /// [`SimhashConfig::latin_count_pieces`](crate::SimhashConfig::latin_count_pieces) (the
    /// only case it is called in).
    fn add_latin(&mut self, hash: u64, idf: impl FnOnce() -> f64) {
        self.add(hash, idf);
    }

    /// [`add_units`](Self::add_units) for features of non-CJK words, under
    /// [`SimhashConfig::latin_count_pieces`](crate::SimhashConfig::latin_count_pieces) (the
    /// only case it is called in).
    fn add_latin_units(&mut self, hashes: &[u64]) {
        self.add_units(hashes);
    }
}
