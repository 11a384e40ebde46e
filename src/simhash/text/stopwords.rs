//! The built-in stop words: Chinese function words and English function words, one per line
//! in `stopwords_zh.txt` and `stopwords_en.txt` (lowercase, as tokens are after
//! normalization). Both lists were written for this crate.
//!
//! Changing either list changes fingerprints: a store records [`content_hash`] of the lists
//! it fingerprints with and refuses to open with other lists.

#[cfg(test)]
use std::sync::LazyLock;

#[cfg(test)]
use rustc_hash::FxHashSet;

const ZH: &str = include_str!("stopwords_zh.txt");
const EN: &str = include_str!("stopwords_en.txt");

#[cfg(test)]
static STOP_WORDS: LazyLock<FxHashSet<&'static str>> = LazyLock::new(|| all().collect());

/// First code point of the bitmap of single-character stop words.
const STOP_CHAR_BASE: u32 = 0x4E00;
/// Code points covered by the bitmap: the CJK Unified Ideographs block, where the built-in
/// single-character stop words are. A multiple of 64.
const STOP_CHAR_SPAN: u32 = 0xA000 - STOP_CHAR_BASE;
const _: () = assert!(STOP_CHAR_SPAN.is_multiple_of(64));

/// The single-character Chinese stop words as a bitmap over U+4E00..U+9FFF, for the
/// ideograph shingles: one bit test per character. Built when the crate is compiled (so no
/// lazy initialization is checked on each test): a line of `stopwords_zh.txt` that is one
/// three-byte UTF-8 character in the block sets its bit.
static STOP_CHARS: [u64; STOP_CHAR_SPAN.div_ceil(64) as usize] = {
    let list = ZH.as_bytes();
    let mut bits = [0u64; STOP_CHAR_SPAN.div_ceil(64) as usize];
    let mut line = 0;
    while line < list.len() {
        let mut end = line;
        while end < list.len() && list[end] != b'\n' {
            end += 1;
        }
        if end - line == 3 && list[line] & 0xF0 == 0xE0 {
            let c = ((list[line] as u32 & 0x0F) << 12)
                | ((list[line + 1] as u32 & 0x3F) << 6)
                | (list[line + 2] as u32 & 0x3F);
            let i = c.wrapping_sub(STOP_CHAR_BASE);
            if i < STOP_CHAR_SPAN {
                bits[(i / 64) as usize] |= 1 << (i % 64);
            }
        }
        line = end + 1;
    }
    bits
};

/// Whether `c` is a built-in single-character Chinese stop word (的, 了, 在, ...).
#[cfg(test)]
pub(crate) fn is_stop_char(c: char) -> bool {
    is_stop_code_point(c as u32)
}

/// Whether the code point `cp` is a built-in single-character Chinese stop word (的, 了,
/// 在, ...).
#[inline(always)]
pub(crate) fn is_stop_code_point(cp: u32) -> bool {
    // The span is a whole number of bitmap words: no test of `i < STOP_CHAR_SPAN` needed.
    let i = cp.wrapping_sub(STOP_CHAR_BASE);
    STOP_CHARS
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

/// xxh3-64 of both lists' bytes (Chinese, a NUL, English): what a store records to tell
/// whether its fingerprints were made with these lists.
pub(crate) fn content_hash() -> u64 {
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    h.update(ZH.as_bytes());
    h.update(b"\0");
    h.update(EN.as_bytes());
    h.digest()
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
