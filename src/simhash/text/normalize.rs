//! Character normalization before tokenizing: lowercase, and optionally an NFKC-like fold of
//! the compatibility forms and look-alike letters that near-duplicate pages differ by.
//!
//! The fold is a fixed table, not full Unicode NFKC or UTS #39 skeletons: full-width ASCII
//! (`Ａ１！` -> `a1!`), the ideographic space, Latin ligatures (`ﬁ` -> `fi`), and the
//! Cyrillic and Greek letters that render like Latin ones (`а с е о р х у і` -> `a c e o p x y
//! i`). Folding is applied the same way to every text, so it can only merge features, never
//! split them: a Russian word becomes a string of Latin letters, which is harmless for
//! near-duplicate detection.

/// Appends the lowercase (and with `fold`, folded) form of `text` to `out`. Returns whether
/// `text` may hold an ideograph: false only if it holds none.
///
/// Most characters are kept as they are: lowercase ASCII, digits and ASCII punctuation, and
/// the characters of U+4000..U+9FFF (nearly every character of Chinese text: ideographs, and
/// the Yijing hexagrams U+4DC0..U+4DFF, which normalize to themselves too), recognized by
/// their first byte, `E4`..`E9`. The text is scanned eight bytes at a time for the bytes
/// that start anything else ([`attention`]); the kept runs between them are copied in one
/// piece. One branch per eight bytes rather than one per character: the latter were
/// mispredicted around most characters other than ideographs, and on the benchmark's text
/// they also slowed down jieba's segmentation that follows, by about twice their own time
/// (likely through the branch predictor's history, which both use). (A table of what each
/// first byte implies was tried instead of branches: slower, as every step then waits for a
/// table load.)
pub(crate) fn normalize_into(text: &str, fold: bool, out: &mut String) -> bool {
    out.reserve(text.len());
    let bytes = text.as_bytes();
    let mut has_cjk = false;
    let mut kept_from = 0;
    let mut i = 0;
    loop {
        i = skip_kept(bytes, i, &mut has_cjk);
        let Some(&lead) = bytes.get(i) else {
            break;
        };
        if lead.is_ascii() {
            // An upper-case letter.
            out.push_str(text.get(kept_from..i).unwrap_or_default());
            out.push(char::from(lead.to_ascii_lowercase()));
            kept_from = i + 1;
            i += 1;
            continue;
        }
        let Some(c) = text.get(i..).and_then(|rest| rest.chars().next()) else {
            break;
        };
        has_cjk |= is_cjk(c);
        if !is_kept(c) {
            out.push_str(text.get(kept_from..i).unwrap_or_default());
            push_normalized(c, fold, out);
            kept_from = i + c.len_utf8();
        }
        i += c.len_utf8();
    }
    out.push_str(text.get(kept_from..).unwrap_or_default());
    has_cjk
}

/// The first byte of `bytes` from `i` on that needs a look from [`normalize_into`] (see
/// [`attention`]), or the length of `bytes`; sets `has_cjk` if a byte skipped starts a
/// character of U+4000..U+9FFF.
#[inline(always)]
fn skip_kept(bytes: &[u8], mut i: usize, has_cjk: &mut bool) -> usize {
    while let Some(chunk) = bytes.get(i..).and_then(|rest| rest.first_chunk::<8>()) {
        let (attention, main) = attention(u64::from_le_bytes(*chunk));
        *has_cjk |= main != 0;
        if attention != 0 {
            return i + (attention.trailing_zeros() / 8) as usize;
        }
        i += 8;
    }
    // The last few bytes, one at a time.
    while let Some(&byte) = bytes.get(i) {
        let main = (0xE4..=0xE9).contains(&byte);
        if byte.is_ascii_uppercase() || (byte >= 0xC0 && !main) {
            return i;
        }
        *has_cjk |= main;
        i += 1;
    }
    i
}

/// For the eight bytes of UTF-8 `word` (little-endian), the high bit of each byte that needs
/// a look from [`normalize_into`]: an upper-case ASCII letter, or the first byte of a
/// character outside U+4000..U+9FFF (`C0`..`E3`, `EA`..`FF`); and the high bit of each first
/// byte of a character inside it (`E4`..`E9`). Continuation bytes (`80`..`BF`) never need
/// one: the character they continue started at a byte that did, or was kept.
///
/// Each test is on the low seven bits of every byte at once: adding `0x80 - k` to a value
/// below `0x80` sets its high bit exactly when the value is at least `k`, without a carry
/// into the next byte.
#[inline(always)]
fn attention(word: u64) -> (u64, u64) {
    const fn each(b: u8) -> u64 {
        u64::from_ne_bytes([b; 8])
    }
    const HIGH: u64 = each(0x80);
    let high = word & HIGH;
    let low = word & !HIGH;
    let at_least = |k: u8| low + each(0x80 - k);
    // ASCII: 'A'..='Z' is 0x41..=0x5A.
    let upper = !high & at_least(0x41) & !at_least(0x5B);
    // Bytes 0x80 and up: their low seven bits are at least 0x40 for lead bytes (0xC0..),
    // and 0x64..=0x69 for 0xE4..=0xE9.
    let lead = high & at_least(0x40);
    let main = lead & at_least(0x64) & !at_least(0x6A);
    ((upper | (lead & !main)) & HIGH, main & HIGH)
}

/// Whether normalization keeps `c` as it is, folding or not: lowercase ASCII, digits and
/// ASCII punctuation, ideographs, and caseless punctuation other than the ideographic space
/// (which folds to a space). A fast path: the others go through [`push_normalized`].
#[inline]
pub(crate) fn is_kept(c: char) -> bool {
    if c.is_ascii() {
        !c.is_ascii_uppercase()
    } else {
        is_cjk(c) || (is_caseless_punctuation(c) && c != '\u{3000}')
    }
}

/// Appends the lowercase (and with `fold`, folded) form of `c` to `out`.
#[inline]
pub(crate) fn push_normalized(c: char, fold: bool, out: &mut String) {
    if c.is_ascii() {
        out.push(c.to_ascii_lowercase());
        return;
    }
    // Ideographs have no case and no fold: the common case in Chinese text.
    if is_cjk(c) {
        out.push(c);
        return;
    }
    if fold {
        if let Some(folded) = fold_char(c) {
            out.push_str(folded);
            return;
        }
    }
    if is_caseless_punctuation(c) {
        out.push(c);
    } else {
        out.extend(c.to_lowercase());
    }
}

/// A CJK unified or compatibility ideograph (or `〇`): segmented by jieba.
#[inline]
pub(crate) fn is_cjk(c: char) -> bool {
    matches!(c,
        '\u{4E00}'..='\u{9FFF}'
        | '\u{3400}'..='\u{4DBF}'
        | '\u{F900}'..='\u{FAFF}'
        | '\u{3007}'
        | '\u{20000}'..='\u{2FFFF}'
        | '\u{30000}'..='\u{3134F}')
}

/// Whether a UTF-8 sequence that starts with the bytes `lead, second` is an ideograph of the
/// main CJK block, U+4E00..U+9FFF (`E4 B8 80`..`E9 BF BF`): nearly every character of
/// Chinese text, recognized without decoding it.
#[inline(always)]
pub(crate) fn is_main_cjk(lead: u8, second: u8) -> bool {
    // `|` and `&`, not `||` and `&&`: no branch on which lead byte this is.
    (lead.wrapping_sub(0xE5) <= 0xE9 - 0xE5) | ((lead == 0xE4) & (second >= 0xB8))
}

/// General punctuation (U+2000..U+206F) and the punctuation of CJK symbols and punctuation
/// (U+3000..U+303F without its letters and numerals such as `々` and `〇`): no case, never
/// part of a word. A fast path for the punctuation of Chinese
/// text, which would otherwise go through the Unicode tables.
#[inline]
pub(crate) fn is_caseless_punctuation(c: char) -> bool {
    matches!(c,
        '\u{2000}'..='\u{206F}'
        | '\u{3000}'..='\u{3004}'
        | '\u{3008}'..='\u{3020}'
        | '\u{3030}'
        | '\u{303D}'..='\u{303F}')
}

/// A character that belongs to a word of a non-CJK script: letters, digits, `_`, and
/// combining marks (so that decomposed accents do not split words).
#[inline]
pub(crate) fn is_word_char(c: char) -> bool {
    if c.is_ascii() {
        c.is_ascii_alphanumeric() || c == '_'
    } else {
        c.is_alphanumeric() || matches!(c, '\u{0300}'..='\u{036F}')
    }
}

/// The folded, lowercase form of a non-ASCII `c`, if the table has one.
fn fold_char(c: char) -> Option<&'static str> {
    let cp = c as u32;
    // Full-width ASCII FF01..FF5E -> 21..7E, lowercased.
    if (0xFF01..=0xFF5E).contains(&cp) {
        let ascii = (cp - 0xFF01 + 0x21) as usize;
        return ASCII_LOWER.get(ascii - 0x21..ascii - 0x20);
    }
    Some(match c {
        '\u{3000}' => " ",
        'ﬀ' => "ff",
        'ﬁ' => "fi",
        'ﬂ' => "fl",
        'ﬃ' => "ffi",
        'ﬄ' => "ffl",
        'ﬅ' | 'ﬆ' => "st",
        // Cyrillic look-alikes (after the UTS #39 confusables table); some only in
        // upper case, since the Latin letter is lowercased too.
        'а' | 'А' => "a",
        'В' => "b",
        'с' | 'С' => "c",
        'ԁ' => "d",
        'е' | 'Е' | 'ё' | 'Ё' => "e",
        'һ' | 'Һ' | 'Н' => "h",
        'і' | 'І' | 'ї' | 'Ї' => "i",
        'ј' | 'Ј' => "j",
        'к' | 'К' => "k",
        'ӏ' | 'Ӏ' => "l",
        'М' => "m",
        'о' | 'О' => "o",
        'р' | 'Р' => "p",
        'ԛ' | 'Ԛ' => "q",
        'ѕ' | 'Ѕ' => "s",
        'Т' => "t",
        'ԝ' | 'Ԝ' => "w",
        'х' | 'Х' => "x",
        'у' | 'У' | 'ү' | 'Ү' => "y",
        // Greek look-alikes.
        'α' | 'Α' => "a",
        'Β' => "b",
        'Ε' => "e",
        'Η' => "h",
        'ι' | 'Ι' => "i",
        'κ' | 'Κ' => "k",
        'Μ' => "m",
        'Ν' => "n",
        'ο' | 'Ο' => "o",
        'ρ' | 'Ρ' => "p",
        'Τ' => "t",
        'υ' => "u",
        'ν' => "v",
        'χ' | 'Χ' => "x",
        'Υ' => "y",
        'Ζ' => "z",
        _ => return None,
    })
}

/// Printable ASCII 0x21..=0x7E, lowercased, indexed by `byte - 0x21`.
const ASCII_LOWER: &str = concat!(
    "!\"#$%&'()*+,-./0123456789:;<=>?@",
    "abcdefghijklmnopqrstuvwxyz",
    "[\\]^_`",
    "abcdefghijklmnopqrstuvwxyz",
    "{|}~"
);

#[cfg(test)]
mod tests {
    use super::*;

    fn norm(s: &str, fold: bool) -> String {
        let mut out = String::new();
        let has_cjk = normalize_into(s, fold, &mut out);
        // Character by character, as defined.
        let mut each = String::new();
        for c in s.chars() {
            push_normalized(c, fold, &mut each);
        }
        assert_eq!(out, each, "{s:?}");
        assert!(has_cjk || !s.chars().any(is_cjk), "{s:?}");
        out
    }

    #[test]
    fn attention_marks_the_bytes_to_look_at() {
        for b in 0..=255u8 {
            for at in 0..8 {
                let mut bytes = [b'a'; 8];
                bytes[at] = b;
                let (attention, main) = attention(u64::from_le_bytes(bytes));
                let expected = b.is_ascii_uppercase() || (b >= 0xC0 && !(0xE4..=0xE9).contains(&b));
                assert_eq!(
                    attention,
                    u64::from(expected) << (8 * at + 7),
                    "{b:#x} at {at}"
                );
                let expected = (0xE4..=0xE9).contains(&b);
                assert_eq!(main, u64::from(expected) << (8 * at + 7), "{b:#x} at {at}");
            }
        }
    }

    #[test]
    fn ascii_table_is_complete() {
        assert_eq!(ASCII_LOWER.len(), 0x7E - 0x21 + 1);
        for b in 0x21u8..=0x7E {
            let i = usize::from(b - 0x21);
            assert_eq!(
                &ASCII_LOWER[i..=i],
                (b as char).to_ascii_lowercase().to_string()
            );
        }
    }

    #[test]
    fn lowercases_and_folds() {
        assert_eq!(norm("Hello ÄÖ", false), "hello äö");
        assert_eq!(norm("ＡＢＣ１２３！　ok", true), "abc123! ok");
        assert_eq!(norm("ＡＢＣ", false), "ａｂｃ");
        // Cyrillic а, е, о, р, с, х, у, і inside Latin words.
        assert_eq!(norm("dаtаbаsе sеrvеr сору", true), "database server copy");
        assert_eq!(norm("ﬁle", true), "file");
        assert_eq!(norm("中文Ｔｅｘｔ", true), "中文text");
    }

    #[test]
    fn normalizes_every_character_as_defined() {
        let all: String = (0u32..0x3_2000).filter_map(char::from_u32).collect();
        for fold in [false, true] {
            norm(&all, fold);
        }
        for s in [
            "",
            "a",
            "数",
            "〇",
            "\u{4DC0}x",
            "ＡＢ数据",
            "Ωμέγα",
            "x\u{20000}",
            "\u{3400}",
        ] {
            norm(s, true);
        }
    }

    #[test]
    fn every_character_at_every_offset_of_the_scan() {
        // The scan reads eight bytes at a time and the last ones one by one: each kind of
        // character at each offset, after kept characters of one and three bytes.
        for c in [
            'A',
            'a',
            'Ä',
            '数',
            '\u{4DC0}',
            '\u{3400}',
            '，',
            '。',
            '\u{20000}',
            'Ｑ',
            'ﬁ',
        ] {
            for filler in ["a", "数", "a数"] {
                for n in 0..20 {
                    let mut s = filler.repeat(n);
                    s.push(c);
                    norm(&s, true);
                    s.push_str(&filler.repeat(n % 7));
                    norm(&s, true);
                    norm(&s, false);
                }
            }
        }
    }

    #[test]
    fn kept_characters_normalize_to_themselves() {
        let all = (0u32..0x3_0000).filter_map(char::from_u32);
        for c in all.filter(|&c| is_kept(c)) {
            for fold in [false, true] {
                let mut out = String::new();
                push_normalized(c, fold, &mut out);
                assert_eq!(out, c.to_string(), "{c:?} fold {fold}");
            }
        }
    }

    #[test]
    fn main_block_is_recognized_from_two_bytes() {
        for c in (0u32..0x11_0000).filter_map(char::from_u32) {
            let mut buf = [0; 4];
            let utf8 = c.encode_utf8(&mut buf).as_bytes();
            let two = (utf8[0], utf8.get(1).copied().unwrap_or(0));
            assert_eq!(
                is_main_cjk(two.0, two.1) && utf8.len() == 3,
                ('\u{4E00}'..='\u{9FFF}').contains(&c),
                "{c:?}"
            );
        }
    }

    #[test]
    fn classifies_characters() {
        assert!(is_cjk('中') && is_cjk('〇') && !is_cjk('a') && !is_cjk('。'));
        assert!(is_word_char('a') && is_word_char('_') && is_word_char('é') && is_word_char('9'));
        assert!(
            !is_word_char('-') && !is_word_char('。') && !is_word_char(' ') && !is_word_char('’')
        );
        for c in [
            '，', '。', '、', '“', '”', '—', '…', '《', '》', '「', '」', '\u{3000}',
        ] {
            assert!(is_caseless_punctuation(c) || !c.is_alphanumeric(), "{c}");
        }
        for c in ('\u{2000}'..='\u{206F}').chain('\u{3000}'..='\u{303F}') {
            if is_caseless_punctuation(c) {
                assert!(!c.is_alphanumeric() && c.to_lowercase().eq([c]), "{c:?}");
            }
        }
    }
}
