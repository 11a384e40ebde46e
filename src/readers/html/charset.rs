//! Decoding a page or a text file: the charset declared or found, as browsers do, and binary
//! data told from text.

use std::borrow::Cow;

use encoding_rs::{Encoding, GB18030, UTF_8};

use super::super::BadRecordKind;

/// A decoding with more than this fraction of replacement characters is rejected.
pub(super) const MAX_REPLACED_FRACTION: f64 = 0.01;
/// How far into a page to look for `<meta charset>`.
pub(super) const META_PRESCAN_BYTES: usize = 4096;
/// Decoded bytes with more than this fraction of control characters other than NUL and those
/// text uses (tab, line breaks, form feed, backspace, escape) are binary data, not text.
pub(super) const MAX_CONTROL_FRACTION: f64 = 0.05;
/// Decoded bytes with more than this fraction of NUL are binary data (or UTF-16 without a
/// byte-order mark), not text. Fewer NULs separate words like spaces.
pub(super) const MAX_NUL_FRACTION: f64 = 1.0 / 3.0;

/// Why bytes are not a text: [`BadRecordKind::Undecodable`] or [`BadRecordKind::Binary`], and
/// a message that says what to do.
pub(crate) type NotText = (BadRecordKind, String);

fn undecodable(message: impl Into<String>) -> NotText {
    (BadRecordKind::Undecodable, message.into())
}

/// Decodes a text file: UTF-8 (a BOM is honoured and dropped), else GB18030.
///
/// ```
/// use simhash_store::readers::decode_text;
/// assert_eq!(decode_text("naïve".as_bytes()).unwrap(), "naïve");
/// let (gbk, _, _) = encoding_rs::GBK.encode("中文网页");
/// assert_eq!(decode_text(&gbk).unwrap(), "中文网页");
/// ```
///
/// # Errors
/// A message naming the problem when neither decodes (more than 1% undecodable characters),
/// or when the bytes are binary data rather than text (more than 5% control characters other
/// than NUL and those text uses, or more than a third NUL).
pub fn decode_text(bytes: &[u8]) -> Result<Cow<'_, str>, String> {
    decode_plain(bytes).map_err(|(_, message)| message)
}

/// [`decode_text`], with the kind of problem.
pub(crate) fn decode_plain(bytes: &[u8]) -> Result<Cow<'_, str>, NotText> {
    let text = if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let body = bytes.get(bom_len..).unwrap_or_default();
        decode_with(enc, body).ok_or_else(|| {
            undecodable(format!(
                "the text is not valid {} although it starts with its byte-order mark",
                enc.name()
            ))
        })?
    } else {
        decode_undeclared(bytes).ok_or_else(|| {
            undecodable(
                "the text is neither UTF-8 nor GB18030 and declares no charset: convert it to \
                 UTF-8 (e.g. with iconv) or declare its charset",
            )
        })?
    };
    check_text(&text)?;
    Ok(text)
}

/// UTF-8, else GB18030 (which also reads GBK and GB2312), each within 1% of undecodable
/// characters.
pub(super) fn decode_undeclared(bytes: &[u8]) -> Option<Cow<'_, str>> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Some(Cow::Borrowed(s));
    }
    [UTF_8, GB18030]
        .into_iter()
        .find_map(|enc| decode_with(enc, bytes))
}

/// Fails with [`BadRecordKind::Binary`] when decoded bytes are binary data rather than text:
/// more than 5% control characters other than NUL, tab, line breaks, form feed, backspace
/// and escape, or more than a third NUL. Any such bytes decode (the bytes 0 to 255 are
/// valid GB18030 in order), but they are not words to fingerprint.
pub(crate) fn check_text(text: &str) -> Result<(), NotText> {
    let (mut chars, mut controls, mut nuls) = (0usize, 0usize, 0usize);
    for c in text.chars() {
        chars += 1;
        match c {
            '\0' => nuls += 1,
            '\t' | '\n' | '\r' | '\u{b}' | '\u{c}' | '\u{8}' | '\u{1b}' => {}
            c if c.is_control() => controls += 1,
            _ => {}
        }
    }
    let binary = controls as f64 > MAX_CONTROL_FRACTION * chars as f64
        || nuls as f64 > MAX_NUL_FRACTION * chars as f64;
    if binary {
        return Err((
            BadRecordKind::Binary,
            format!(
                "binary data, not text: {} of its {chars} characters are control characters \
                 ({nuls} NUL); leave such files out of the input",
                controls + nuls
            ),
        ));
    }
    Ok(())
}

/// Decodes `bytes` with `enc`, or `None` if more than 1% of the characters are undecodable.
pub(super) fn decode_with<'a>(enc: &'static Encoding, bytes: &'a [u8]) -> Option<Cow<'a, str>> {
    let (text, had_errors) = enc.decode_without_bom_handling(bytes);
    if had_errors {
        let replaced = text.chars().filter(|&c| c == '\u{fffd}').count();
        let total = text.chars().count().max(1);
        if replaced as f64 > MAX_REPLACED_FRACTION * total as f64 {
            return None;
        }
    }
    Some(text)
}

/// The charset label in a `<meta>` tag within the first 4 KiB, if any.
pub(super) fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
    let head = &bytes[..bytes.len().min(META_PRESCAN_BYTES)];
    let lower: Vec<u8> = head.to_ascii_lowercase();
    let mut from = 0;
    while let Some(at) = find(&lower[from..], b"<meta") {
        let start = from + at;
        let end = lower[start..]
            .iter()
            .position(|&b| b == b'>')
            .map_or(lower.len(), |e| start + e);
        let tag = &lower[start..end];
        if let Some(c) = find(tag, b"charset=") {
            let value = &tag[c + b"charset=".len()..];
            let value: Vec<u8> = value
                .iter()
                .copied()
                .skip_while(|&b| b == b'"' || b == b'\'' || b == b' ')
                .take_while(|&b| {
                    b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b':' || b == b'.'
                })
                .collect();
            if let Some(enc) = Encoding::for_label(&value) {
                return Some(enc);
            }
        }
        from = end;
    }
    None
}

pub(super) fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Decodes an HTML page as described in the module documentation: a byte-order mark, else
/// the declared charsets in order (the one from outside the page, then the page's own), else
/// UTF-8 and GB18030; the first that decodes within 1% of undecodable characters wins. A
/// declaration is often false (servers and templates claim UTF-8 for GBK pages), so UTF-8
/// and GB18030 are tried after the declared charsets too. Binary data is refused
/// ([`check_text`]).
pub(super) fn decode_html<'a>(
    bytes: &'a [u8],
    declared: Option<&str>,
) -> Result<Cow<'a, str>, NotText> {
    let text = decode_page(bytes, declared)?;
    check_text(&text)?;
    Ok(text)
}

fn decode_page<'a>(bytes: &'a [u8], declared: Option<&str>) -> Result<Cow<'a, str>, NotText> {
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let body = bytes.get(bom_len..).unwrap_or_default();
        return decode_with(enc, body).ok_or_else(|| {
            undecodable(format!(
                "the page is not valid {} although it starts with its byte-order mark",
                enc.name()
            ))
        });
    }
    let header =
        declared.and_then(|label| Encoding::for_label(label.trim().trim_matches('"').as_bytes()));
    let meta = meta_charset(bytes);
    let mut tried = Vec::new();
    for enc in [header, meta].into_iter().flatten() {
        // Browsers read pages declared as ISO-8859-1/ASCII as windows-1252; encoding_rs does
        // the same through its labels. UTF-16 labels in a page that has no BOM are not
        // UTF-16 in practice (the HTML standard says to read them as UTF-8).
        let enc = if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
            UTF_8
        } else {
            enc
        };
        if tried.contains(&enc) {
            continue;
        }
        tried.push(enc);
        if let Some(text) = decode_with(enc, bytes) {
            return Ok(text);
        }
    }
    if tried.is_empty() {
        return decode_undeclared(bytes).ok_or_else(|| {
            undecodable(
                "the page is neither UTF-8 nor GB18030 and declares no charset: add <meta charset> \
                 or convert it to UTF-8",
            )
        });
    }
    // Every declaration failed: the page is in another charset than it says.
    for enc in [UTF_8, GB18030] {
        if !tried.contains(&enc) {
            if let Some(text) = decode_with(enc, bytes) {
                return Ok(text);
            }
        }
    }
    let names: Vec<&str> = tried.iter().map(|e| e.name()).collect();
    Err(undecodable(format!(
        "the page does not decode in its declared charset ({}), nor in UTF-8 or GB18030: more than 1% of \
         its characters are invalid; convert it to UTF-8 and declare that",
        names.join(", ")
    )))
}
