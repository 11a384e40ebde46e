//! Decoding a page or a text file: the charset declared or found, as browsers do.

use std::borrow::Cow;

use encoding_rs::{Encoding, GB18030, UTF_8};

/// A decoding with more than this fraction of replacement characters is rejected.
pub(super) const MAX_REPLACED_FRACTION: f64 = 0.01;
/// How far into a page to look for `<meta charset>`.
pub(super) const META_PRESCAN_BYTES: usize = 4096;

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
/// A message naming the problem when neither decodes (more than 1% undecodable characters).
pub fn decode_text(bytes: &[u8]) -> Result<Cow<'_, str>, String> {
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let body = bytes.get(bom_len..).unwrap_or_default();
        return decode_with(enc, body).ok_or_else(|| {
            format!(
                "the text is not valid {} although it starts with its byte-order mark",
                enc.name()
            )
        });
    }
    decode_undeclared(bytes)
}

pub(super) fn decode_undeclared(bytes: &[u8]) -> Result<Cow<'_, str>, String> {
    if let Ok(s) = std::str::from_utf8(bytes) {
        return Ok(Cow::Borrowed(s));
    }
    for enc in [UTF_8, GB18030] {
        if let Some(s) = decode_with(enc, bytes) {
            return Ok(s);
        }
    }
    Err(
        "the text is neither UTF-8 nor GB18030 and declares no charset: convert it to UTF-8 \
         (e.g. with iconv) or declare its charset"
            .into(),
    )
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

/// Decodes an HTML page as described in the module documentation.
pub(super) fn decode_html<'a>(
    bytes: &'a [u8],
    declared: Option<&str>,
) -> Result<Cow<'a, str>, String> {
    if let Some((enc, bom_len)) = Encoding::for_bom(bytes) {
        let body = bytes.get(bom_len..).unwrap_or_default();
        return decode_with(enc, body).ok_or_else(|| {
            format!(
                "the page is not valid {} although it starts with its byte-order mark",
                enc.name()
            )
        });
    }
    let header =
        declared.and_then(|label| Encoding::for_label(label.trim().trim_matches('"').as_bytes()));
    let meta = meta_charset(bytes);
    let mut tried = Vec::new();
    for enc in [header, meta].into_iter().flatten() {
        if tried.contains(&enc) {
            continue;
        }
        tried.push(enc);
        // Browsers read pages declared as ISO-8859-1/ASCII as windows-1252; encoding_rs does
        // the same through its labels. UTF-16 labels in a page that has no BOM are not
        // UTF-16 in practice (the HTML standard says to read them as UTF-8).
        let enc = if enc == encoding_rs::UTF_16LE || enc == encoding_rs::UTF_16BE {
            UTF_8
        } else {
            enc
        };
        if let Some(text) = decode_with(enc, bytes) {
            return Ok(text);
        }
    }
    if tried.is_empty() {
        return decode_undeclared(bytes).map_err(|_| {
            "the page is neither UTF-8 nor GB18030 and declares no charset: add <meta charset> or \
             convert it to UTF-8"
                .to_string()
        });
    }
    let names: Vec<&str> = tried.iter().map(|e| e.name()).collect();
    Err(format!(
        "the page does not decode in its declared charset ({}): more than 1% of its characters are invalid",
        names.join(", ")
    ))
}
