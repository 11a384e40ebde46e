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

use std::borrow::Cow;
use std::cell::RefCell;
use std::collections::HashMap;

use encoding_rs::{Encoding, GB18030, UTF_8};
use html5ever::local_name;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::TokenizerResult;

use super::open_elements::{flags, Closed, OpenElements, Scope};

/// A decoding with more than this fraction of replacement characters is rejected.
const MAX_REPLACED_FRACTION: f64 = 0.01;
/// How far into a page to look for `<meta charset>`.
const META_PRESCAN_BYTES: usize = 4096;

/// Elements whose content is not visible text.
const INVISIBLE_NAMES: &[&str] = &[
    "script", "style", "noscript", "template", "select", "option", "textarea", "iframe", "svg",
    "canvas", "object", "embed", "head", "title",
];
/// Elements whose content is site furniture, not article text.
const FURNITURE_NAMES: &[&str] = &[
    "nav", "header", "footer", "aside", "form", "button", "menu", "dialog",
];

/// Elements that start a new block of text.
const BLOCKS: &[&str] = &[
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
/// A message naming the problem when the page does not decode in its declared charset (or,
/// with none declared, in UTF-8 or GB18030).
pub fn html_to_text(
    bytes: &[u8],
    declared: Option<&str>,
    main_text: bool,
) -> Result<String, String> {
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
}

/// What the extraction needs to know of an element name.
mod kind {
    pub(super) const INVISIBLE: u32 = 1;
    pub(super) const FURNITURE: u32 = 1 << 1;
    pub(super) const BLOCK: u32 = 1 << 2;
    /// Never has content or an end tag.
    pub(super) const VOID: u32 = 1 << 3;
    /// "Special" in the HTML standard's tree construction.
    pub(super) const SPECIAL: u32 = 1 << 4;
    /// Bounds the default scope.
    pub(super) const SCOPE: u32 = 1 << 5;
    /// `b`, `i`, `a`, `font`, …: misnested end tags close them alone.
    pub(super) const FORMATTING: u32 = 1 << 6;
    /// Its start tag closes an open `p` (in button scope).
    pub(super) const CLOSES_P: u32 = 1 << 7;
    /// Its end tag closes it with everything above it, in the default scope.
    pub(super) const CLOSED_IN_SCOPE: u32 = 1 << 8;
    pub(super) const HEADING: u32 = 1 << 9;
    /// `table`, `tbody`, `tr`, `td`, …: closed in table scope.
    pub(super) const TABLE_PART: u32 = 1 << 10;
    /// Text up to its end tag is raw (`Rawtext`, `Rcdata` or script data).
    pub(super) const RAWTEXT: u32 = 1 << 11;
    pub(super) const RCDATA: u32 = 1 << 12;
    pub(super) const SCRIPT: u32 = 1 << 13;
    /// Leaves SVG or MathML content.
    pub(super) const BREAKS_OUT: u32 = 1 << 14;
}

/// The kind of an HTML element (see [`kind`]); names are lower case.
fn kind_of(name: &str) -> u32 {
    use kind::*;
    let furniture = if FURNITURE_NAMES.contains(&name) {
        FURNITURE
    } else {
        0
    };
    let block = if BLOCKS.contains(&name) { BLOCK } else { 0 };
    let invisible = if INVISIBLE_NAMES.contains(&name) {
        INVISIBLE
    } else {
        0
    };
    furniture
        | block
        | invisible
        | match name {
            "area" | "base" | "basefont" | "bgsound" | "col" | "embed" | "frame" | "img"
            | "image" | "input" | "keygen" | "link" | "meta" | "param" | "source" | "track"
            | "wbr" => VOID | SPECIAL,
            "br" => VOID | SPECIAL | BREAKS_OUT,
            "hr" => VOID | SPECIAL | CLOSES_P | BREAKS_OUT,
            "a" | "code" | "em" | "font" | "nobr" | "s" | "small" | "strike" | "strong" | "tt"
            | "u" | "big" | "b" | "i" => {
                FORMATTING
                    | if name == "a" || name == "nobr" {
                        0
                    } else {
                        BREAKS_OUT
                    }
            }
            "p" => SPECIAL | CLOSES_P | BREAKS_OUT,
            "li" | "dd" | "dt" => SPECIAL | CLOSES_P | BREAKS_OUT,
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                SPECIAL | CLOSES_P | CLOSED_IN_SCOPE | HEADING | BREAKS_OUT
            }
            "div" | "ul" | "ol" | "dl" | "blockquote" | "center" | "menu" | "pre" | "listing" => {
                SPECIAL | CLOSES_P | CLOSED_IN_SCOPE | BREAKS_OUT
            }
            "address" | "article" | "aside" | "details" | "dialog" | "dir" | "fieldset"
            | "figcaption" | "figure" | "footer" | "header" | "hgroup" | "main" | "nav"
            | "search" | "section" | "summary" | "form" => SPECIAL | CLOSES_P | CLOSED_IN_SCOPE,
            "button" => SPECIAL | CLOSED_IN_SCOPE,
            "applet" | "marquee" | "object" => SPECIAL | SCOPE | CLOSED_IN_SCOPE,
            "template" => SPECIAL | SCOPE | CLOSED_IN_SCOPE,
            "table" => SPECIAL | SCOPE | TABLE_PART | BREAKS_OUT,
            "td" | "th" | "caption" => SPECIAL | SCOPE | TABLE_PART,
            "tr" | "tbody" | "thead" | "tfoot" | "colgroup" => SPECIAL | TABLE_PART,
            "plaintext" => SPECIAL | CLOSES_P,
            "xmp" => SPECIAL | CLOSES_P | RAWTEXT,
            "style" | "iframe" | "noembed" | "noframes" | "noscript" => SPECIAL | RAWTEXT,
            "title" | "textarea" => SPECIAL | RCDATA,
            "script" => SPECIAL | SCRIPT,
            "html" | "head" | "body" | "frameset" | "select" => SPECIAL,
            "span" | "sub" | "sup" | "var" | "ruby" => BREAKS_OUT,
            _ => 0,
        }
}

/// The scopes an element of `kind` bounds (HTML content).
fn bounds_of(name: &str, kind: u32) -> u8 {
    let mut bounds = 0;
    if kind & kind::SCOPE != 0 {
        bounds |= Scope::Default.bit() | Scope::Button.bit() | Scope::List.bit();
    }
    match name {
        "button" => bounds |= Scope::Button.bit(),
        "ol" | "ul" => bounds |= Scope::List.bit(),
        "table" | "template" => bounds |= Scope::Table.bit(),
        _ => {}
    }
    if kind & kind::SPECIAL != 0 {
        bounds |= Scope::Special.bit();
        if !matches!(name, "address" | "div" | "p") {
            bounds |= Scope::SpecialNotAdp.bit();
        }
    }
    bounds
}

/// The token sink: follows the open elements and gathers the blocks of visible text.
struct Extractor {
    state: RefCell<Extraction>,
}

struct Extraction {
    main_text: bool,
    open: OpenElements,
    blocks: Vec<Block>,
    current: Block,
    /// `<!doctype html>` seen (not quirks mode): `<table>` closes an open `p`.
    no_quirks: bool,
}

fn attr<'a>(tag: &'a Tag, name: &str) -> Option<&'a str> {
    tag.attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| &*a.value)
}

fn is_boilerplate(tag: &Tag) -> bool {
    if attr(tag, "hidden").is_some() || attr(tag, "aria-hidden") == Some("true") {
        return true;
    }
    if let Some(style) = attr(tag, "style") {
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
        attr(tag, "role"),
        Some("navigation" | "banner" | "contentinfo" | "complementary")
    ) {
        return true;
    }
    let names = attr(tag, "id").into_iter().chain(attr(tag, "class"));
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

fn is_main(tag: &Tag) -> bool {
    matches!(&*tag.name, "main" | "article") || attr(tag, "role") == Some("main")
}

impl Extraction {
    /// What happens to the text when an element closes: a visible block ends the current
    /// block; the current block is in main text if a main element is still open.
    fn on_close(blocks: &mut Vec<Block>, current: &mut Block, closed: Closed) {
        if !closed.visible {
            return;
        }
        if closed.flags & flags::BLOCK != 0 {
            flush(blocks, current);
        }
        current.in_main = closed.in_main;
    }

    fn close_to(&mut self, at: u32) {
        let (blocks, current) = (&mut self.blocks, &mut self.current);
        self.open
            .close_to(at, &mut |c| Self::on_close(blocks, current, c));
    }

    fn close_above(&mut self, at: u32) {
        let (blocks, current) = (&mut self.blocks, &mut self.current);
        self.open
            .close_above(at, &mut |c| Self::on_close(blocks, current, c));
    }

    fn close_current(&mut self) {
        let (blocks, current) = (&mut self.blocks, &mut self.current);
        self.open
            .close_current(&mut |c| Self::on_close(blocks, current, c));
    }

    /// An element opened and closed at once (`<br>`, an unmatched `</p>`).
    fn empty_element(&mut self, block: bool) {
        if self.open.hidden() {
            return;
        }
        if block {
            flush(&mut self.blocks, &mut self.current);
        }
        self.current.in_main = self.open.in_main();
    }

    fn text(&mut self, text: &str) {
        if self.open.hidden() {
            return;
        }
        append_text(&mut self.current, text, self.open.in_link());
    }

    fn in_foreign(&self) -> bool {
        self.open.current_flags() & flags::FOREIGN != 0
    }

    /// Whether the current node is an SVG or MathML element whose content is HTML.
    fn at_integration_point(&self) -> bool {
        self.in_foreign()
            && matches!(
                self.open.current().map(|n| &**n),
                Some(
                    "foreignobject"
                        | "desc"
                        | "title"
                        | "mi"
                        | "mo"
                        | "mn"
                        | "ms"
                        | "mtext"
                        | "annotation-xml"
                )
            )
    }

    fn start_tag(&mut self, tag: &Tag) -> TokenSinkResult<()> {
        let name: &str = &tag.name;
        let kind = kind_of(name);
        if self.in_foreign() && !self.at_integration_point() {
            let breaks_out = kind & kind::BREAKS_OUT != 0
                || (name == "font"
                    && ["color", "face", "size"]
                        .iter()
                        .any(|a| attr(tag, a).is_some()));
            if !breaks_out {
                if !tag.self_closing {
                    self.open_element(tag, kind, flags::FOREIGN, 0);
                }
                return TokenSinkResult::Continue;
            }
            let root = self.open.boundary(Scope::Foreign);
            self.close_to(root);
        }
        // Elements the tree builder closes implicitly before this one opens.
        match name {
            "html" | "head" | "body" | "frameset" | "frame" => return TokenSinkResult::Continue,
            "li" => {
                if let Some(at) = self.open.topmost(&tag.name) {
                    if at >= self.open.boundary(Scope::SpecialNotAdp) {
                        self.close_to(at);
                    }
                }
            }
            "dd" | "dt" => {
                let at = [local_name!("dd"), local_name!("dt")]
                    .iter()
                    .filter_map(|n| self.open.topmost(n))
                    .max();
                if let Some(at) = at {
                    if at >= self.open.boundary(Scope::SpecialNotAdp) {
                        self.close_to(at);
                    }
                }
            }
            "a" | "nobr" => {
                if let Some(at) = self.open.in_scope(&tag.name, Scope::Default) {
                    self.close_formatting(at);
                }
            }
            "button" => {
                if let Some(at) = self.open.in_scope(&tag.name, Scope::Default) {
                    self.close_to(at);
                }
            }
            "td" | "th" => {
                let at = [local_name!("td"), local_name!("th")]
                    .iter()
                    .filter_map(|n| self.open.in_scope(n, Scope::Table))
                    .max();
                if let Some(at) = at {
                    self.close_to(at);
                }
            }
            "tr" => {
                if let Some(at) = self.open.in_scope(&tag.name, Scope::Table) {
                    self.close_to(at);
                }
            }
            "tbody" | "thead" | "tfoot" | "caption" | "colgroup" => {
                if let Some(at) = self.open.in_scope(&local_name!("table"), Scope::Table) {
                    self.close_above(at);
                }
            }
            "table" => {
                let in_table = matches!(
                    self.open.current().map(|n| &**n),
                    Some("table" | "tbody" | "thead" | "tfoot" | "tr")
                );
                if in_table {
                    if let Some(at) = self.open.in_scope(&tag.name, Scope::Table) {
                        self.close_to(at);
                    }
                }
            }
            "option" | "optgroup" => {
                if self.open.current().map(|n| &**n) == Some("option") {
                    self.close_current();
                }
                if name == "optgroup" && self.open.current().map(|n| &**n) == Some("optgroup") {
                    self.close_current();
                }
            }
            _ => {}
        }
        if kind & kind::CLOSES_P != 0 || (name == "table" && self.no_quirks) {
            if let Some(at) = self.open.in_scope(&local_name!("p"), Scope::Button) {
                self.close_to(at);
            }
        }
        if kind & kind::HEADING != 0
            && self
                .open
                .current()
                .is_some_and(|n| kind_of(n) & kind::HEADING != 0)
        {
            self.close_current();
        }
        if kind & kind::VOID != 0 {
            let hides = kind & kind::INVISIBLE != 0
                || (self.main_text && (kind & kind::FURNITURE != 0 || is_boilerplate(tag)));
            if !hides {
                self.empty_element(kind & kind::BLOCK != 0);
            }
            return TokenSinkResult::Continue;
        }
        self.open_element(tag, kind, 0, bounds_of(name, kind));
        if kind & kind::RAWTEXT != 0 {
            TokenSinkResult::RawData(RawKind::Rawtext)
        } else if kind & kind::RCDATA != 0 {
            TokenSinkResult::RawData(RawKind::Rcdata)
        } else if kind & kind::SCRIPT != 0 {
            TokenSinkResult::RawData(RawKind::ScriptData)
        } else if name == "plaintext" {
            TokenSinkResult::Plaintext
        } else {
            TokenSinkResult::Continue
        }
    }

    /// Opens an element with `extra` flags (foreign content) and `bounds`.
    fn open_element(&mut self, tag: &Tag, kind: u32, extra: u8, bounds: u8) {
        let mut bounds = bounds;
        let name: &str = &tag.name;
        if extra & flags::FOREIGN == 0 && matches!(name, "svg" | "math") {
            bounds |= Scope::Foreign.bit();
        }
        let foreign = extra & flags::FOREIGN != 0 || matches!(name, "svg" | "math");
        if extra & flags::FOREIGN != 0
            && matches!(
                name,
                "mi" | "mo"
                    | "mn"
                    | "ms"
                    | "mtext"
                    | "annotation-xml"
                    | "foreignobject"
                    | "desc"
                    | "title"
            )
        {
            bounds |= Scope::Default.bit()
                | Scope::Button.bit()
                | Scope::List.bit()
                | Scope::Special.bit()
                | Scope::SpecialNotAdp.bit();
        }
        let hides = kind & kind::INVISIBLE != 0
            || (self.main_text && (kind & kind::FURNITURE != 0 || is_boilerplate(tag)));
        let visible = !hides && !self.open.hidden();
        let mut element_flags = if foreign { flags::FOREIGN } else { 0 };
        if hides {
            element_flags |= flags::HIDES;
        }
        if kind & kind::BLOCK != 0 {
            element_flags |= flags::BLOCK;
        }
        if visible {
            if kind & kind::BLOCK != 0 {
                flush(&mut self.blocks, &mut self.current);
            }
            if is_main(tag) {
                element_flags |= flags::MAIN;
            }
            if name == "a" {
                element_flags |= flags::LINK;
            }
        }
        self.open.push(tag.name.clone(), element_flags, bounds);
        if visible {
            self.current.in_main = self.open.in_main();
        }
    }

    /// A formatting element's end (or a second `<a>`): closed with what is above it when
    /// nothing special is, else closed alone.
    fn close_formatting(&mut self, at: u32) {
        if self.open.boundary(Scope::Special) > at {
            self.open.remove(at);
        } else {
            self.close_to(at);
        }
    }

    fn end_tag(&mut self, tag: &Tag) {
        let name: &str = &tag.name;
        let kind = kind_of(name);
        if self.in_foreign() {
            if let Some(at) = self.open.topmost(&tag.name) {
                if at >= self.open.boundary(Scope::Foreign) {
                    self.close_to(at);
                    return;
                }
            }
        }
        let at = match name {
            "html" | "head" | "body" => None,
            "br" => {
                self.empty_element(true);
                None
            }
            "p" => {
                let at = self.open.in_scope(&tag.name, Scope::Button);
                if at.is_none() {
                    self.empty_element(true);
                }
                at
            }
            "li" => self.open.in_scope(&tag.name, Scope::List),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => [
                local_name!("h1"),
                local_name!("h2"),
                local_name!("h3"),
                local_name!("h4"),
                local_name!("h5"),
                local_name!("h6"),
            ]
            .iter()
            .filter_map(|n| self.open.in_scope(n, Scope::Default))
            .max(),
            "select" => self.open.topmost(&tag.name),
            _ if kind & kind::FORMATTING != 0 => {
                if let Some(at) = self.open.in_scope(&tag.name, Scope::Default) {
                    self.close_formatting(at);
                }
                None
            }
            _ if kind & kind::TABLE_PART != 0 => self.open.in_scope(&tag.name, Scope::Table),
            _ if kind & (kind::CLOSED_IN_SCOPE | kind::HEADING) != 0
                || name == "dd"
                || name == "dt" =>
            {
                self.open.in_scope(&tag.name, Scope::Default)
            }
            // Any other end tag closes the topmost element of its name unless a special
            // element is above it.
            _ => self
                .open
                .topmost(&tag.name)
                .filter(|&at| at >= self.open.boundary(Scope::Special)),
        };
        if let Some(at) = at {
            self.close_to(at);
        }
    }
}

impl TokenSink for Extractor {
    type Handle = ();

    fn process_token(&self, token: Token, _line: u64) -> TokenSinkResult<()> {
        let mut state = self.state.borrow_mut();
        match token {
            Token::TagToken(tag) => match tag.kind {
                TagKind::StartTag => return state.start_tag(&tag),
                TagKind::EndTag => state.end_tag(&tag),
            },
            Token::CharacterTokens(text) => state.text(&text),
            Token::DoctypeToken(doctype) => {
                state.no_quirks = !doctype.force_quirks
                    && doctype
                        .name
                        .as_deref()
                        .is_some_and(|n| n.eq_ignore_ascii_case("html"));
            }
            Token::CommentToken(_)
            | Token::NullCharacterToken
            | Token::EOFToken
            | Token::ParseError(_) => {}
        }
        TokenSinkResult::Continue
    }

    fn adjusted_current_node_present_but_not_in_html_namespace(&self) -> bool {
        self.state.borrow().in_foreign()
    }
}

/// Tokenizes the page and returns its (main) text.
fn extract(source: &str, main_text: bool) -> String {
    let sink = Extractor {
        state: RefCell::new(Extraction {
            main_text,
            open: OpenElements::new(),
            blocks: Vec::new(),
            current: Block::default(),
            no_quirks: false,
        }),
    };
    let tokenizer = Tokenizer::new(sink, TokenizerOpts::default());
    let input = BufferQueue::default();
    input.push_back(StrTendril::from_slice(source));
    // The sink never asks the tokenizer to pause for a script, so one feed reads everything.
    while let TokenizerResult::Script(()) = tokenizer.feed(&input) {}
    tokenizer.end();
    let mut state = tokenizer.sink.state.borrow_mut();
    let mut blocks = std::mem::take(&mut state.blocks);
    flush(&mut blocks, &mut state.current);
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
        for depth in [900, 100_000] {
            let page = format!("{}text{}", "<div>".repeat(depth), "</div>".repeat(depth));
            assert_eq!(html_to_text(page.as_bytes(), None, false).unwrap(), "text");
        }
        // Alternating elements cannot share entries: past the cap the oldest are forgotten.
        let depth = 3 * super::super::open_elements::MAX_RUNS;
        let page = format!(
            "<p>before</p>{}<p>inside</p>{}<p>after</p>",
            "<div><span>".repeat(depth),
            "</span></div>".repeat(depth)
        );
        assert_eq!(
            html_to_text(page.as_bytes(), None, true).unwrap(),
            "before\ninside\nafter"
        );
    }

    #[test]
    fn tree_builder_rules_that_matter_for_text() {
        let cases: [(&str, &str); 9] = [
            // An unclosed `p`, `li` or cell is closed by the next one.
            (
                "<p class=share>Share<p>The article text is in the second paragraph.",
                "The article text is in the second paragraph.",
            ),
            (
                "<ul><li class=ad>Buy<li>Kept item text here</ul>",
                "Kept item text here",
            ),
            (
                "<table><tr><td class=sidebar>Menu<td>Cell text of the table</table>",
                "Cell text of the table",
            ),
            // A misnested `</a>` closes the link alone.
            (
                "<a href=x class=share><div>shared</a>kept text</div>",
                "kept text",
            ),
            // An end tag does not close past a special element.
            (
                "<span class=ad><div>advert</span>still hidden</div></span><p>after",
                "after",
            ),
            // Raw text is not markup; SVG is invisible and its self-closing tags close.
            (
                "<script>document.write('<p>no')</script><svg><path/><text>no</text></svg><p>yes",
                "yes",
            ),
            // A `<p>` breaks out of SVG.
            ("<svg><g><p>out of svg", "out of svg"),
            // Entities are decoded; `</br>` is a line break.
            ("<p>fish &amp; chips</br>caf&eacute;", "fish & chips\ncafé"),
            // A `<main>` with text wins over the rest.
            (
                "<p>outside text</p><div role=main><p>inside</p></div>",
                "inside",
            ),
        ];
        for (page, want) in cases {
            assert_eq!(
                html_to_text(page.as_bytes(), None, true).unwrap(),
                want,
                "{page}"
            );
        }
    }
}
