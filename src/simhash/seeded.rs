//! What depends only on the seed, computed once per hasher instead of once per occurrence:
//! the stop words' hashes, and the keys of xxh3's short paths for words and for character
//! features (see `hash.rs`).

use std::collections::HashSet;

use super::features::BuildIdentity;
use super::hash::SeededXxh3;
use super::stopwords;

/// Mixed into the seed of character shingles so that the bigram `数据` and the word `数据`
/// are different features.
pub(crate) const CHAR_SHINGLE_SALT: u64 = 0x9e37_79b9_7f4a_7c15;

/// 64-bit words of the stop-word filter: one bit per value of a hash's top 16 bits.
const FILTER_WORDS: usize = (1 << 16) / 64;

/// The word of the stop-word filter and the bit in it for `hash`.
#[inline]
fn filter_slot(hash: u64) -> (usize, u64) {
    let top = (hash >> 48) as usize;
    (top / 64, 1 << (top % 64))
}

/// The seed-dependent hashes of one hasher.
#[derive(Debug)]
pub(crate) struct SeedHashes {
    /// The xxh3-64 hashes of the built-in stop words: a word is hashed once, and that hash
    /// both tests it and becomes its feature.
    stop: HashSet<u64, BuildIdentity>,
    /// A bit per value of the top 16 bits of a hash, set for those of the stop words: most
    /// words are not stop words, and one bit test (wrong for about 1 in 160 words) answers
    /// for them faster than a hash set probe.
    stop_filter: Box<[u64]>,
    /// Hashes words.
    words: SeededXxh3,
    /// Hashes character features.
    chars: SeededXxh3,
}

impl SeedHashes {
    /// The hashes for `seed`.
    pub(crate) fn new(seed: u64) -> SeedHashes {
        let words = SeededXxh3::new(seed);
        let stop: HashSet<u64, BuildIdentity> =
            stopwords::all().map(|w| words.hash(w.as_bytes())).collect();
        let mut stop_filter = vec![0u64; FILTER_WORDS].into_boxed_slice();
        for &h in &stop {
            let (word, bit) = filter_slot(h);
            if let Some(w) = stop_filter.get_mut(word) {
                *w |= bit;
            }
        }
        SeedHashes {
            stop,
            stop_filter,
            words,
            chars: SeededXxh3::new(seed ^ CHAR_SHINGLE_SALT),
        }
    }

    /// Whether `hash` is the hash of a built-in stop word.
    #[inline]
    pub(crate) fn is_stop(&self, hash: u64) -> bool {
        let (word, bit) = filter_slot(hash);
        self.stop_filter.get(word).is_some_and(|w| w & bit != 0) && self.stop.contains(&hash)
    }

    /// The hasher of words.
    pub(crate) fn word_hasher(&self) -> SeededXxh3 {
        self.words
    }

    /// The hasher of character features (single characters and character shingles).
    pub(crate) fn char_hasher(&self) -> SeededXxh3 {
        self.chars
    }
}

#[cfg(test)]
mod tests {
    use xxhash_rust::xxh3::xxh3_64_with_seed;

    use super::*;

    #[test]
    fn stop_hashes_follow_the_seed() {
        let a = SeedHashes::new(0);
        assert!(a.is_stop(xxh3_64_with_seed("的".as_bytes(), 0)));
        assert!(a.is_stop(xxh3_64_with_seed(b"the", 0)));
        assert!(!a.is_stop(xxh3_64_with_seed(b"database", 0)));
        assert!(!SeedHashes::new(1).is_stop(xxh3_64_with_seed(b"the", 0)));
        for w in stopwords::all() {
            assert!(a.is_stop(xxh3_64_with_seed(w.as_bytes(), 0)), "{w}");
        }
    }

    #[test]
    fn hashers_follow_the_seeds() {
        for seed in [0, 7] {
            let s = SeedHashes::new(seed);
            for c in ['数', '\u{3400}', '\u{20000}', 'a', '〇'] {
                let utf8 = c.to_string();
                let utf8 = utf8.as_bytes();
                assert_eq!(s.word_hasher().hash(utf8), xxh3_64_with_seed(utf8, seed));
                assert_eq!(
                    s.char_hasher().hash(utf8),
                    xxh3_64_with_seed(utf8, seed ^ CHAR_SHINGLE_SALT)
                );
            }
        }
    }
}
