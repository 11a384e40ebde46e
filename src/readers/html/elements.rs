//! What the extraction needs to know of an element: its kind, how far its end tag reaches,
//! and whether its `id` or `class` marks boilerplate or main text.

use html5ever::tokenizer::Tag;

use super::super::open_elements::Scope;

/// Elements whose content is not visible text.
pub(super) const INVISIBLE_NAMES: &[&str] = &[
    "script", "style", "noscript", "template", "select", "option", "textarea", "iframe", "svg",
    "canvas", "object", "embed", "head", "title",
];
/// Elements whose content is site furniture, not article text.
pub(super) const FURNITURE_NAMES: &[&str] = &[
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
pub(super) const BOILERPLATE_TOKENS: &[&str] = &[
    "nav", "navbar", "menu", "ad", "ads", "adv", "share", "social", "related", "tags", "toolbar",
    "topbar",
];
/// `id`/`class` substrings that mark boilerplate anywhere.
pub(super) const BOILERPLATE_SUBSTRINGS: &[&str] = &[
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

/// What the extraction needs to know of an element name.
pub(super) mod kind {
    pub(in crate::readers::html) const INVISIBLE: u32 = 1;
    pub(in crate::readers::html) const FURNITURE: u32 = 1 << 1;
    pub(in crate::readers::html) const BLOCK: u32 = 1 << 2;
    /// Never has content or an end tag.
    pub(in crate::readers::html) const VOID: u32 = 1 << 3;
    /// "Special" in the HTML standard's tree construction.
    pub(in crate::readers::html) const SPECIAL: u32 = 1 << 4;
    /// Bounds the default scope.
    pub(in crate::readers::html) const SCOPE: u32 = 1 << 5;
    /// `b`, `i`, `a`, `font`, …: misnested end tags close them alone.
    pub(in crate::readers::html) const FORMATTING: u32 = 1 << 6;
    /// Its start tag closes an open `p` (in button scope).
    pub(in crate::readers::html) const CLOSES_P: u32 = 1 << 7;
    /// Its end tag closes it with everything above it, in the default scope.
    pub(in crate::readers::html) const CLOSED_IN_SCOPE: u32 = 1 << 8;
    pub(in crate::readers::html) const HEADING: u32 = 1 << 9;
    /// `table`, `tbody`, `tr`, `td`, …: closed in table scope.
    pub(in crate::readers::html) const TABLE_PART: u32 = 1 << 10;
    /// Text up to its end tag is raw (`Rawtext`, `Rcdata` or script data).
    pub(in crate::readers::html) const RAWTEXT: u32 = 1 << 11;
    pub(in crate::readers::html) const RCDATA: u32 = 1 << 12;
    pub(in crate::readers::html) const SCRIPT: u32 = 1 << 13;
    /// Leaves SVG or MathML content.
    pub(in crate::readers::html) const BREAKS_OUT: u32 = 1 << 14;
}

/// The kind of an HTML element (see [`kind`]); names are lower case.
pub(super) fn kind_of(name: &str) -> u32 {
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
pub(super) fn bounds_of(name: &str, kind: u32) -> u8 {
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

pub(super) fn attr<'a>(tag: &'a Tag, name: &str) -> Option<&'a str> {
    tag.attrs
        .iter()
        .find(|a| &*a.name.local == name)
        .map(|a| &*a.value)
}

/// Elements whose `id` or `class` naming boilerplate is evidence, not a verdict: wrappers that
/// may hold a whole page (`<div class="wy-grid-for-nav">` of Sphinx's Read-the-Docs theme, a
/// `<div class="ad-free">`), and custom elements (a `-` in the name).
pub(super) const WRAPPER_NAMES: &[&str] = &[
    "div", "section", "article", "center", "figure", "table", "tbody", "tr", "td", "th",
];

/// What main-text extraction makes of an element, from its name and attributes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Role {
    /// Text like any other.
    Text,
    /// `<main>`, `<article>` or `role="main"`: the main content, whatever the classes around.
    Main,
    /// Its content is dropped: site furniture (`nav`, `footer`, ...), hidden, an ARIA role of
    /// furniture, or an element that is not a wrapper whose `id` or `class` names boilerplate.
    Dropped,
    /// A wrapper whose `id` or `class` names boilerplate: its content is dropped unless it
    /// holds most of the text around it (`blocks.rs`, `drop_doubtful`).
    Doubtful,
}

/// The [`Role`] of an element of `kind` ([`kind_of`]) in main-text extraction.
pub(super) fn role_of(tag: &Tag, kind: u32) -> Role {
    if kind & (kind::INVISIBLE | kind::FURNITURE) != 0 || is_hidden(tag) {
        return Role::Dropped;
    }
    let name: &str = &tag.name;
    if name == "main" || attr(tag, "role") == Some("main") {
        return Role::Main;
    }
    if names_boilerplate(tag) {
        return if WRAPPER_NAMES.contains(&name) || name.contains('-') {
            Role::Doubtful
        } else {
            Role::Dropped
        };
    }
    if name == "article" {
        Role::Main
    } else {
        Role::Text
    }
}

/// Hidden (`hidden`, `aria-hidden`, `display: none`, `visibility: hidden`) or an ARIA role of
/// site furniture.
fn is_hidden(tag: &Tag) -> bool {
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
    matches!(
        attr(tag, "role"),
        Some("navigation" | "banner" | "contentinfo" | "complementary")
    )
}

/// Whether the `id` or `class` names boilerplate: a token of [`BOILERPLATE_TOKENS`] or a
/// substring of [`BOILERPLATE_SUBSTRINGS`].
fn names_boilerplate(tag: &Tag) -> bool {
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
