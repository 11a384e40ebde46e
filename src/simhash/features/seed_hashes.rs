//! What depends only on the seed, computed once per hasher instead of once per occurrence:
//! the stop words' hashes, the keys of xxh3's short paths for words and for character
//! features (see `hash.rs`), and the hashes of the common ideographs as features.

use std::collections::HashSet;
use std::sync::OnceLock;

use crate::simhash::text::stopwords;

use super::feature_map::BuildIdentity;
use super::hash::SeededXxh3;

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
    /// The character-feature hash of each ideograph of the main CJK block (see
    /// [`IdeographHashes`]), computed on first use: 164 KiB and about 0.1 ms, which a hasher
    /// that never fingerprints a text with single ideographs as features (or a configuration
    /// only validated) need not pay.
    main_ideographs: OnceLock<Box<[u64]>>,
}

/// The first code point of [`IdeographHashes`]' table, and how many it holds.
const MAIN_FIRST: u32 = 0x4E00;
const MAIN_COUNT: u32 = 0xA000 - MAIN_FIRST;

/// The character-feature hashes of single characters: looked up for the ideographs of the
/// main CJK block, U+4E00..U+9FFF (nearly every character of Chinese text), computed for
/// the others. A load from the table costs a fraction of hashing the character, and the
/// few thousand ideographs of common text keep the used part of it in cache.
#[derive(Clone, Copy)]
pub(crate) struct IdeographHashes<'a> {
    main: &'a [u64],
    chars: SeededXxh3,
}

impl IdeographHashes<'_> {
    /// The character-feature hash of the character `cp`, whose UTF-8 is `utf8`.
    #[inline(always)]
    pub(crate) fn hash(&self, cp: u32, utf8: &[u8]) -> u64 {
        match self.main.get(cp.wrapping_sub(MAIN_FIRST) as usize) {
            Some(&hash) => hash,
            None => self.chars.hash(utf8),
        }
    }
}

impl std::fmt::Debug for SeedHashes {
    /// The hashers, without the tables (thousands of numbers that say nothing).
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SeedHashes")
            .field("words", &self.words)
            .field("chars", &self.chars)
            .finish_non_exhaustive()
    }
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
            main_ideographs: OnceLock::new(),
        }
    }

    /// Whether `hash` is the hash of a built-in stop word.
    #[inline]
    pub(crate) fn is_stop(&self, hash: u64) -> bool {
        let (word, bit) = filter_slot(hash);
        self.stop_filter.get(word).is_some_and(|w| w & bit != 0) && self.stop.contains(&hash)
    }

    /// The hashes of single characters as features; with `table`, looked up for the main
    /// CJK block (the table is computed on the first call with `table`).
    pub(crate) fn ideograph_hashes(&self, table: bool) -> IdeographHashes<'_> {
        let chars = self.chars;
        if !table {
            return IdeographHashes { main: &[], chars };
        }
        let main = self.main_ideographs.get_or_init(|| {
            (MAIN_FIRST..MAIN_FIRST + MAIN_COUNT)
                .map(|cp| {
                    let c = char::from_u32(cp).unwrap_or_default();
                    chars.hash(c.encode_utf8(&mut [0; 4]).as_bytes())
                })
                .collect()
        });
        IdeographHashes { main, chars }
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
            // Every character the table may answer for, and its neighbours.
            for c in ('\u{4D00}'..='\u{A0FF}').chain(['\u{20000}', 'a']) {
                let utf8 = c.to_string();
                let utf8 = utf8.as_bytes();
                for table in [false, true] {
                    assert_eq!(
                        s.ideograph_hashes(table).hash(c as u32, utf8),
                        xxh3_64_with_seed(utf8, seed ^ CHAR_SHINGLE_SALT),
                        "{c:?}"
                    );
                }
            }
        }
    }
}
