//! Keeping hostile HTML away from the tree builder.
//!
//! html5ever builds the tree as browsers do, and some of that work grows with the number of
//! elements open at a tag: scope checks walk the stack of open elements, and formatting
//! elements (`<b>`, `<font>`, …) that a block closed are re-opened ("reconstructed") before
//! the next text. A page of 100,000 nested `<div>`s takes about a minute; a 100 KB page of
//! `<p>x<b id=N></p>` makes it re-open millions of elements (quadratic time and memory).
//!
//! So before parsing, [`check`] runs a linear scan that tokenizes the page and models the
//! tree builder's stack and its list of active formatting elements closely enough to bound
//! that work. The model errs towards more open elements than html5ever has (it closes fewer
//! elements implicitly), never fewer. A page is [`TooComplex`] when the model
//!
//! - holds more than [`MAX_DEPTH`] open elements at once, or
//! - costs more than [`WORK_PER_TAG`] units per tag (plus [`BASE_WORK`]), a unit being one
//!   open element walked past at a tag or one element re-opened.
//!
//! Such a page is not given to the tree builder as it is: [`flatten`] reduces it to its
//! visible text, split into paragraphs where block elements were, with its links, and that
//! flat page (whose tree is at most four elements deep) is what gets parsed and extracted.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHashSet, FxHasher};

/// The most elements the model may hold open at once before a page is flattened. Blink caps
/// its tree at 512 levels; real pages stay far below both.
pub(crate) const MAX_DEPTH: usize = 1000;
/// The average cost per tag allowed (see the module documentation).
pub(crate) const WORK_PER_TAG: u64 = 200;
/// Cost allowed whatever the number of tags: a small page may nest up to [`MAX_DEPTH`].
pub(crate) const BASE_WORK: u64 = 2_000_000;
/// How far down the stack an implicit close (`<p>` closing an open `<p>`) or a lookup in the
/// list of active formatting elements looks. Looking less far makes the model hold more open
/// elements than html5ever, which only makes it stricter.
const LOOKBACK: usize = 8;
/// How far back the model compares a new formatting element with the active ones (the
/// "Noah's ark" rule that keeps at most three identical ones).
const AFE_LOOKBACK: usize = 32;

/// Why a page is not given to the tree builder as it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TooComplex {
    /// More than [`MAX_DEPTH`] elements open at once; the depth at which the scan stopped.
    Depth(usize),
    /// More tree-building work than the budget: the work and the number of tags.
    Work { work: u64, tags: u64 },
}

impl std::fmt::Display for TooComplex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            TooComplex::Depth(d) => write!(
                f,
                "elements nested more than {MAX_DEPTH} deep (stopped counting at {d})"
            ),
            TooComplex::Work { work, tags } => write!(
                f,
                "tree building would walk past or re-open {work} elements for {tags} tags \
                 (more than {WORK_PER_TAG} per tag)"
            ),
        }
    }
}

/// Whether `source` should be flattened before parsing, and why.
pub(crate) fn check(source: &str) -> Option<TooComplex> {
    // Early stop: past this no number of tags in the page can make the work fit.
    let ceiling = WORK_PER_TAG * (source.len() as u64 / 3 + 1) + BASE_WORK;
    let mut model = Model::new(true);
    let mut tags = 0u64;
    for token in Tokens::new(source) {
        match token {
            Token::Start {
                name,
                attrs,
                self_closing,
            } => {
                tags += 1;
                model.start(name, attrs, self_closing);
            }
            Token::End { name } => {
                tags += 1;
                model.end(name);
            }
            Token::Text(text) => {
                if !text.bytes().all(|b| b.is_ascii_whitespace()) {
                    model.reconstruct();
                }
            }
            Token::Raw(_) | Token::Other => {}
        }
        if model.stack.len() > MAX_DEPTH {
            return Some(TooComplex::Depth(model.stack.len()));
        }
        if model.work > ceiling {
            break;
        }
    }
    (model.work > WORK_PER_TAG * tags + BASE_WORK).then_some(TooComplex::Work {
        work: model.work,
        tags,
    })
}

/// The page reduced to what its text needs, as HTML that nests at most four elements deep:
/// its visible text (not that of `script`, `style`, `template`, `svg`, `head`, form
/// controls and, with `main_text`, `nav`, `header`, `footer`, `aside`, `form`, `menu`), a
/// paragraph break at each block element and line break, and its links (so link lists
/// still count as such). Entities are left for the parser to decode.
pub(crate) fn flatten(source: &str, main_text: bool) -> String {
    let mut out = String::with_capacity(source.len() / 2);
    let mut model = Model::new(false);
    model.hide_furniture = main_text;
    let tokens = Tokens::new(source);
    for token in tokens {
        match token {
            Token::Start {
                name,
                attrs,
                self_closing,
            } => {
                let lower = lowercase(name);
                model.start(name, attrs, self_closing);
                if model.hidden == 0 {
                    match lower.as_ref() {
                        "a" => out.push_str("<a>"),
                        "br" => out.push_str("<br>"),
                        n if is_block(n) => out.push_str("<p>"),
                        _ => {}
                    }
                }
            }
            Token::End { name } => {
                let lower = lowercase(name);
                model.end(name);
                if model.hidden == 0 {
                    match lower.as_ref() {
                        "a" => out.push_str("</a>"),
                        "br" => out.push_str("<br>"),
                        n if is_block(n) => out.push_str("<p>"),
                        _ => {}
                    }
                }
            }
            Token::Text(text) => {
                if model.hidden == 0 {
                    push_text(&mut out, text);
                }
            }
            // Raw text is visible only in `xmp` and `plaintext`; the model hides the rest.
            Token::Raw(text) => {
                if model.hidden == 0 {
                    push_text(&mut out, &text.replace('&', "&amp;"));
                }
            }
            Token::Other => {}
        }
    }
    out
}

/// Appends text, escaping `<` so that nothing in it can start a tag of the flat page.
fn push_text(out: &mut String, text: &str) {
    if text.contains('<') {
        out.push_str(&text.replace('<', "&lt;"));
    } else {
        out.push_str(text);
    }
}

fn is_block(name: &str) -> bool {
    super::html::BLOCKS.contains(&name)
        || matches!(
            name,
            "caption"
                | "details"
                | "dialog"
                | "dir"
                | "fieldset"
                | "figure"
                | "hgroup"
                | "listing"
                | "menu"
                | "nav"
                | "header"
                | "footer"
                | "aside"
                | "form"
                | "summary"
                | "tbody"
                | "thead"
                | "tfoot"
                | "xmp"
                | "plaintext"
        )
}

// ---- tokenizer ----

/// One token of a page, as the HTML tokenizer would cut it (character references are not
/// decoded: nothing here needs them).
#[derive(Debug, PartialEq, Eq)]
enum Token<'a> {
    Text(&'a str),
    /// The content of a raw text element (`script`, `style`, `title`, …).
    Raw(&'a str),
    Start {
        name: &'a str,
        attrs: &'a str,
        self_closing: bool,
    },
    End {
        name: &'a str,
    },
    /// A comment, doctype, processing instruction or CDATA section.
    Other,
}

/// Elements whose content the tokenizer reads as text up to their end tag.
const RAW_TEXT: &[&str] = &[
    "script", "style", "xmp", "iframe", "noembed", "noframes", "noscript", "textarea", "title",
];

struct Tokens<'a> {
    s: &'a str,
    pos: usize,
    /// After the start tag of a raw text element: its name, lowercase.
    raw: Option<&'static str>,
}

impl<'a> Tokens<'a> {
    fn new(s: &'a str) -> Self {
        Tokens {
            s,
            pos: 0,
            raw: None,
        }
    }

    fn bytes(&self) -> &'a [u8] {
        self.s.as_bytes()
    }

    /// The text from `from` to `to`, which are at character boundaries (ASCII positions).
    fn slice(&self, from: usize, to: usize) -> &'a str {
        self.s.get(from..to).unwrap_or_default()
    }

    fn find_seq(&self, from: usize, needle: &[u8]) -> Option<usize> {
        let hay = self.bytes().get(from..)?;
        hay.windows(needle.len())
            .position(|w| w == needle)
            .map(|i| from + i)
    }

    fn find_byte(&self, from: usize, byte: u8) -> Option<usize> {
        let hay = self.bytes().get(from..)?;
        hay.iter().position(|&b| b == byte).map(|i| from + i)
    }

    /// Raw text up to `</name` followed by a delimiter, or to the end.
    fn raw_text(&mut self, name: &str) -> Token<'a> {
        let b = self.bytes();
        let start = self.pos;
        let mut at = start;
        let end = loop {
            let Some(lt) = self.find_seq(at, b"</") else {
                break b.len();
            };
            let after = lt + 2 + name.len();
            let matches = b
                .get(lt + 2..after)
                .is_some_and(|n| n.eq_ignore_ascii_case(name.as_bytes()));
            let delimited = b
                .get(after)
                .is_none_or(|&c| matches!(c, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/' | b'>'));
            if matches && delimited {
                break lt;
            }
            at = lt + 2;
        };
        self.pos = end;
        Token::Raw(self.slice(start, end))
    }

    /// A tag's name from `from`: up to whitespace, `/` or `>`.
    fn name_end(&self, from: usize) -> usize {
        let b = self.bytes();
        let mut at = from;
        while at < b.len() && !matches!(b[at], b'\t' | b'\n' | b'\x0c' | b'\r' | b' ' | b'/' | b'>')
        {
            at += 1;
        }
        at
    }

    /// Skips a tag's attributes from `from`, as the tokenizer does (quotes count only in
    /// values). Returns the position after `>` and whether the tag ended with `/>`, or `None`
    /// when the input ends inside the tag (the tokenizer drops such a tag).
    fn attributes_end(&self, from: usize) -> Option<(usize, bool)> {
        let b = self.bytes();
        let ws = |c: u8| matches!(c, b'\t' | b'\n' | b'\x0c' | b'\r' | b' ');
        let mut at = from;
        loop {
            while at < b.len() && (ws(b[at]) || (b[at] == b'/' && b.get(at + 1) != Some(&b'>'))) {
                at += 1;
            }
            match b.get(at)? {
                b'>' => return Some((at + 1, false)),
                b'/' => return Some((at + 2, true)),
                _ => {}
            }
            // The name: at least one character (`=` may start it).
            at += 1;
            while at < b.len() && !ws(b[at]) && !matches!(b[at], b'/' | b'>' | b'=') {
                at += 1;
            }
            while at < b.len() && ws(b[at]) {
                at += 1;
            }
            if b.get(at) != Some(&b'=') {
                continue;
            }
            at += 1;
            while at < b.len() && ws(b[at]) {
                at += 1;
            }
            match b.get(at)? {
                &q @ (b'"' | b'\'') => at = self.find_byte(at + 1, q)? + 1,
                _ => {
                    while at < b.len() && !ws(b[at]) && b[at] != b'>' {
                        at += 1;
                    }
                }
            }
        }
    }
}

impl<'a> Iterator for Tokens<'a> {
    type Item = Token<'a>;

    fn next(&mut self) -> Option<Token<'a>> {
        if let Some(name) = self.raw.take() {
            if self.pos < self.s.len() {
                return Some(if name == "plaintext" {
                    let text = self.slice(self.pos, self.s.len());
                    self.pos = self.s.len();
                    Token::Raw(text)
                } else {
                    self.raw_text(name)
                });
            }
        }
        let b = self.bytes();
        let start = self.pos;
        if start >= b.len() {
            return None;
        }
        if b[start] != b'<' {
            let end = self.find_byte(start + 1, b'<').unwrap_or(b.len());
            self.pos = end;
            return Some(Token::Text(self.slice(start, end)));
        }
        let next = b.get(start + 1).copied();
        match next {
            Some(b'!') => {
                self.pos = if b.get(start + 2..start + 4) == Some(b"--") {
                    self.find_seq(start + 4, b"-->").map_or(b.len(), |e| e + 3)
                } else {
                    self.find_byte(start + 2, b'>').map_or(b.len(), |e| e + 1)
                };
                Some(Token::Other)
            }
            Some(b'?') => {
                self.pos = self.find_byte(start + 2, b'>').map_or(b.len(), |e| e + 1);
                Some(Token::Other)
            }
            Some(b'/') => match b.get(start + 2) {
                Some(c) if c.is_ascii_alphabetic() => {
                    let name_end = self.name_end(start + 2);
                    let name = self.slice(start + 2, name_end);
                    match self.attributes_end(name_end) {
                        Some((end, _)) => {
                            self.pos = end;
                            Some(Token::End { name })
                        }
                        None => {
                            self.pos = b.len();
                            Some(Token::Other)
                        }
                    }
                }
                Some(b'>') => {
                    self.pos = start + 3;
                    Some(Token::Other)
                }
                Some(_) => {
                    self.pos = self.find_byte(start + 2, b'>').map_or(b.len(), |e| e + 1);
                    Some(Token::Other)
                }
                None => {
                    self.pos = b.len();
                    Some(Token::Text(self.slice(start, b.len())))
                }
            },
            Some(c) if c.is_ascii_alphabetic() => {
                let name_end = self.name_end(start + 1);
                let name = self.slice(start + 1, name_end);
                match self.attributes_end(name_end) {
                    Some((end, self_closing)) => {
                        self.pos = end;
                        let attrs = self.slice(name_end, end);
                        self.raw = RAW_TEXT
                            .iter()
                            .chain(&["plaintext"])
                            .find(|r| r.eq_ignore_ascii_case(name))
                            .copied();
                        Some(Token::Start {
                            name,
                            attrs,
                            self_closing,
                        })
                    }
                    None => {
                        self.pos = b.len();
                        Some(Token::Other)
                    }
                }
            }
            _ => {
                // A `<` that starts no tag is text.
                let end = self.find_byte(start + 1, b'<').unwrap_or(b.len());
                self.pos = end;
                Some(Token::Text(self.slice(start, end)))
            }
        }
    }
}

// ---- the model of the tree builder ----

fn lowercase(name: &str) -> std::borrow::Cow<'_, str> {
    if name.bytes().any(|b| b.is_ascii_uppercase()) {
        std::borrow::Cow::Owned(name.to_ascii_lowercase())
    } else {
        std::borrow::Cow::Borrowed(name)
    }
}

fn hash(s: &str) -> u64 {
    let mut h = FxHasher::default();
    s.hash(&mut h);
    h.finish()
}

/// Elements that hold no content.
const VOID: &[&str] = &[
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta", "param",
    "source", "track", "wbr", "basefont", "bgsound", "frame", "image",
];
/// Formatting elements: kept in the list of active formatting elements and re-opened.
const FORMATTING: &[&str] = &[
    "a", "b", "big", "code", "em", "font", "i", "nobr", "s", "small", "strike", "strong", "tt", "u",
];
/// Elements that put a marker in the list of active formatting elements.
const MARKERS: &[&str] = &[
    "applet", "object", "marquee", "template", "td", "th", "caption",
];
/// The boundaries of "has an element in scope".
const SCOPE_BOUNDARIES: &[&str] = &[
    "applet",
    "caption",
    "html",
    "table",
    "td",
    "th",
    "marquee",
    "object",
    "template",
    "mi",
    "mo",
    "mn",
    "ms",
    "mtext",
    "annotation-xml",
    "foreignobject",
    "desc",
];
/// The "special" category, where an end tag of another element stops looking.
const SPECIAL: &[&str] = &[
    "address",
    "applet",
    "area",
    "article",
    "aside",
    "base",
    "basefont",
    "bgsound",
    "blockquote",
    "body",
    "br",
    "button",
    "caption",
    "center",
    "col",
    "colgroup",
    "dd",
    "details",
    "dir",
    "div",
    "dl",
    "dt",
    "embed",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "form",
    "frame",
    "frameset",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "head",
    "header",
    "hgroup",
    "hr",
    "html",
    "iframe",
    "img",
    "input",
    "keygen",
    "li",
    "link",
    "listing",
    "main",
    "marquee",
    "menu",
    "meta",
    "nav",
    "noembed",
    "noframes",
    "noscript",
    "object",
    "ol",
    "p",
    "param",
    "plaintext",
    "pre",
    "script",
    "search",
    "section",
    "select",
    "source",
    "style",
    "summary",
    "table",
    "tbody",
    "td",
    "template",
    "textarea",
    "tfoot",
    "th",
    "thead",
    "title",
    "tr",
    "track",
    "ul",
    "wbr",
    "xmp",
    "mi",
    "mo",
    "mn",
    "ms",
    "mtext",
    "annotation-xml",
    "foreignobject",
    "desc",
];
/// End tags that close their element when it is in scope, whatever is open above it.
const SCOPED_END: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "button",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "header",
    "hgroup",
    "listing",
    "main",
    "menu",
    "nav",
    "ol",
    "pre",
    "search",
    "section",
    "summary",
    "ul",
    "form",
    "p",
    "li",
    "dd",
    "dt",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "applet",
    "marquee",
    "object",
    "table",
    "caption",
    "td",
    "th",
    "tr",
    "tbody",
    "thead",
    "tfoot",
    "colgroup",
    "select",
    "template",
];
/// Start tags that close an open `p` (in button scope).
const CLOSES_P: &[&str] = &[
    "address",
    "article",
    "aside",
    "blockquote",
    "center",
    "details",
    "dialog",
    "dir",
    "div",
    "dl",
    "fieldset",
    "figcaption",
    "figure",
    "footer",
    "header",
    "hgroup",
    "main",
    "menu",
    "nav",
    "ol",
    "p",
    "search",
    "section",
    "summary",
    "ul",
    "h1",
    "h2",
    "h3",
    "h4",
    "h5",
    "h6",
    "pre",
    "listing",
    "form",
    "li",
    "dd",
    "dt",
    "plaintext",
    "xmp",
    "table",
];

/// A lowercase tag name, kept inline (names over 16 bytes are cut; no list below has one).
#[derive(Clone, Copy, PartialEq, Eq, Hash)]
struct Tag {
    bytes: [u8; 16],
    len: u8,
}

impl Tag {
    fn new(name: &str) -> Tag {
        let mut bytes = [0u8; 16];
        let len = name.len().min(16);
        for (dst, src) in bytes.iter_mut().zip(name.as_bytes()) {
            *dst = src.to_ascii_lowercase();
        }
        Tag {
            bytes,
            len: len as u8,
        }
    }

    fn as_str(&self) -> &str {
        std::str::from_utf8(self.bytes.get(..usize::from(self.len)).unwrap_or_default())
            .unwrap_or_default()
    }
}

/// One open element of the model.
struct Open {
    tag: Tag,
    formatting_id: Option<u32>,
    marker: bool,
    hides: bool,
    foreign: bool,
    /// Special elements in the stack up to and including this one.
    specials: u32,
    /// Boundaries of the default scope in the stack up to and including this one.
    boundaries: u32,
    /// Boundaries of table scope (`html`, `table`, `template`) likewise.
    tables: u32,
}

/// An entry of the list of active formatting elements.
#[derive(Clone, Copy)]
enum Active {
    Marker,
    Element { tag: Tag, attrs: u64, id: u32 },
}

/// Start tags after which html5ever does not re-open formatting elements (block elements,
/// table parts, head elements); all others do.
fn reconstructs(name: &str) -> bool {
    !(CLOSES_P.contains(&name)
        || matches!(
            name,
            "table"
                | "caption"
                | "colgroup"
                | "col"
                | "tbody"
                | "thead"
                | "tfoot"
                | "tr"
                | "td"
                | "th"
                | "hr"
                | "base"
                | "basefont"
                | "bgsound"
                | "link"
                | "meta"
                | "noframes"
                | "script"
                | "style"
                | "template"
                | "title"
                | "frame"
                | "frameset"
        ))
}

/// End tags that close their element when it is in table scope.
const TABLE_SCOPED_END: &[&str] = &[
    "table", "tbody", "thead", "tfoot", "tr", "td", "th", "caption",
];

/// The stack of open elements and the list of active formatting elements, modelled.
struct Model {
    /// Whether to model formatting elements (the pre-scan) or not (flattening, which only
    /// needs to know what is hidden).
    formatting: bool,
    /// Whether `nav`, `header`, `footer`, `aside`, `form`, `menu` hide their content.
    hide_furniture: bool,
    stack: Vec<Open>,
    /// Stack positions of the open elements, by name.
    by_name: FxHashMap<Tag, Vec<usize>>,
    active: Vec<Active>,
    /// Ids of the formatting elements that are open.
    open_ids: FxHashSet<u32>,
    next_id: u32,
    /// Open elements that hide their content.
    hidden: usize,
    /// Open `svg` and `math` elements.
    foreign: usize,
    work: u64,
}

impl Model {
    fn new(formatting: bool) -> Model {
        Model {
            formatting,
            hide_furniture: false,
            stack: Vec::new(),
            by_name: FxHashMap::default(),
            active: Vec::new(),
            open_ids: FxHashSet::default(),
            next_id: 0,
            hidden: 0,
            foreign: 0,
            work: 0,
        }
    }

    fn hides(&self, name: &str) -> bool {
        super::html::INVISIBLE.contains(&name)
            || (self.hide_furniture && super::html::FURNITURE.contains(&name))
    }

    fn push(&mut self, tag: Tag, formatting_id: Option<u32>) {
        let name = tag.as_str();
        let (specials, boundaries, tables) = self
            .stack
            .last()
            .map_or((0, 0, 0), |top| (top.specials, top.boundaries, top.tables));
        let hides = self.hides(name);
        let foreign = matches!(name, "svg" | "math");
        let marker = MARKERS.contains(&name);
        let open = Open {
            tag,
            formatting_id,
            marker,
            hides,
            foreign,
            specials: specials + u32::from(SPECIAL.contains(&name)),
            boundaries: boundaries + u32::from(SCOPE_BOUNDARIES.contains(&name)),
            tables: tables + u32::from(matches!(name, "html" | "table" | "template")),
        };
        self.by_name.entry(tag).or_default().push(self.stack.len());
        self.stack.push(open);
        if let Some(id) = formatting_id {
            self.open_ids.insert(id);
        }
        if marker && self.formatting {
            self.active.push(Active::Marker);
        }
        self.hidden += usize::from(hides);
        self.foreign += usize::from(foreign);
    }

    fn pop(&mut self) {
        let Some(open) = self.stack.pop() else {
            return;
        };
        if let Some(positions) = self.by_name.get_mut(&open.tag) {
            positions.pop();
        }
        if let Some(id) = open.formatting_id {
            self.open_ids.remove(&id);
        }
        if open.marker && self.formatting {
            while let Some(entry) = self.active.pop() {
                if matches!(entry, Active::Marker) {
                    break;
                }
            }
        }
        self.hidden -= usize::from(open.hides);
        self.foreign -= usize::from(open.foreign);
    }

    /// Pops elements until the one at stack position `at` is popped.
    fn pop_to(&mut self, at: usize) {
        while self.stack.len() > at {
            self.pop();
        }
    }

    /// The position of the topmost open element named `name`.
    fn topmost(&self, name: &str) -> Option<usize> {
        self.by_name.get(&Tag::new(name))?.last().copied()
    }

    /// Pops to the topmost element named `name` if no element of the category counted by
    /// `count` lies strictly between it and the top.
    fn close_if_none_above(&mut self, name: &str, count: impl Fn(&Open) -> u32) {
        let Some(at) = self.topmost(name) else {
            return;
        };
        if let (Some(x), Some(top)) = (self.stack.get(at), self.stack.last()) {
            if count(top) == count(x) {
                self.pop_to(at);
            }
        }
    }

    /// Closes the topmost element named in `names` if it is within [`LOOKBACK`] of the top
    /// and no element for which `stop` holds is above it.
    fn close_near(&mut self, names: &[&str], stop: impl Fn(&str) -> bool) {
        let len = self.stack.len();
        for at in (len.saturating_sub(LOOKBACK)..len).rev() {
            let name = self.stack[at].tag.as_str();
            if names.contains(&name) {
                self.pop_to(at);
                return;
            }
            if stop(name) {
                return;
            }
        }
    }

    /// Re-opens the active formatting elements after the last marker that are not open.
    fn reconstruct(&mut self) {
        if !self.formatting {
            return;
        }
        let mut first = self.active.len();
        while first > 0 {
            match self.active[first - 1] {
                Active::Element { id, .. } if !self.open_ids.contains(&id) => first -= 1,
                _ => break,
            }
        }
        for i in first..self.active.len() {
            if let Active::Element { tag, attrs, .. } = self.active[i] {
                let id = self.next_id;
                self.next_id = self.next_id.wrapping_add(1);
                self.active[i] = Active::Element { tag, attrs, id };
                self.push(tag, Some(id));
                self.work += 1;
            }
        }
    }

    /// The number of active formatting elements after the last marker.
    fn active_since_marker(&self) -> usize {
        self.active
            .iter()
            .rev()
            .take_while(|e| !matches!(e, Active::Marker))
            .count()
    }

    /// Removes the last active formatting element named `tag` (after the last marker,
    /// within [`AFE_LOOKBACK`]); returns whether there was one.
    fn forget_active(&mut self, tag: Tag) -> bool {
        let len = self.active.len();
        for i in (len.saturating_sub(AFE_LOOKBACK)..len).rev() {
            match self.active[i] {
                Active::Marker => return false,
                Active::Element { tag: t, .. } if t == tag => {
                    self.active.remove(i);
                    return true;
                }
                Active::Element { .. } => {}
            }
        }
        false
    }

    fn start(&mut self, raw_name: &str, attrs: &str, self_closing: bool) {
        let tag = Tag::new(raw_name);
        let lower = lowercase(raw_name);
        let name = lower.as_ref();
        self.work += self.stack.len() as u64;
        if matches!(name, "html" | "head" | "body" | "frameset") {
            return;
        }
        // Implicit closes.
        if CLOSES_P.contains(&name) {
            self.close_near(&["p"], |n| {
                SCOPE_BOUNDARIES.contains(&n) || n == "button" || n == "html"
            });
        }
        let not_address_div_p =
            |n: &str| SPECIAL.contains(&n) && !matches!(n, "address" | "div" | "p");
        match name {
            "li" => self.close_near(&["li"], not_address_div_p),
            "dd" | "dt" => self.close_near(&["dd", "dt"], not_address_div_p),
            "h1" | "h2" | "h3" | "h4" | "h5" | "h6" => {
                self.close_near(&["h1", "h2", "h3", "h4", "h5", "h6"], |_| true)
            }
            "option" => self.close_near(&["option"], |_| true),
            "optgroup" => self.close_near(&["option", "optgroup"], |n| n != "option"),
            "td" | "th" => self.close_near(&["td", "th"], |n| matches!(n, "tr" | "table")),
            "tr" => self.close_near(&["tr"], |n| n == "table"),
            "tbody" | "thead" | "tfoot" => {
                self.close_near(&["tbody", "thead", "tfoot"], |n| n == "table")
            }
            // A new link closes an open one (the adoption agency, approximately).
            "a" | "nobr" if self.formatting => {
                self.work += self.active_since_marker() as u64;
                if self.forget_active(tag) {
                    self.close_if_none_above(name, |o| o.specials);
                }
            }
            "button" => self.close_if_none_above("button", |o| o.boundaries),
            _ => {}
        }
        if reconstructs(name) {
            self.reconstruct();
        }
        if VOID.contains(&name) || (self_closing && self.foreign > 0) {
            return;
        }
        if !(self.formatting && FORMATTING.contains(&name)) {
            self.push(tag, None);
            return;
        }
        let attrs = hash(attrs.trim_end_matches(['>', '/']).trim());
        // Noah's ark: at most three identical active elements.
        self.work += self.active_since_marker() as u64;
        let len = self.active.len();
        let mut identical = Vec::new();
        for i in (len.saturating_sub(AFE_LOOKBACK)..len).rev() {
            match self.active[i] {
                Active::Marker => break,
                Active::Element {
                    tag: t, attrs: a, ..
                } if t == tag && a == attrs => identical.push(i),
                Active::Element { .. } => {}
            }
        }
        if identical.len() >= 3 {
            if let Some(&earliest) = identical.last() {
                self.active.remove(earliest);
            }
        }
        let id = self.next_id;
        self.next_id = self.next_id.wrapping_add(1);
        self.active.push(Active::Element { tag, attrs, id });
        self.push(tag, Some(id));
    }

    fn end(&mut self, raw_name: &str) {
        let tag = Tag::new(raw_name);
        let lower = lowercase(raw_name);
        let name = lower.as_ref();
        self.work += self.stack.len() as u64;
        if matches!(name, "html" | "head" | "body" | "br") {
            return;
        }
        if TABLE_SCOPED_END.contains(&name) {
            self.close_if_none_above(name, |o| o.tables);
            return;
        }
        if SCOPED_END.contains(&name) {
            self.close_if_none_above(name, |o| o.boundaries);
            return;
        }
        if self.formatting && FORMATTING.contains(&name) {
            self.work += self.active_since_marker() as u64;
            self.forget_active(tag);
        }
        self.close_if_none_above(name, |o| o.specials);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(s: &str) -> Vec<Token<'_>> {
        Tokens::new(s).collect()
    }

    #[test]
    fn tokenizes_like_html() {
        assert_eq!(
            tokens("a<B id=\"x>y\" c=d/>t</b foo='>'><!-- <p> --><script>if (a<b) x='</p>'</script ><p"),
            vec![
                Token::Text("a"),
                Token::Start {
                    name: "B",
                    attrs: " id=\"x>y\" c=d/>",
                    self_closing: false
                },
                Token::Text("t"),
                Token::End { name: "b" },
                Token::Other,
                Token::Start {
                    name: "script",
                    attrs: ">",
                    self_closing: false
                },
                Token::Raw("if (a<b) x='</p>'"),
                Token::End { name: "script" },
                Token::Other,
            ]
        );
        // A quote in an attribute name is no quote; `< ` is text; `<br/>` closes itself.
        assert_eq!(
            tokens("<a b\"c>x < y<br/>"),
            vec![
                Token::Start {
                    name: "a",
                    attrs: " b\"c>",
                    self_closing: false
                },
                Token::Text("x "),
                Token::Text("< y"),
                Token::Start {
                    name: "br",
                    attrs: "/>",
                    self_closing: true
                },
            ]
        );
    }

    fn nested(open: &str, close: &str, n: usize) -> String {
        format!("{}text{}", open.repeat(n), close.repeat(n))
    }

    #[test]
    fn deep_pages_are_too_complex() {
        assert!(matches!(
            check(&nested("<div>", "</div>", 100_000)),
            Some(TooComplex::Depth(_))
        ));
        assert!(matches!(
            check(&nested("<ul><li>", "", 10_000)),
            Some(TooComplex::Depth(_))
        ));
        assert!(matches!(
            check(&nested("<span><div></span>", "", 10_000)),
            Some(TooComplex::Depth(_))
        ));
        let distinct: String = (0..5000).map(|i| format!("<b id={i}>")).collect();
        assert!(matches!(check(&distinct), Some(TooComplex::Depth(_))));
        // Formatting elements that every paragraph re-opens.
        let reopened: String = (0..5000).map(|i| format!("<p>x<b id={i}></p>")).collect();
        assert!(check(&reopened).is_some());
        // Deep but within the limit, and wide: parsed as it is.
        assert_eq!(check(&nested("<div>", "</div>", 900)), None);
        assert_eq!(check(&nested("<div>", "</div>", 900).repeat(3)), None);
    }

    #[test]
    fn sloppy_but_ordinary_pages_are_parsed() {
        let ordinary = [
            // Unclosed paragraphs, list items, cells, options, headings.
            "<p>one<p>two<div>x</div><p>three".repeat(2000),
            "<ul><li>a<li>b<li>c</ul>".repeat(2000),
            "<table><tr><td>a<td>b<tr><td>c</table>".repeat(2000),
            "<select><option>a<option>b</select>".repeat(2000),
            // Formatting left open in a cell is cleared at its end; identical ones collapse.
            "<table><tr><td><b>x</td></tr></table>".repeat(2000),
            "<p><font size=2>x".repeat(2000),
            "<p><b>x</p>".repeat(2000),
            "<a href=1>x<a href=2>y".repeat(2000),
            // Self-closing tags in SVG, void elements anywhere.
            format!("<svg>{}</svg>", "<path d=\"M0 0\"/>".repeat(5000)),
            "<img src=x><br><hr><input>".repeat(5000),
        ];
        for page in &ordinary {
            assert_eq!(check(page), None, "{}", &page[..80]);
        }
    }

    proptest::proptest! {
        #[test]
        fn tag_soup_never_panics(parts in proptest::collection::vec(proptest::sample::select(vec![
            "<div>", "</div>", "<p>", "</p>", "<b id=1>", "<b>", "</b>", "<a href=x>", "</a>",
            "<td>", "</td>", "<tr>", "<table>", "</table>", "<li>", "<ul>", "</ul>", "<svg>",
            "<path/>", "</svg>", "<script>", "</script>", "<!--", "-->", "<", ">", "/", "\"",
            "'", "=", " ", "x", "é", "中", "\0", "<br/>", "</", "<!", "<?", "<plaintext>",
            "<template>", "</template>", "<select>", "<option>", "<nav>", "</nav>",
        ]), 0..200)) {
            let page: String = parts.concat();
            let _ = check(&page);
            for main_text in [true, false] {
                let flat = flatten(&page, main_text);
                proptest::prop_assert_eq!(check(&flat), None, "{} -> {}", page, flat);
            }
        }
    }

    #[test]
    fn flattening_keeps_visible_text_blocks_and_links() {
        let page = "<html><head><title>T</title><style>p{}</style></head><body>\
            <nav><a href=/>Home</a></nav><div><div>Deep &amp; <b>bold</b></div>\
            <script>var x = '<p>';</script><p>next<br>line <a href=x>link</a>\
            <svg><text>drawn</text></svg> 1 &lt; 2</p></div></body></html>";
        assert_eq!(
            flatten(page, true),
            "<p><p><p><p>Deep &amp; bold<p><p>next<br>line <a>link</a> 1 &lt; 2<p><p><p>"
        );
        assert!(flatten(page, false).contains("<a>Home</a>"));
    }
}
