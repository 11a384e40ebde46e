//! Splitting normalized text into words and character shingles.
//!
//! CJK ideographs are segmented by jieba; maximal runs of word characters of any other
//! script ([`is_word_char`]) are words as they are. Everything else (punctuation, symbols,
//! whitespace, control characters) only separates words and never becomes a feature, so
//! re-punctuated or re-spaced copies of a text give the same words.

use std::str::CharIndices;
use std::sync::LazyLock;

use jieba_rs::{Jieba, Token};

use crate::simhash::config::MAX_CHAR_SHINGLES;

use super::normalize::{is_caseless_punctuation, is_cjk, is_main_cjk, is_word_char};

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

/// What a run of characters returned by [`Words`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A word of CJK ideographs, as jieba cut it.
    CjkWord,
    /// A word of another script: a maximal run of word characters.
    OtherWord,
    /// A run of ideographs of a text that is not segmented: not a word, but its characters
    /// are features all the same.
    Ideographs,
}

/// The words of a normalized text, in text order, and without segmentation its runs of
/// ideographs: every ideograph of the text is in exactly one [`Kind::CjkWord`] or
/// [`Kind::Ideographs`] run.
///
/// With segmentation, jieba cuts the whole text (a chunk of the document, see `chunks.rs`)
/// in one call: cutting it run by run costs more than the segmentation itself on punctuated
/// text. A text without ideographs need not go through jieba: it would return no token of
/// ideographs, and the other tokens are taken apart character by character anyway. Its
/// tokens are then regrouped: a token of ideographs is a word; every other character is
/// classified again, so that a non-CJK word is always a maximal run of word characters
/// (jieba splits `café` and `file.txt` differently) and separators are never words.
///
/// An iterator rather than a callback so that the caller's loop, with the features of each
/// word inlined, is the only loop: that is most of the work for a Chinese text.
pub(crate) struct Words<'a> {
    text: &'a str,
    /// jieba's tokens of `text` not yet taken, when it is segmented.
    tokens: std::vec::IntoIter<Token<'a>>,
    /// Characters not yet regrouped (of a token that is not all ideographs, or the whole
    /// text when it is not segmented), and the offset in `text` of their first one.
    chars: CharIndices<'a>,
    chars_at: usize,
    group: Regroup,
    /// A token of ideographs to return after the run of characters that it ended.
    queued: Option<&'a str>,
}

impl<'a> Words<'a> {
    /// The words of `text`, segmented by jieba (with `hmm`) if `segment_cjk`.
    pub(crate) fn new(text: &'a str, hmm: bool, segment_cjk: bool) -> Words<'a> {
        let (tokens, chars) = if segment_cjk {
            (JIEBA.cut(text, hmm), "".char_indices())
        } else {
            (Vec::new(), text.char_indices())
        };
        Words {
            text,
            tokens: tokens.into_iter(),
            chars,
            chars_at: 0,
            group: Regroup {
                cjk: if segment_cjk {
                    Kind::CjkWord
                } else {
                    Kind::Ideographs
                },
                start: 0,
                end: 0,
                open: None,
            },
            queued: None,
        }
    }
}

impl<'a> Iterator for Words<'a> {
    type Item = (&'a str, Kind);

    #[inline(always)]
    fn next(&mut self) -> Option<(&'a str, Kind)> {
        if let Some(word) = self.queued.take() {
            return Some((word, Kind::CjkWord));
        }
        let text = self.text;
        loop {
            if let Some((i, c)) = self.chars.next() {
                if let Some(word) = self.group.push(text, self.chars_at + i, c) {
                    return Some(word);
                }
                continue;
            }
            let Some(token) = self.tokens.next() else {
                return self.group.flush(text);
            };
            let word = token.word;
            let offset = (word.as_ptr() as usize).wrapping_sub(text.as_ptr() as usize);
            if let &[byte] = word.as_bytes() {
                // One ASCII character, most often punctuation between Chinese words.
                if let Some(word) = self.group.push(text, offset, char::from(byte)) {
                    return Some(word);
                }
            } else if all_cjk(word) {
                return match self.group.flush(text) {
                    Some(run) => {
                        self.queued = Some(word);
                        Some(run)
                    }
                    None => Some((word, Kind::CjkWord)),
                };
            } else {
                self.chars = word.char_indices();
                self.chars_at = offset;
            }
        }
    }
}

/// Whether every character of `word` is an ideograph. Most of jieba's tokens are ideographs
/// of the main CJK block (U+4E00..U+9FFF, UTF-8 `E4 B8 80`..`E9 BF BF`), which is checked on
/// the lead bytes without decoding: a string of three-byte characters only has a lead byte
/// at every multiple of 3.
#[inline(always)]
fn all_cjk(word: &str) -> bool {
    let bytes = word.as_bytes();
    let main = |i: usize| match bytes.get(i..i + 2) {
        Some(&[lead, second]) => is_main_cjk(lead, second),
        _ => false,
    };
    // Words of one to four characters without a loop (whose exit would be mispredicted for
    // most words), and without branching on each character.
    let main_block = match bytes.len() {
        3 => main(0),
        6 => main(0) & main(3),
        9 => main(0) & main(3) & main(6),
        12 => main(0) & main(3) & main(6) & main(9),
        len => {
            len.is_multiple_of(3)
                && bytes.chunks_exact(3).all(|c| match *c {
                    [lead, second, _] => is_main_cjk(lead, second),
                    _ => false,
                })
        }
    };
    main_block || word.chars().all(is_cjk)
}

/// Joins adjacent characters of one class into runs: of word characters, and of ideographs
/// (outside a token of ideographs: of a mixed dictionary word such as `t恤`, or of a text
/// that is not segmented).
struct Regroup {
    /// The kind of runs of ideographs.
    cjk: Kind,
    /// The pending run, `text[start..end]`.
    start: usize,
    end: usize,
    /// The class of the pending run, if there is one.
    open: Option<Class>,
}

impl Regroup {
    /// Adds `c`, at `offset` in `text`; returns the run that it ends, if any.
    #[inline(always)]
    fn push<'a>(&mut self, text: &'a str, offset: usize, c: char) -> Option<(&'a str, Kind)> {
        let cl = class(c);
        if cl == Class::Separator {
            return self.flush(text);
        }
        if self.open == Some(cl) && offset == self.end {
            self.end = offset + c.len_utf8();
            return None;
        }
        let ended = self.flush(text);
        self.start = offset;
        self.end = offset + c.len_utf8();
        self.open = Some(cl);
        ended
    }

    /// Ends the pending run; returns it, if there was one.
    #[inline(always)]
    fn flush<'a>(&mut self, text: &'a str) -> Option<(&'a str, Kind)> {
        let class = self.open.take()?;
        let run = text.get(self.start..self.end)?;
        Some((
            run,
            if class == Class::Cjk {
                self.cjk
            } else {
                Kind::OtherWord
            },
        ))
    }
}

/// Character shingles of a stream of characters: each run of `n` consecutive characters of
/// the stream, as its UTF-8 bytes. A stream of fewer than `n` characters gives one shingle of
/// all of them ([`finish`](Self::finish)), so that short texts still have a feature; an empty
/// stream gives none.
///
/// The stream may skip characters of the text and run across chunks of it (see `chunks.rs`):
/// the shingles hold copies of their characters, never positions in a text.
pub(crate) struct CharShingles {
    n: usize,
    /// The UTF-8 bytes of the last (up to) `n` characters, the current window at
    /// `bytes[start..end]`; moved back to the front when a character no longer fits.
    bytes: [u8; 2 * WINDOW_BYTES],
    start: usize,
    end: usize,
    /// The byte lengths of the window's characters, a ring in stream order from `oldest`.
    lens: [u8; MAX_CHAR_SHINGLES as usize],
    oldest: usize,
    /// Characters in the window: `n` once the stream has had `n`.
    count: usize,
}

/// The most bytes a window of characters can take.
const WINDOW_BYTES: usize = 4 * MAX_CHAR_SHINGLES as usize;

impl CharShingles {
    /// Shingles of `n` characters (`1..=MAX_CHAR_SHINGLES`; 0 gives none).
    pub(crate) fn new(n: usize) -> CharShingles {
        CharShingles {
            n: n.min(MAX_CHAR_SHINGLES as usize),
            bytes: [0; 2 * WINDOW_BYTES],
            start: 0,
            end: 0,
            lens: [0; MAX_CHAR_SHINGLES as usize],
            oldest: 0,
            count: 0,
        }
    }

    /// Adds `c`; returns the shingle that ends with it, if there is one yet.
    #[inline(always)]
    pub(crate) fn push(&mut self, c: char) -> Option<&[u8]> {
        if self.n == 0 {
            return None;
        }
        if self.end + 4 > self.bytes.len() {
            self.bytes.copy_within(self.start..self.end, 0);
            self.end -= self.start;
            self.start = 0;
        }
        let len = match self.bytes.get_mut(self.end..) {
            Some(dst) if dst.len() >= 4 => c.encode_utf8(dst).len(),
            _ => return None,
        };
        self.end += len;
        if self.count < self.n {
            if let Some(slot) = self.lens.get_mut(self.count) {
                *slot = len as u8;
            }
            self.count += 1;
            if self.count < self.n {
                return None;
            }
        } else {
            // Drop the oldest character; the new one takes its place in the ring.
            if let Some(slot) = self.lens.get_mut(self.oldest) {
                self.start += usize::from(*slot);
                *slot = len as u8;
            }
            self.oldest += 1;
            if self.oldest == self.n {
                self.oldest = 0;
            }
        }
        self.bytes.get(self.start..self.end)
    }

    /// Starts a new stream: the next shingle is made of characters pushed from now on.
    #[inline(always)]
    pub(crate) fn reset(&mut self) {
        self.start = 0;
        self.end = 0;
        self.oldest = 0;
        self.count = 0;
    }

    /// The one shingle of a stream shorter than `n`, if it is not empty.
    pub(crate) fn finish(&self) -> Option<&[u8]> {
        if self.count > 0 && self.count < self.n {
            self.bytes.get(self.start..self.end)
        } else {
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn words(text: &str) -> Vec<&str> {
        let mut out = Vec::new();
        for (w, kind) in Words::new(text, true, true) {
            assert_eq!(kind == Kind::CjkWord, w.chars().all(is_cjk), "{w}");
            out.push(w)
        }
        out
    }

    fn shingles(text: &str, n: usize) -> Vec<String> {
        let mut out = Vec::new();
        let mut shingles = CharShingles::new(n);
        let utf8 = |s: &[u8]| String::from_utf8(s.to_vec()).unwrap();
        for c in text.chars() {
            out.extend(shingles.push(c).map(utf8));
        }
        out.extend(shingles.finish().map(utf8));
        out
    }

    #[test]
    fn a_reset_starts_a_new_stream() {
        let mut shingles = CharShingles::new(3);
        let utf8 = |s: &[u8]| String::from_utf8(s.to_vec()).unwrap();
        let mut out = Vec::new();
        for word in ["stop", "wo", "words"] {
            shingles.reset();
            for c in word.chars() {
                out.extend(shingles.push(c).map(utf8));
            }
        }
        assert_eq!(out, ["sto", "top", "wor", "ord", "rds"]);
        assert_eq!(shingles.finish(), None);
        shingles.reset();
        shingles.push('é');
        assert_eq!(shingles.finish().map(utf8).as_deref(), Some("é"));
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
    fn cjk_runs_need_not_be_segmented() {
        let out: Vec<_> = Words::new("安装postgresql数据库, 运行", true, false).collect();
        assert_eq!(
            out,
            [
                ("安装", Kind::Ideographs),
                ("postgresql", Kind::OtherWord),
                ("数据库", Kind::Ideographs),
                ("运行", Kind::Ideographs)
            ]
        );
    }

    #[test]
    fn char_shingles_span_skipped_characters() {
        // Only the letters of "ab, c-d" are fed.
        let text = "ab, c-d";
        let mut out = Vec::new();
        let mut shingles = CharShingles::new(2);
        for c in text.chars().filter(|c| c.is_alphanumeric()) {
            out.extend(
                shingles
                    .push(c)
                    .map(|s| String::from_utf8(s.to_vec()).unwrap()),
            );
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
        // Long streams of characters of every width, every size: each shingle is the next
        // `n` characters.
        let text: String = "a中é𠀀bc数据𠀁库ü".repeat(20);
        let chars: Vec<char> = text.chars().collect();
        for n in 1..=MAX_CHAR_SHINGLES as usize {
            let expected: Vec<String> = chars.windows(n).map(|w| w.iter().collect()).collect();
            assert_eq!(shingles(&text, n), expected, "{n}");
        }
    }
}
