//! Decoding (charsets) and HTML to main text.
//!
//! **Charset.** As browsers do: a byte-order mark wins, then the charset declared outside the
//! page (HTTP `Content-Type`), then a `<meta charset>` or `<meta http-equiv="Content-Type">` in
//! the first 4 KiB. A declared charset whose decoding leaves more than 1% of characters
//! undecodable is passed over for the next one, and after the declared ones UTF-8 then
//! GB18030 (which also reads GBK and GB2312) are tried: servers and templates often declare
//! UTF-8 for GBK pages. Bytes that decode to mostly control characters are binary data, not
//! a page, and are refused.
//!
//! **Main text.** Site boilerplate (menus, headers, footers, "related links", copyright lines)
//! makes unrelated pages of one site look alike, so it is dropped before fingerprinting:
//! - elements that are never article text: `script`, `style`, `noscript`, `template`, `nav`,
//!   `header`, `footer`, `aside`, `form`, `button`, `select`, `iframe`, `svg`, `head`, and
//!   anything `hidden`;
//! - elements whose `id` or `class` names boilerplate (`nav`, `menu`, `sidebar`, `footer`,
//!   `breadcrumb`, `cookie`, `share`, `social`, `related`, `comment`, `advert`, `ad`, …),
//!   except wrappers (`div`, `section`, `article`, table parts, custom elements): for those
//!   the name is evidence, and a wrapper that holds more than half of the text left (without
//!   link text) keeps it, since page-wide wrappers carry such names (`wy-grid-for-nav` of
//!   Sphinx's Read-the-Docs theme, `ad-free`, `nav-open`);
//! - when the page has `<main>`, `<article>` or `role="main"` with text in it, everything
//!   outside them. A main element is kept whatever the classes around it (a wrapper's name
//!   does not reach into it), and `<main>` or `role="main"` whatever its own class; an
//!   `<article>` whose class names boilerplate (a comment) is a wrapper, not main text;
//! - text blocks (paragraphs, list items, cells, divs) that are mostly link text (link lists),
//!   and short lines repeated within the page;
//! - the lines that the fingerprinter's
//!   [`drop_boilerplate`](crate::SimhashConfig::drop_boilerplate) leaves out (copyright,
//!   sharing, previous/next, breadcrumbs, adverts, repost notices: `simhash/text/boilerplate.rs`),
//!   by its rules: "short" is at most 160 columns, a CJK character counting two, and a page of
//!   nothing but such lines keeps them.
//!
//! Whitespace between two ideographs or non-ASCII punctuation marks (Chinese text wrapped in the
//! page's source) is dropped; the fingerprinter's character classes (`simhash/text/normalize.rs`)
//! say which characters those are.
//!
//! **Markup.** The page is tokenized by html5ever (entities, raw text, comments and broken tags
//! as browsers read them) and no tree is built: the extractor follows the open elements
//! itself (`open_elements.rs`), with the tree builder's rules that decide where an element ends
//! (an unclosed `p`, `li`, `dd` or cell is closed by the next one, an end tag closes the
//! elements above its element but not past a special one such as `div`, a misnested `</a>`
//! closes the link alone, SVG and MathML content ends at an HTML block). Every rule above
//! applies in one pass whose work is linear in the size of the page, however deep or misnested
//! its markup. Memory is bounded too: runs of identical open elements are held once, and past
//! 2,048 held entries the oldest half is forgotten (their end tags are then ignored, and they
//! no longer hide or mark main text).
//!
//! The files: `charset.rs` decodes and tells binary data from text; `elements.rs` says what
//! each element and `id`/`class` means; `extract.rs` follows the tokens to text blocks;
//! `blocks.rs` drops the boilerplate blocks; `tests.rs`.

mod blocks;
mod charset;
mod elements;
mod extract;
#[cfg(test)]
mod tests;

use charset::decode_html;
pub use charset::decode_text;
pub(crate) use charset::{decode_plain, NotText};
use extract::extract;

/// The text of an HTML page: decoded with its declared charset (`declared` is the one from
/// outside the page, e.g. HTTP `Content-Type`), and with `main_text` its main text only
/// (boilerplate removed as described in the module documentation); otherwise all visible
/// text. Blocks are separated by newlines.
///
/// Time is linear in the size of the page and memory bounded by it, whatever its nesting.
///
/// ```
/// use simhash_store::readers::html_to_text;
/// let page = br#"<html><head><title>Site</title><script>var x;</script></head><body>
///   <nav><a href="/">Home</a> <a href="/news">News</a></nav>
///   <article><h1>Rain tomorrow</h1><p>Heavy rain is expected in the north of the city.</p></article>
///   <footer>Copyright 2024 Example</footer></body></html>"#;
/// assert_eq!(html_to_text(page, None, true).unwrap(), "Rain tomorrow\nHeavy rain is expected in the north of the city.");
/// ```
///
/// # Errors
/// A message naming the problem when the page decodes neither in its declared charset nor in
/// UTF-8 or GB18030, or when it is binary data rather than text.
pub fn html_to_text(
    bytes: &[u8],
    declared: Option<&str>,
    main_text: bool,
) -> Result<String, String> {
    page_text(bytes, declared, main_text).map_err(|(_, message)| message)
}

/// [`html_to_text`], with the kind of problem.
pub(crate) fn page_text(
    bytes: &[u8],
    declared: Option<&str>,
    main_text: bool,
) -> Result<String, NotText> {
    let source = decode_html(bytes, declared)?;
    Ok(extract(&source, main_text))
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
    /// The innermost doubtful element the block is in, with no main element between (the
    /// number `Extraction::doubtful` gives it), 0 if none.
    doubt: u32,
}
