//! Text blocks: the boilerplate ones dropped (link lists, short repeated lines, and the
//! fingerprinter's boilerplate lines).

use std::collections::HashMap;

use crate::simhash::{boilerplate, is_cjk, is_word_char};

use super::Block;

pub(super) fn flush(blocks: &mut Vec<Block>, current: &mut Block) {
    let mut block = std::mem::take(current);
    let trimmed = block.text.trim_end();
    if trimmed.len() != block.text.len() {
        block.text.truncate(trimmed.len());
    }
    if block.chars > 0 {
        blocks.push(block);
    }
}

/// Whether a line break between `before` and `after` is no space: both are ideographs (the
/// fingerprinter's [`is_cjk`]) or punctuation outside ASCII (not [`is_word_char`]: `，`, `。`,
/// `“`), as in Chinese text, which has no spaces between words.
pub(super) fn joins_without_space(before: char, after: char) -> bool {
    let unspaced = |c: char| is_cjk(c) || (!c.is_ascii() && !is_word_char(c));
    unspaced(before) && unspaced(after)
}

/// Drops the boilerplate blocks: outside the main elements (when they hold text), in doubtful
/// elements that do not hold most of the text left ([`drop_doubtful`]), link lists, short lines
/// repeated within the page, and the lines the fingerprinter's
/// [`drop_boilerplate`](crate::SimhashConfig::drop_boilerplate) leaves out (with its rules:
/// what is short, and a page of nothing but such lines keeps them). `doubtful` gives the
/// doubtful element each doubtful element is in (see `Extraction::doubtful`).
pub(super) fn filter_boilerplate(blocks: &mut Vec<Block>, doubtful: &[u32]) {
    let main_chars: usize = blocks.iter().filter(|b| b.in_main).map(|b| b.chars).sum();
    if main_chars > 0 {
        blocks.retain(|b| b.in_main);
    }
    drop_doubtful(blocks, doubtful);
    // Link lists: blocks that are mostly links.
    blocks.retain(|b| b.link_chars * 2 <= b.chars);
    // Short lines repeated within the page ("Read more", "Share", separators).
    let is_short = |b: &Block| boilerplate::is_short(&b.text);
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
    // Boilerplate lines (copyright, sharing, previous/next, breadcrumbs, ...), unless every
    // block is one. A block is one line: its whitespace is collapsed.
    if blocks.iter().any(|b| !boilerplate::is_boilerplate(&b.text)) {
        blocks.retain(|b| !boilerplate::is_boilerplate(&b.text));
    }
}

/// Drops the blocks of the doubtful elements (wrappers whose `id` or `class` names
/// boilerplate) that hold at most half of the text of `blocks`, counted without link text.
/// A wrapper that holds most of it is the page's content whatever its class says (Sphinx's
/// Read-the-Docs theme wraps every page in `wy-grid-for-nav`; `ad-free`, `nav-open` are
/// wrappers too), while real boilerplate (a sidebar, a share box, an advert) holds a small
/// part. An element inside a dropped one holds less than it, so it is dropped too.
fn drop_doubtful(blocks: &mut Vec<Block>, doubtful: &[u32]) {
    if doubtful.is_empty() {
        return;
    }
    // `held[n]`: the text in doubtful element `n` (numbered from 1), its inner ones included.
    let mut held = vec![0usize; doubtful.len() + 1];
    let mut total = 0usize;
    for b in blocks.iter() {
        let own = b.chars.saturating_sub(b.link_chars);
        total += own;
        if let Some(h) = held.get_mut(b.doubt as usize) {
            *h += own;
        }
    }
    // An element is numbered after the one it is in: adding from the last one up gives each
    // its inner ones' text before it is added to its own outer one.
    for n in (1..held.len()).rev() {
        let outer = doubtful.get(n - 1).map_or(0, |&o| o as usize);
        let inner = held.get(n).copied().unwrap_or(0);
        if outer != 0 && outer < n {
            if let Some(h) = held.get_mut(outer) {
                *h += inner;
            }
        }
    }
    blocks.retain(|b| b.doubt == 0 || held.get(b.doubt as usize).is_some_and(|&h| h * 2 > total));
}
