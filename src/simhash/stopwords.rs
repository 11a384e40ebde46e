//! The built-in stop words: Chinese function words and English function words, one per line
//! in `stopwords_zh.txt` and `stopwords_en.txt` (lowercase, as tokens are after
//! normalization). Both lists were written for this crate.
//!
//! Changing either list changes fingerprints: a store records only the configuration, not
//! the lists, so edit them only together with a new store format version.

use std::sync::LazyLock;

#[cfg(test)]
use rustc_hash::FxHashSet;

static ZH: &str = include_str!("stopwords_zh.txt");
static EN: &str = include_str!("stopwords_en.txt");

#[cfg(test)]
static STOP_WORDS: LazyLock<FxHashSet<&'static str>> = LazyLock::new(|| all().collect());

/// First code point of the bitmap of single-character stop words.
const STOP_CHAR_BASE: u32 = 0x4E00;
/// Code points covered by the bitmap: the CJK Unified Ideographs block, where the built-in
/// single-character stop words are.
const STOP_CHAR_SPAN: u32 = 0xA000 - STOP_CHAR_BASE;

/// The single-character Chinese stop words as a bitmap over U+4E00..U+9FFF, for the
/// ideograph shingles: one bit test per character.
static STOP_CHARS: LazyLock<Vec<u64>> = LazyLock::new(|| {
    let mut bits = vec![0u64; STOP_CHAR_SPAN.div_ceil(64) as usize];
    for w in ZH.lines().map(str::trim) {
        let mut chars = w.chars();
        if let (Some(c), None) = (chars.next(), chars.next()) {
            let i = (c as u32).wrapping_sub(STOP_CHAR_BASE);
            if let Some(word) = bits.get_mut((i / 64) as usize) {
                *word |= 1 << (i % 64);
            }
        }
    }
    bits
});

/// Whether `c` is a built-in single-character Chinese stop word (的, 了, 在, ...).
#[inline]
pub(crate) fn is_stop_char(c: char) -> bool {
    let i = (c as u32).wrapping_sub(STOP_CHAR_BASE);
    i < STOP_CHAR_SPAN
        && STOP_CHARS
            .get((i / 64) as usize)
            .is_some_and(|w| w >> (i % 64) & 1 == 1)
}

/// Every built-in stop word, Chinese and English.
pub(crate) fn all() -> impl Iterator<Item = &'static str> {
    ZH.lines()
        .chain(EN.lines())
        .map(str::trim)
        .filter(|w| !w.is_empty())
}

/// Whether `word` (normalized: lowercase) is a built-in stop word. (Feature extraction uses
/// the hashes of the stop words instead, see `features::StopHashes`.)
#[cfg(test)]
pub(crate) fn is_stop_word(word: &str) -> bool {
    STOP_WORDS.contains(word)
}

#[cfg(test)]
mod tests {
    use super::super::normalize::{is_cjk, is_word_char};
    use super::*;

    #[test]
    fn knows_common_words() {
        for w in ["的", "了", "是", "我们", "the", "and", "of", "s"] {
            assert!(is_stop_word(w), "{w}");
        }
        for w in ["数据库", "服务器", "database", "server", "The", ""] {
            assert!(!is_stop_word(w), "{w}");
        }
    }

    #[test]
    fn knows_stop_characters() {
        assert!(is_stop_char('的') && is_stop_char('了') && is_stop_char('在'));
        assert!(!is_stop_char('库') && !is_stop_char('a') && !is_stop_char('\u{10FFFF}'));
        let singles = ZH.lines().filter(|w| w.chars().count() == 1);
        for w in singles {
            let c = w.chars().next().unwrap();
            assert!(is_stop_char(c), "{w}");
            assert!(
                (STOP_CHAR_BASE..STOP_CHAR_BASE + STOP_CHAR_SPAN).contains(&(c as u32)),
                "{w} outside the bitmap"
            );
        }
    }

    #[test]
    fn lists_hold_single_normalized_tokens() {
        for w in ZH.lines().chain(EN.lines()) {
            assert!(!w.is_empty() && w.trim() == w, "blank or padded line {w:?}");
            let cjk = w.chars().all(is_cjk);
            let latin = w.chars().all(|c| is_word_char(c) && !c.is_uppercase());
            assert!(cjk || latin, "{w:?} is not one lowercase token");
        }
    }
}
