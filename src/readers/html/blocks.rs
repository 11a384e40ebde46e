//! Text blocks: the boilerplate ones dropped (link lists, short repeated lines, copyright
//! lines).

use std::collections::HashMap;

use super::Block;

pub(super) fn is_cjk(c: char) -> bool {
    matches!(c as u32, 0x3000..=0x303f | 0x3040..=0x30ff | 0x3400..=0x4dbf | 0x4e00..=0x9fff | 0xf900..=0xfaff | 0xff00..=0xffef)
}

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

/// Is this a short block that reads like boilerplate?
pub(super) fn is_short(block: &Block) -> bool {
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

pub(super) fn filter_boilerplate(blocks: &mut Vec<Block>) {
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
