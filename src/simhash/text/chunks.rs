//! Cutting a text into chunks that are fingerprinted one after the other with exactly the
//! features of the whole text, so that fingerprinting holds one chunk's normalized copy and
//! jieba tokens at a time, not the whole text's (for a 200 MB document, 20 times its size
//! whole).
//!
//! A chunk may start at a character that normalizes to itself and that
//!
//! - jieba keeps out of its blocks (not in its `RE_HAN_DEFAULT` class of ideographs, ASCII
//!   letters and digits and `+#&._%-`). jieba splits its input into maximal runs of that class
//!   and segments each run on its own (the word graph and the HMM see one run); every other
//!   character is a token by itself, except `\r\n`, which is never cut apart. So cutting the
//!   chunks separately gives the whole text's tokens;
//! - separates words (`tokenize::Words`), so no word spans two chunks.
//!
//! Normalization maps each character on its own, so the chunks' normalized texts are the
//! whole normalized text cut at the same places. What runs across words and chunks (character
//! and word shingles) carries characters and hashes from one chunk to the next, never offsets.

use super::normalize::is_caseless_punctuation;

/// The size a chunk grows to before it ends at the next character that may start one.
pub(crate) const CHUNK_BYTES: usize = 16 * 1024;

/// Whether a chunk may start with the character whose first byte is at `i` of `text`.
#[inline]
fn starts_chunk(text: &str, i: usize, c: char) -> bool {
    if c.is_ascii() {
        // ASCII other than letters, digits and jieba's `+#&._%-` (and `_`, part of a word).
        // `\n` only where it does not end a `\r\n`.
        !c.is_ascii_alphanumeric()
            && !matches!(c, '+' | '#' | '&' | '.' | '_' | '%' | '-')
            && (c != '\n' || i.checked_sub(1).and_then(|p| text.as_bytes().get(p)) != Some(&b'\r'))
    } else {
        // Chinese punctuation (。、“” ...), which normalization keeps; not the ideographic
        // space, which it folds to a space.
        is_caseless_punctuation(c) && c != '\u{3000}'
    }
}

/// The chunks of `text`, in order: about `size` bytes each ([`CHUNK_BYTES`] but in tests),
/// longer where no character may start a chunk (a single chunk for a text without one).
pub(crate) fn chunks(text: &str, size: usize) -> impl Iterator<Item = &str> {
    let mut rest = text;
    let mut consumed = 0;
    std::iter::from_fn(move || {
        if rest.is_empty() {
            return None;
        }
        let mut at = size.max(1);
        while at < rest.len() && !rest.is_char_boundary(at) {
            at += 1;
        }
        let end = rest
            .get(at..)
            .and_then(|tail| {
                tail.char_indices()
                    .find(|&(i, c)| starts_chunk(text, consumed + at + i, c))
                    .map(|(i, _)| at + i)
            })
            .unwrap_or(rest.len());
        let (chunk, tail) = rest.split_at(end);
        rest = tail;
        consumed += end;
        Some(chunk)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_text_and_start_where_allowed() {
        let unit = "数据库，Sé servers\r\nrun ｔｅｘｔ。“引号”\n\r\n\r\n";
        let text = unit.repeat(3 * CHUNK_BYTES / unit.len());
        let all: Vec<&str> = chunks(&text, CHUNK_BYTES).collect();
        assert!(all.len() >= 3, "{}", all.len());
        assert_eq!(all.concat(), text);
        let mut at = 0;
        for chunk in &all {
            assert!(!chunk.is_empty());
            if at > 0 {
                let c = chunk.chars().next().unwrap();
                assert!(starts_chunk(&text, at, c), "{c:?}");
                assert!(!chunk.starts_with('\n') || !text[..at].ends_with('\r'));
            }
            at += chunk.len();
        }
    }

    #[test]
    fn text_without_a_place_to_cut_is_one_chunk() {
        for text in [
            String::new(),
            "abc".into(),
            "a-b.c_d".repeat(CHUNK_BYTES),
            "数据".repeat(CHUNK_BYTES),
        ] {
            let all: Vec<&str> = chunks(&text, CHUNK_BYTES).collect();
            assert_eq!(all.concat(), text);
            assert!(all.len() <= 1, "{} chunks", all.len());
        }
    }

    #[test]
    fn allowed_starts_are_not_word_or_jieba_characters() {
        use super::super::normalize::{is_cjk, is_kept, is_word_char};
        let all = (0u32..0x3_0000).filter_map(char::from_u32);
        for c in all.filter(|&c| starts_chunk("", 0, c)) {
            assert!(is_kept(c), "{c:?} changes when normalized");
            assert!(!is_word_char(c) && !is_cjk(c), "{c:?} is part of words");
            assert!(
                !c.is_alphanumeric() && !"+#&._%-".contains(c),
                "{c:?} is in jieba's blocks"
            );
        }
    }
}
