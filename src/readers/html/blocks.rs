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

/// Drops the boilerplate blocks: outside the main elements (when they hold text), link lists,
/// short lines repeated within the page, and the lines the fingerprinter's
/// [`drop_boilerplate`](crate::SimhashConfig::drop_boilerplate) leaves out (with its rules:
/// what is short, and a page of nothing but such lines keeps them).
pub(super) fn filter_boilerplate(blocks: &mut Vec<Block>) {
    let main_chars: usize = blocks.iter().filter(|b| b.in_main).map(|b| b.chars).sum();
    if main_chars > 0 {
        blocks.retain(|b| b.in_main);
    }
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
