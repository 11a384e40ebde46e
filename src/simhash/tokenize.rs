//! Splitting normalized text into words and character shingles.
//!
//! CJK ideographs are segmented by jieba; maximal runs of word characters of any other
//! script ([`is_word_char`]) are words as they are. Everything else (punctuation, symbols,
//! whitespace, control characters) only separates words and never becomes a feature, so
//! re-punctuated or re-spaced copies of a text give the same words.

use std::sync::LazyLock;

use jieba_rs::Jieba;

use super::config::MAX_CHAR_SHINGLES;
use super::normalize::{is_caseless_punctuation, is_cjk, is_word_char};

/// The process-wide jieba segmenter: loading its dictionary takes a while, so it is done
/// once, on first use.
pub(crate) static JIEBA: LazyLock<Jieba> = LazyLock::new(Jieba::new);

#[derive(Clone, Copy, PartialEq, Eq)]
enum Class {
    Cjk,
    Word,
    Separator,
}

#[inline]
fn class(c: char) -> Class {
    if c.is_ascii() {
        if c.is_ascii_alphanumeric() || c == '_' {
            Class::Word
        } else {
            Class::Separator
        }
    } else if is_cjk(c) {
        Class::Cjk
    } else if !is_caseless_punctuation(c) && is_word_char(c) {
        Class::Word
    } else {
        Class::Separator
    }
}

/// Calls `emit` with each word of `text` (already normalized), in text order, and whether it
/// is a word of CJK ideographs (else it is a run of word characters of other scripts). Without
/// `segment_cjk`, CJK ideographs are skipped instead of segmented.
///
/// With `segment_cjk`, jieba cuts the whole text in one call (cutting it run by run costs
/// more than the segmentation itself on punctuated text). Its tokens are then regrouped:
/// a token of ideographs is a word; every other character is classified again, so that a
/// non-CJK word is always a maximal run of word characters (jieba splits `café` and
/// `file.txt` differently) and separators never reach `emit`.
pub(crate) fn for_each_word<'a>(
    text: &'a str,
    hmm: bool,
    segment_cjk: bool,
    mut emit: impl FnMut(&'a str, bool),
) {
    let mut words = Regroup {
        text,
        keep_cjk: segment_cjk,
        start: 0,
        end: 0,
        open: None,
    };
    if segment_cjk {
        let base = text.as_ptr() as usize;
        for token in JIEBA.cut(text, hmm) {
            let offset = (token.word.as_ptr() as usize).wrapping_sub(base);
            if all_cjk(token.word) {
                words.flush(&mut emit);
                emit(token.word, true);
            } else {
                for (i, c) in token.word.char_indices() {
                    words.push(offset + i, c, &mut emit);
                }
            }
        }
    } else {
        for (i, c) in text.char_indices() {
            words.push(i, c, &mut emit);
        }
    }
    words.flush(&mut emit);
}

/// Whether every character of `word` is an ideograph. Most of jieba's tokens are ideographs
/// of the main CJK block (U+4E00..U+9FFF, UTF-8 `E4 B8 80`..`E9 BF BF`), which is checked on
/// the lead bytes without decoding: a string of three-byte characters only has a lead byte
/// at every multiple of 3.
#[inline]
fn all_cjk(word: &str) -> bool {
    let bytes = word.as_bytes();
    let main_block = bytes.len().is_multiple_of(3)
        && bytes.chunks_exact(3).all(|c| match c {
            [0xE4, second, _] => *second >= 0xB8,
            [lead, _, _] => (0xE5..=0xE9).contains(lead),
            _ => false,
        });
    main_block || word.chars().all(is_cjk)
}

/// Joins adjacent characters of one class into words: word characters always, ideographs
/// outside a pure-CJK token (of a mixed dictionary word such as `t恤`) when `keep_cjk`.
struct Regroup<'a> {
    text: &'a str,
    keep_cjk: bool,
    /// The pending run, `text[start..end]`.
    start: usize,
    end: usize,
    /// The class of the pending run, if there is one.
    open: Option<Class>,
}

impl<'a> Regroup<'a> {
    #[inline]
    fn push(&mut self, offset: usize, c: char, emit: &mut impl FnMut(&'a str, bool)) {
        let cl = class(c);
        if cl == Class::Separator || (cl == Class::Cjk && !self.keep_cjk) {
            self.flush(emit);
            return;
        }
        if !(self.open == Some(cl) && offset == self.end) {
            self.flush(emit);
            self.start = offset;
            self.open = Some(cl);
        }
        self.end = offset + c.len_utf8();
    }

    #[inline]
    fn flush(&mut self, emit: &mut impl FnMut(&'a str, bool)) {
        if let Some(class) = self.open.take() {
            if let Some(word) = self.text.get(self.start..self.end) {
                emit(word, class == Class::Cjk);
            }
        }
    }
}

/// Character shingles of a stream of characters taken from a text one at a time: each run
/// of `n` consecutive characters of the stream, as its UTF-8 bytes. A stream of fewer than
/// `n` characters gives one shingle of all of them ([`finish`](Self::finish)), so that short
/// texts still have a feature; an empty stream gives none.
///
/// The stream may skip characters of the text. A shingle whose characters are adjacent in
/// the text is that slice of the text; only one that spans a skipped character is copied.
pub(crate) struct CharShingles {
    n: usize,
    /// The last `n` characters and their byte offsets in the text, each written twice (at
    /// `i` and `i + n`) so that they are always contiguous, oldest first, at
    /// `ring[head..head + n]`.
    ring: [(char, usize); 2 * MAX_CHAR_SHINGLES as usize],
    head: usize,
    seen: usize,
    buf: [u8; 4 * MAX_CHAR_SHINGLES as usize],
}

impl CharShingles {
    /// Shingles of `n` characters (`1..=MAX_CHAR_SHINGLES`; 0 gives none).
    pub(crate) fn new(n: usize) -> CharShingles {
        CharShingles {
            n: n.min(MAX_CHAR_SHINGLES as usize),
            ring: [('\0', 0); 2 * MAX_CHAR_SHINGLES as usize],
            head: 0,
            seen: 0,
            buf: [0; 4 * MAX_CHAR_SHINGLES as usize],
        }
    }

    /// Adds `c`, found at byte `offset` of `text`; calls `emit` with the shingle that ends
    /// with it, if there is one yet.
    #[inline]
    pub(crate) fn push(&mut self, text: &str, offset: usize, c: char, emit: impl FnOnce(&[u8])) {
        if self.n == 0 {
            return;
        }
        if let Some(slot) = self.ring.get_mut(self.head) {
            *slot = (c, offset);
        }
        if let Some(slot) = self.ring.get_mut(self.head + self.n) {
            *slot = (c, offset);
        }
        self.head += 1;
        if self.head == self.n {
            self.head = 0;
        }
        self.seen += 1;
        if self.seen >= self.n {
            emit(self.shingle(text, self.head, self.n));
        }
    }

    /// Calls `emit` with the one shingle of a stream shorter than `n`, if it is not empty.
    pub(crate) fn finish(&mut self, text: &str, emit: impl FnOnce(&[u8])) {
        if self.seen > 0 && self.seen < self.n {
            // The ring has not wrapped: the characters are at 0..seen.
            emit(self.shingle(text, 0, self.seen));
        }
    }

    /// The UTF-8 bytes of the characters `ring[first..first + len]`.
    #[inline]
    fn shingle<'a>(&'a mut self, text: &'a str, first: usize, len: usize) -> &'a [u8] {
        let window = self.ring.get(first..first + len).unwrap_or(&[]);
        let (Some(&(_, start)), Some(&(last, last_offset))) = (window.first(), window.last())
        else {
            return &[];
        };
        let end = last_offset + last.len_utf8();
        let adjacent = window.windows(2).all(|p| match p {
            [(a, ia), (_, ib)] => ia + a.len_utf8() == *ib,
            _ => true,
        });
        if adjacent {
            if let Some(slice) = text.as_bytes().get(start..end) {
                return slice;
            }
        }
        let mut n = 0;
        for &(c, _) in window {
            if let Some(dst) = self.buf.get_mut(n..) {
                n += c.encode_utf8(dst).len();
            }
        }
        self.buf.get(..n).unwrap_or(&[])
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for_each_word(text, true, true, |w, cjk| {
            assert_eq!(cjk, w.chars().all(is_cjk), "{w}");
            out.push(w)
        });
        out
    }

    fn shingles(text: &str, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut shingles = CharShingles::new(n);
        let mut emit = |s: &[u8]| out.push(String::from_utf8(s.to_vec()).unwrap());
        for (i, c) in text.char_indices() {
            shingles.push(text, i, c, &mut emit);
        }
        shingles.finish(text, &mut emit);
        out
    }

    #[test]
    fn splits_latin_words_at_punctuation_and_space() {
        assert_eq!(
            words("hello, world -- it's\tshared_buffers=128mb."),
            ["hello", "world", "it", "s", "shared_buffers", "128mb"]
        );
        assert!(words(" ,.;:!?()[]{}\"'-–— \n\t").is_empty());
        assert!(words("").is_empty());
    }

    #[test]
    fn segments_chinese_with_jieba_and_mixed_text() {
        assert_eq!(
            words("我们中出了一个叛徒"),
            ["我们", "中出", "了", "一个", "叛徒"]
        );
        let mixed = words("安装postgresql数据库，运行apt install。");
        assert_eq!(
            mixed,
            ["安装", "postgresql", "数据库", "运行", "apt", "install"]
        );
        // Spaces and punctuation between scripts do not matter.
        assert_eq!(words("安装 postgresql 数据库, 运行 apt install."), mixed);
    }

    #[test]
    fn jieba_tokens_are_regrouped_into_words() {
        // jieba cuts non-ASCII letters and `.` apart; words are maximal runs all the same.
        assert_eq!(
            words("café file.txt e.g. c++ naïve"),
            ["café", "file", "txt", "e", "g", "c", "naïve"]
        );
        assert_eq!(words("中文café"), ["中文", "café"]);
        assert_eq!(words("数据库3.14版本"), ["数据库", "3", "14", "版本"]);
    }

    #[test]
    fn all_cjk_matches_the_characters() {
        for w in [
            "",
            "数据库",
            "\u{4E00}",
            "\u{9FFF}",
            "\u{4DFF}",
            "\u{A000}",
            "〇",
            "\u{3400}",
            "\u{20000}",
            "数a",
            "a数",
            "t恤",
            "数\u{20000}",
            "数。",
            "é数",
            "数据库x",
        ] {
            assert_eq!(all_cjk(w), w.chars().all(is_cjk), "{w:?}");
        }
    }

    #[test]
    fn cjk_runs_can_be_skipped() {
        let mut out = Vec::new();
        for_each_word("安装postgresql数据库", true, false, |w, _| out.push(w));
        assert_eq!(out, ["postgresql"]);
    }

    #[test]
    fn char_shingles_span_skipped_characters() {
        // Only the letters of "ab, c-d" are fed: "bc" and "cd" are copied, "ab" is a slice.
        let text = "ab, c-d";
        let mut out = Vec::new();
        let mut shingles = CharShingles::new(2);
        for (i, c) in text.char_indices().filter(|(_, c)| c.is_alphanumeric()) {
            shingles.push(text, i, c, |s| {
                out.push(String::from_utf8(s.to_vec()).unwrap())
            });
        }
        assert_eq!(out, ["ab", "bc", "cd"]);
    }

    #[test]
    fn char_shingles_slide_over_characters() {
        assert_eq!(shingles("abcd", 2), ["ab", "bc", "cd"]);
        assert_eq!(shingles("中文ok", 3), ["中文o", "文ok"]);
        assert_eq!(shingles("ab", 4), ["ab"]);
        assert_eq!(shingles("abc", 1), ["a", "b", "c"]);
        assert_eq!(shingles("abc", 3), ["abc"]);
        assert!(shingles("", 2).is_empty());
        let long = "x".repeat(40);
        assert_eq!(shingles(&long, 16).len(), 25);
        assert!(shingles("abc", 0).is_empty());
    }
}
