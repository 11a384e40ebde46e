//! Hashes that depend only on the seed, computed once per hasher instead of once per
//! occurrence: the stop words' hashes, and every common ideograph's hash both as a word and
//! as a character feature.
//!
//! In Chinese text about every other feature is a single ideograph (each character is a
//! feature, and jieba cuts many one-character words), so a table lookup in place of an xxh3
//! call per character is a large part of the fingerprint's cost. The table gives exactly the
//! hashes xxh3 would: fingerprints do not depend on it.

use std::collections::HashSet;
use std::sync::OnceLock;

use xxhash_rust::xxh3::xxh3_64_with_seed;

use super::features::BuildIdentity;
use super::stopwords;

/// Mixed into the seed of character shingles so that the bigram `数据` and the word `数据`
/// are different features.
pub(crate) const CHAR_SHINGLE_SALT: u64 = 0x9e37_79b9_7f4a_7c15;

/// First code point of the ideograph table.
const TABLE_BASE: u32 = 0x4E00;
/// Code points in the table: the CJK Unified Ideographs block U+4E00..U+9FFF, where nearly
/// all ideographs of modern Chinese text are. Others are hashed when they occur.
const TABLE_SPAN: u32 = 0xA000 - TABLE_BASE;

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
    seed: u64,
    /// The xxh3-64 hashes of the built-in stop words: a word is hashed once, and that hash
    /// both tests it and becomes its feature.
    stop: HashSet<u64, BuildIdentity>,
    /// A bit per value of the top 16 bits of a hash, set for those of the stop words: most
    /// words are not stop words, and one bit test (wrong for about 1 in 160 words) answers
    /// for them faster than a hash set probe.
    stop_filter: Box<[u64]>,
    /// Per code point of the table, `[hash as a word, hash as a character feature]`; built
    /// on the first fingerprint (2 x 21,000 hashes, 336 KB), not when the hasher is made.
    ideographs: OnceLock<Box<[[u64; 2]]>>,
}

impl SeedHashes {
    /// The hashes for `seed`.
    pub(crate) fn new(seed: u64) -> SeedHashes {
        let stop: HashSet<u64, BuildIdentity> = stopwords::all()
            .map(|w| xxh3_64_with_seed(w.as_bytes(), seed))
            .collect();
        let mut stop_filter = vec![0u64; FILTER_WORDS].into_boxed_slice();
        for &h in &stop {
            let (word, bit) = filter_slot(h);
            if let Some(w) = stop_filter.get_mut(word) {
                *w |= bit;
            }
        }
        SeedHashes {
            seed,
            stop,
            stop_filter,
            ideographs: OnceLock::new(),
        }
    }

    /// Whether `hash` is the hash of a built-in stop word.
    #[inline]
    pub(crate) fn is_stop(&self, hash: u64) -> bool {
        let (word, bit) = filter_slot(hash);
        self.stop_filter.get(word).is_some_and(|w| w & bit != 0) && self.stop.contains(&hash)
    }

    /// The ideograph table, built on first use.
    pub(crate) fn ideographs(&self) -> Ideographs<'_> {
        let char_seed = self.seed ^ CHAR_SHINGLE_SALT;
        let table = self.ideographs.get_or_init(|| {
            (TABLE_BASE..TABLE_BASE + TABLE_SPAN)
                .map(|cp| {
                    let mut buf = [0u8; 4];
                    let bytes = char::from_u32(cp).unwrap_or('\0').encode_utf8(&mut buf);
                    [
                        xxh3_64_with_seed(bytes.as_bytes(), self.seed),
                        xxh3_64_with_seed(bytes.as_bytes(), char_seed),
                    ]
                })
                .collect()
        });
        Ideographs {
            table,
            seed: self.seed,
            char_seed,
        }
    }
}

/// A view of the ideograph table; hashes characters outside it on the fly.
#[derive(Clone, Copy)]
pub(crate) struct Ideographs<'a> {
    table: &'a [[u64; 2]],
    seed: u64,
    char_seed: u64,
}

impl Ideographs<'_> {
    /// The seed of character features.
    pub(crate) fn char_seed(&self) -> u64 {
        self.char_seed
    }

    /// `xxh3_64_with_seed(c's UTF-8, seed)`: the hash of the one-character word `c`.
    #[inline]
    pub(crate) fn word(&self, c: char) -> u64 {
        match self.table.get((c as u32).wrapping_sub(TABLE_BASE) as usize) {
            Some(&[word, _]) => word,
            None => xxh3_64_with_seed(c.encode_utf8(&mut [0; 4]).as_bytes(), self.seed),
        }
    }

    /// `xxh3_64_with_seed(c's UTF-8, char_seed)`: the hash of the character feature `c`.
    #[inline]
    pub(crate) fn char(&self, c: char) -> u64 {
        match self.table.get((c as u32).wrapping_sub(TABLE_BASE) as usize) {
            Some(&[_, ch]) => ch,
            None => xxh3_64_with_seed(c.encode_utf8(&mut [0; 4]).as_bytes(), self.char_seed),
        }
    }
}

#[cfg(test)]
mod tests {
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
    fn table_gives_the_xxh3_hashes() {
        for seed in [0, 7] {
            let s = SeedHashes::new(seed);
            let ideographs = s.ideographs();
            let char_seed = seed ^ CHAR_SHINGLE_SALT;
            // In the table, at both ends, and outside it (Extension A and B, Latin).
            for c in [
                '\u{4E00}',
                '数',
                '\u{9FFF}',
                '\u{3400}',
                '\u{20000}',
                'a',
                '〇',
            ] {
                let utf8 = c.to_string();
                assert_eq!(ideographs.word(c), xxh3_64_with_seed(utf8.as_bytes(), seed));
                assert_eq!(
                    ideographs.char(c),
                    xxh3_64_with_seed(utf8.as_bytes(), char_seed)
                );
            }
        }
    }
}
