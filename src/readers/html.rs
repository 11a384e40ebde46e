//! Decoding (charsets) and HTML to main text.
//!
//! **Charset.** As browsers do: a byte-order mark wins, then the charset declared outside the
//! page (HTTP `Content-Type`), then a `<meta charset>` or `<meta http-equiv="Content-Type">` in
//! the first 4 KiB. A declared charset whose decoding leaves more than 1% of characters
//! undecodable is passed over for the next one (servers often declare UTF-8 for GBK pages);
//! with nothing declared, UTF-8 then GB18030 (which also reads GBK and GB2312) are tried.
//!
//! **Main text.** Site boilerplate (menus, headers, footers, "related links", copyright lines)
//! makes unrelated pages of one site look alike, so it is dropped before fingerprinting:
//! - elements that are never article text: `script`, `style`, `noscript`, `template`, `nav`,
//!   `header`, `footer`, `aside`, `form`, `button`, `select`, `iframe`, `svg`, `head`, and
//!   anything `hidden`;
//! - elements whose `id` or `class` names boilerplate (`nav`, `menu`, `sidebar`, `footer`,
//!   `breadcrumb`, `cookie`, `share`, `social`, `related`, `comment`, `advert`, `ad`, …);
//! - when the page has `<main>`, `<article>` or `role="main"` with text in it, everything
//!   outside them;
//! - text blocks (paragraphs, list items, cells, divs) that are mostly link text (link lists),
//!   short lines repeated within the page, and short copyright lines.
//!
//! **Hostile markup.** The tree builder's work grows with the number of open elements at each
//! tag, so a page nested more than 1,000 elements deep (or whose misnested formatting tags
//! would have it re-open elements without bound) is not parsed as it is: it is reduced to its
//! visible text, paragraph breaks and links first (see `nesting.rs`), which loses the
//! `<main>`/`<article>` and `id`/`class` rules for that page but keeps the rest.
//!
//! Walks the tree with an explicit stack: deeply nested input cannot overflow the call stack.

use std::borrow::Cow;
use std::collections::HashMap;

use encoding_rs::{Encoding, GB18030, UTF_8};
use scraper::{Html, Node};

/// A decoding with more than this fraction of replacement characters is rejected.
const MAX_REPLACED_FRACTION: f64 = 0.01;
/// How far into a page to look for `<meta charset>`.
const META_PRESCAN_BYTES: usize = 4096;

/// Elements whose content is not visible text.
pub(super) const INVISIBLE: &[&str] = &[
    "script", "style", "noscript", "template", "select", "option", "textarea", "iframe", "svg",
    "canvas", "object", "embed", "head", "title",
];
/// Elements whose content is site furniture, not article text.
pub(super) const FURNITURE: &[&str] = &[
    "nav", "header", "footer", "aside", "form", "button", "menu", "dialog",
];

/// Elements that start a new block of text.
pub(super) const BLOCKS: &[&str] = &[
    "p",
    "div",
    "li",
    "ul",
    "ol",
    "dl",
    "dt",
    "dd",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "td",
    "th",
    "tr",
    "table",
    "blockquote",
    "pre",
    "section",
    "article",
    "main",
    "body",
    "br",
    "hr",
    "figcaption",
    "address",
    "center",
];

/// `id`/`class` tokens that mark boilerplate when they are a whole token.
const BOILERPLATE_TOKENS: &[&str] = &[
    "nav", "navbar", "menu", "ad", "ads", "adv", "share", "social", "related", "tags", "toolbar",
    "topbar",
];
/// `id`/`class` substrings that mark boilerplate anywhere.
const BOILERPLATE_SUBSTRINGS: &[&str] = &[
    "sidebar",
    "footer",
    "breadcrumb",
    "cookie",
    "advert",
    "sponsor",
    "comment",
    "copyright",
    "newsletter",
    "subscribe",
    "popup",
    "banner",
    "masthead",
    "pagination",
    "navigation",
];

/// Decodes a text file: UTF-8 (a BOM is honoured and dropped), else GB18030.
///
/// ```
/// use simhash_store::decode_text;
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

fn decode_undeclared(bytes: &[u8]) -> Result<Cow<'_, str>, String> {
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
fn decode_with<'a>(enc: &'static Encoding, bytes: &'a [u8]) -> Option<Cow<'a, str>> {
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
fn meta_charset(bytes: &[u8]) -> Option<&'static Encoding> {
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

fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// Decodes an HTML page as described in the module documentation.
fn decode_html<'a>(bytes: &'a [u8], declared: Option<&str>) -> Result<Cow<'a, str>, String> {
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

/// The text of an HTML page: decoded with its declared charset (`declared` is the one from
/// outside the page, e.g. HTTP `Content-Type`), and with `main_text` its main text only
/// (boilerplate removed as described in the module documentation); otherwise all visible
/// text. Blocks are separated by newlines.
///
/// A page nested more than 1,000 elements deep, or whose misnested formatting tags would make
/// the parser re-create elements without bound, is reduced to its visible text, paragraph
/// breaks and links before it is parsed (time and memory stay linear in its size); for such
/// a page the `<main>`/`<article>` and `id`/`class` rules do not apply.
///
/// ```
/// use simhash_store::html_to_text;
/// let page = br#"<html><head><title>Site</title><script>var x;</script></head><body>
///   <nav><a href="/">Home</a> <a href="/news">News</a></nav>
///   <article><h1>Rain tomorrow</h1><p>Heavy rain is expected in the north of the city.</p></article>
///   <footer>Copyright 2024 Example</footer></body></html>"#;
/// assert_eq!(html_to_text(page, None, true).unwrap(), "Rain tomorrow\nHeavy rain is expected in the north of the city.");
/// ```
///
/// # Errors
/// A message naming the problem when the page does not decode in its declared charset (or,
/// with none declared, in UTF-8 or GB18030).
pub fn html_to_text(
    bytes: &[u8],
    declared: Option<&str>,
    main_text: bool,
) -> Result<String, String> {
    let source = decode_html(bytes, declared)?;
    Ok(match super::nesting::check(&source) {
        None => extract(&source, main_text),
        Some(_) => extract(&super::nesting::flatten(&source, main_text), main_text),
    })
}

/// A run of text between block boundaries.
#[derive(Debug, Default)]
struct Block {
    text: String,
    /// Characters other than whitespace.
    chars: usize,
    /// Of which inside `<a>`.
    link_chars: usize,
    /// Whether the block is inside `<main>`, `<article>` or `role="main"`.
    in_main: bool,
}

fn is_boilerplate(el: &scraper::node::Element) -> bool {
    if el.attr("hidden").is_some() || el.attr("aria-hidden") == Some("true") {
        return true;
    }
    if let Some(style) = el.attr("style") {
        let style: String = style
            .chars()
            .filter(|c| !c.is_whitespace())
            .collect::<String>()
            .to_ascii_lowercase();
        if style.contains("display:none") || style.contains("visibility:hidden") {
            return true;
        }
    }
    if matches!(
        el.attr("role"),
        Some("navigation" | "banner" | "contentinfo" | "complementary")
    ) {
        return true;
    }
    let names = el.attr("id").into_iter().chain(el.attr("class"));
    for name in names {
        let name = name.to_ascii_lowercase();
        if BOILERPLATE_SUBSTRINGS.iter().any(|s| name.contains(s)) {
            return true;
        }
        if name
            .split(|c: char| c.is_whitespace() || c == '-' || c == '_')
            .any(|token| BOILERPLATE_TOKENS.contains(&token))
        {
            return true;
        }
    }
    false
}

fn is_main(el: &scraper::node::Element) -> bool {
    matches!(el.name(), "main" | "article") || el.attr("role") == Some("main")
}

/// Walks the parsed page and returns its (main) text.
fn extract(source: &str, main_text: bool) -> String {
    let doc = Html::parse_document(source);
    let mut blocks: Vec<Block> = Vec::new();
    let mut current = Block::default();
    let mut link_depth = 0usize;
    let mut main_depth = 0usize;
    // (node, is_close): an explicit stack instead of recursion.
    let mut stack = vec![(doc.tree.root(), false)];
    while let Some((node, closing)) = stack.pop() {
        match node.value() {
            Node::Text(t) => {
                append_text(&mut current, t, link_depth > 0);
            }
            Node::Element(el) => {
                let name = el.name();
                let block = BLOCKS.contains(&name);
                if closing {
                    if name == "a" {
                        link_depth = link_depth.saturating_sub(1);
                    }
                    if is_main(el) {
                        main_depth = main_depth.saturating_sub(1);
                    }
                    if block {
                        flush(&mut blocks, &mut current);
                    }
                    current.in_main = main_depth > 0;
                    continue;
                }
                if INVISIBLE.contains(&name)
                    || (main_text && (FURNITURE.contains(&name) || is_boilerplate(el)))
                {
                    continue;
                }
                if block {
                    flush(&mut blocks, &mut current);
                }
                if name == "a" {
                    link_depth += 1;
                }
                if is_main(el) {
                    main_depth += 1;
                }
                current.in_main = main_depth > 0;
                stack.push((node, true));
                stack.extend(node.children().rev().map(|c| (c, false)));
            }
            Node::Document | Node::Fragment => {
                stack.extend(node.children().rev().map(|c| (c, false)));
            }
            _ => {}
        }
    }
    flush(&mut blocks, &mut current);
    if main_text {
        filter_boilerplate(&mut blocks);
    }
    let texts: Vec<&str> = blocks.iter().map(|b| b.text.as_str()).collect();
    texts.join("\n")
}

/// Appends `text` to the block with whitespace collapsed to single spaces; a line break
/// between two CJK characters is no space.
fn append_text(block: &mut Block, text: &str, in_link: bool) {
    let mut separated = text.starts_with(char::is_whitespace);
    for word in text.split_whitespace() {
        if separated && !block.text.is_empty() && !block.text.ends_with(' ') {
            block.text.push(' ');
        }
        if word.starts_with(is_cjk) && block.text.ends_with(' ') {
            let before = block.text[..block.text.len() - 1].chars().last();
            if before.is_some_and(is_cjk) {
                block.text.pop();
            }
        }
        block.text.push_str(word);
        let n = word.chars().count();
        block.chars += n;
        if in_link {
            block.link_chars += n;
        }
        separated = true;
    }
    if text.ends_with(char::is_whitespace) && !block.text.is_empty() && !block.text.ends_with(' ') {
        block.text.push(' ');
    }
}

fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3000..=0x303f | 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0xff00..=0xffef)
}

fn flush(blocks: &mut Vec<Block>, current: &mut Block) {
    let mut block = std::mem::take(current);
    let trimmed = block.text.trim_end();
    if trimmed.len() != block.text.len() {
        block.text.truncate(trimmed.len());
    }
    if block.chars > 0 {
        blocks.push(block);
    }
}

/// Is this a short block that reads like boilerplate?
fn is_short(block: &Block) -> bool {
    // A CJK character carries about as much as a short word.
    let weight: usize = block
        .text
        .chars()
        .map(|c| {
            if is_cjk(c) {
                3
            } else {
                usize::from(!c.is_whitespace())
            }
        })
        .sum();
    weight < 40
}

fn filter_boilerplate(blocks: &mut Vec<Block>) {
    let main_chars: usize = blocks.iter().filter(|b| b.in_main).map(|b| b.chars).sum();
    if main_chars > 0 {
        blocks.retain(|b| b.in_main);
    }
    // Link lists: blocks that are mostly links.
    blocks.retain(|b| b.link_chars * 2 <= b.chars);
    // Short lines repeated within the page ("Read more", "Share", separators).
    let mut seen: HashMap<&str, usize> = HashMap::new();
    for b in blocks.iter().filter(|b| is_short(b)) {
        *seen.entry(b.text.as_str()).or_default() += 1;
    }
    let repeated: Vec<String> = seen
        .into_iter()
        .filter(|&(_, n)| n > 1)
        .map(|(t, _)| t.to_owned())
        .collect();
    blocks.retain(|b| !(is_short(b) && repeated.iter().any(|r| r == &b.text)));
    // Copyright lines.
    blocks.retain(|b| {
        let lower = b.text.to_lowercase();
        !(is_short(b)
            && (lower.contains('©')
                || lower.contains("copyright")
                || lower.contains("all rights reserved")
                || lower.contains("版权所有")))
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn meta_charset_forms() {
        assert_eq!(
            meta_charset(b"<html><META charset=\"GBK\">"),
            Some(encoding_rs::GBK)
        );
        assert_eq!(
            meta_charset(
                b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\">"
            ),
            Some(encoding_rs::GBK)
        );
        assert_eq!(
            meta_charset(b"<meta name=\"viewport\"><meta charset='utf-8'>"),
            Some(UTF_8)
        );
        assert_eq!(meta_charset(b"<meta name=x>"), None);
    }

    #[test]
    fn gbk_page_with_meta() {
        let (page, _, _) = encoding_rs::GBK.encode(
            "<html><head><meta charset=\"gbk\"></head><body><p>近似重复网页检测</p></body></html>",
        );
        assert_eq!(html_to_text(&page, None, true).unwrap(), "近似重复网页检测");
        // A wrong header (UTF-8) is passed over for the meta declaration.
        assert_eq!(
            html_to_text(&page, Some("utf-8"), true).unwrap(),
            "近似重复网页检测"
        );
    }

    #[test]
    fn undecodable_declared() {
        let bytes: Vec<u8> = (0..200)
            .map(|i| if i % 2 == 0 { 0xff } else { b'a' })
            .collect();
        let err = html_to_text(&bytes, Some("utf-8"), true).unwrap_err();
        assert!(err.contains("declared charset (UTF-8)"), "{err}");
    }

    #[test]
    fn link_lists_and_repeats_go() {
        let page = b"<body><div><a href=1>One</a> <a href=2>Two</a> <a href=3>Three</a></div>\
            <p>Read more</p><p>A real paragraph about the weather, long enough to keep.</p><p>Read more</p>\
            <div class=\"share-box\">Share on social media</div></body>";
        assert_eq!(
            html_to_text(page, None, true).unwrap(),
            "A real paragraph about the weather, long enough to keep."
        );
        let all = html_to_text(page, None, false).unwrap();
        assert!(
            all.contains("One Two Three") && all.contains("Share on social media"),
            "{all}"
        );
    }

    #[test]
    fn cjk_lines_join_without_spaces() {
        let page = "<p>近似重复\n网页检测 and\nwords</p>".as_bytes();
        assert_eq!(
            html_to_text(page, None, true).unwrap(),
            "近似重复网页检测 and words"
        );
    }

    #[test]
    fn deep_nesting_does_not_overflow() {
        // Within the depth limit the tree is walked with an explicit stack; past it the page
        // is flattened first.
        for depth in [super::super::nesting::MAX_DEPTH - 50, 100_000] {
            let page = format!("{}text{}", "<div>".repeat(depth), "</div>".repeat(depth));
            assert_eq!(html_to_text(page.as_bytes(), None, false).unwrap(), "text");
        }
    }
}
