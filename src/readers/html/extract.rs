//! Following the tokens of a page, without a tree, to its blocks of text.

use std::cell::RefCell;

use html5ever::local_name;
use html5ever::tendril::StrTendril;
use html5ever::tokenizer::states::RawKind;
use html5ever::tokenizer::{
    BufferQueue, Tag, TagKind, Token, TokenSink, TokenSinkResult, Tokenizer, TokenizerOpts,
};
use html5ever::TokenizerResult;

use super::super::open_elements::{flags, Closed, OpenElements, Scope};
use super::blocks::{filter_boilerplate, flush, joins_without_space};
use super::elements::*;
use super::Block;

/// The token sink: follows the open elements and gathers the blocks of visible text.
pub(super) struct Extractor {
    state: RefCell<Extraction>,
}

pub(super) struct Extraction {
    main_text: bool,
    open: OpenElements,
    blocks: Vec<Block>,
    current: Block,
    /// The doubtful elements opened, in order: element `n` (numbered from 1) is at `n - 1`,
    /// with the number of the doubtful element it is in (0 if none).
    doubtful: Vec<u32>,
    /// `<!doctype html>` seen (not quirks mode): `<table>` closes an open `p`.
    no_quirks: bool,
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
        current.doubt = closed.doubt;
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
        self.current.doubt = self.open.doubt();
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
            if self.role(tag, kind) == Role::Text {
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
        let role = self.role(tag, kind);
        let hides = role == Role::Dropped;
        let visible = !hides && !self.open.hidden();
        let mut element_flags = if foreign { flags::FOREIGN } else { 0 };
        if hides {
            element_flags |= flags::HIDES;
        }
        if kind & kind::BLOCK != 0 {
            element_flags |= flags::BLOCK;
        }
        let mut doubtful = 0;
        if visible {
            if kind & kind::BLOCK != 0 {
                flush(&mut self.blocks, &mut self.current);
            }
            match role {
                Role::Main => element_flags |= flags::MAIN,
                Role::Doubtful => {
                    // Numbered from 1, as the open elements number them. A page of 2^32
                    // doubtful elements would be over 16 GiB; past that many, the rest are
                    // counted with the last one.
                    doubtful = match u32::try_from(self.doubtful.len() + 1) {
                        Ok(n) => {
                            self.doubtful.push(self.open.doubt());
                            n
                        }
                        Err(_) => u32::MAX,
                    };
                }
                Role::Text | Role::Dropped => {}
            }
            if name == "a" {
                element_flags |= flags::LINK;
            }
        }
        self.open
            .push(tag.name.clone(), element_flags, bounds, doubtful);
        if visible {
            self.current.in_main = self.open.in_main();
            self.current.doubt = self.open.doubt();
        }
    }

    /// The element's role: in main-text extraction [`role_of`]; otherwise only invisible
    /// elements are dropped.
    fn role(&self, tag: &Tag, kind: u32) -> Role {
        if self.main_text {
            role_of(tag, kind)
        } else if kind & kind::INVISIBLE != 0 {
            Role::Dropped
        } else {
            Role::Text
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
pub(super) fn extract(source: &str, main_text: bool) -> String {
    let sink = Extractor {
        state: RefCell::new(Extraction {
            main_text,
            open: OpenElements::new(),
            blocks: Vec::new(),
            current: Block::default(),
            doubtful: Vec::new(),
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
        filter_boilerplate(&mut blocks, &state.doubtful);
    }
    let texts: Vec<&str> = blocks.iter().map(|b| b.text.as_str()).collect();
    texts.join("\n")
}

/// Appends `text` to the block with whitespace collapsed to single spaces; whitespace between
/// two characters of Chinese text is none ([`joins_without_space`]).
pub(super) fn append_text(block: &mut Block, text: &str, in_link: bool) {
    let mut separated = text.starts_with(char::is_whitespace);
    for word in text.split_whitespace() {
        if separated && !block.text.is_empty() && !block.text.ends_with(' ') {
            block.text.push(' ');
        }
        if block.text.ends_with(' ') {
            let before = block.text[..block.text.len() - 1].chars().last();
            let after = word.chars().next();
            if let (Some(before), Some(after)) = (before, after) {
                if joins_without_space(before, after) {
                    block.text.pop();
                }
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
