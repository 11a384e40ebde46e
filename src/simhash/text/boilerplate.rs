//! Boilerplate lines: the copyright lines, share buttons, previous/next links, breadcrumbs,
//! adverts and repost notices that web pages carry around their text. They are not what a
//! page is about, and one such line added to a short page moved its fingerprint by 3-4 bits
//! on the quality set; with
//! [`SimhashConfig::drop_boilerplate`](crate::SimhashConfig::drop_boilerplate) they are not
//! features.
//!
//! A line is boilerplate when it is short (at most [`MAX_WIDTH`] columns, a CJK character
//! counting two) and
//! - holds a marker of one of those kinds (`©`, `all rights reserved`, `share on`,
//!   `subscribe`, `版权`, `转载`, `上一篇`, `分享到`, ...: [`MARKERS`]; Latin markers only as
//!   whole words, in any case), or
//! - holds `previous`, `prev` or `next` as a word and has at most [`NAV_MAX_WORDS`] words or
//!   both directions (`« Previous | Next »`, `Next: Installation`), or
//! - is a breadcrumb: three or more parts of at most four words, each with two letters or
//!   more, between ` > `, ` » `, ` › `, ` >> ` or ` / ` (`Home > Docs > Install`).
//!
//! The markers were written from the usual kinds of web boilerplate, not learned from a data
//! set. A text whose every line is boilerplate keeps them all: it has nothing else.

use std::borrow::Cow;
use std::sync::OnceLock;

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// The widest line that can be boilerplate, in columns (a CJK character counts two).
pub(crate) const MAX_WIDTH: usize = 160;

/// A line with `previous`/`next` and at most this many words is a navigation link.
pub(crate) const NAV_MAX_WORDS: usize = 8;

/// Markers of a boilerplate line: copyright, sharing, navigation, adverts, subscriptions and
/// repost notices, in English and Chinese.
pub(crate) const MARKERS: &[&str] = &[
    // Copyright and legal lines.
    "©",
    "copyright",
    "all rights reserved",
    "privacy policy",
    "terms of use",
    "版权",
    "保留所有权利",
    "免责声明",
    "未经许可",
    "未经授权",
    // Sharing and following.
    "share on",
    "share this",
    "tweet",
    "facebook",
    "twitter",
    "linkedin",
    "pinterest",
    "whatsapp",
    "follow us",
    "分享到",
    "微信",
    "微博",
    "朋友圈",
    "扫码",
    "二维码",
    "关注我们",
    // Navigation.
    "you are here",
    "back to top",
    "read more",
    "related articles",
    "上一篇",
    "下一篇",
    "上一页",
    "下一页",
    "上一章",
    "下一章",
    "首页",
    "当前位置",
    "您的位置",
    "返回顶部",
    "相关阅读",
    "阅读原文",
    // Adverts and subscriptions.
    "advertisement",
    "sponsored",
    "click here",
    "subscribe",
    "newsletter",
    "buy now",
    "free trial",
    "广告",
    "推广",
    "赞助",
    "订阅",
    // Repost notices.
    "originally published",
    "repost",
    "reposted",
    "reprint",
    "reprinted",
    "republished",
    "with permission",
    "转载",
    "原文链接",
    "本文来源",
    "出处",
];

/// Words of a previous/next link: `PREV_NEXT[..2]` point back, `PREV_NEXT[2]` forward.
const PREV_NEXT: [&str; 3] = ["previous", "prev", "next"];

/// Separators of a breadcrumb's parts.
const CRUMB_SEPARATORS: [&str; 5] = [" > ", " » ", " › ", " >> ", " / "];

/// xxh3-64 of the marker lists and limits above (each item and a NUL, each list ended by a
/// second NUL): what a store records to tell whether its fingerprints were made with them.
pub(crate) fn content_hash() -> u64 {
    let (width, words) = (MAX_WIDTH.to_string(), NAV_MAX_WORDS.to_string());
    let lists: [&[&str]; 4] = [MARKERS, &PREV_NEXT, &CRUMB_SEPARATORS, &[&width, &words]];
    let mut h = xxhash_rust::xxh3::Xxh3::new();
    for list in lists {
        for item in list {
            h.update(item.as_bytes());
            h.update(b"\0");
        }
        h.update(b"\0");
    }
    h.digest()
}

/// One automaton for the markers and the previous/next words (pattern ids from
/// `MARKERS.len()` on), ASCII case-insensitive, reporting overlapping matches so that a
/// marker inside a longer word (`tweets`) does not hide a whole-word one after it.
#[allow(
    clippy::expect_used,
    reason = "fixed patterns; the automaton is built in every test of this module"
)]
fn automaton() -> &'static AhoCorasick {
    static AUTOMATON: OnceLock<AhoCorasick> = OnceLock::new();
    AUTOMATON.get_or_init(|| {
        AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::Standard)
            .build(MARKERS.iter().chain(PREV_NEXT.iter()))
            .expect("the boilerplate markers form a valid automaton")
    })
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Whether `line[start..end]` is not part of a longer Latin word (markers that start and end
/// with an ASCII letter must be whole words; the others match anywhere).
fn whole_word(line: &str, start: usize, end: usize) -> bool {
    let bytes = line.as_bytes();
    let edge_is_letter =
        bytes[start].is_ascii_alphanumeric() && bytes[end - 1].is_ascii_alphanumeric();
    if !edge_is_letter {
        return true;
    }
    let before = start.checked_sub(1).map(|i| bytes[i]);
    let after = bytes.get(end).copied();
    !before.is_some_and(is_word_byte) && !after.is_some_and(is_word_byte)
}

/// Whether `line` (without its line break) is short enough to be boilerplate: at most
/// [`MAX_WIDTH`] columns, a CJK character counting two. The HTML reader's short blocks are
/// the same.
pub(crate) fn is_short(line: &str) -> bool {
    // No character takes more than 4 bytes or fewer than 1 column: a cheap bound first.
    if line.len() > 4 * MAX_WIDTH {
        return false;
    }
    let mut width = 0;
    for c in line.chars() {
        width += if c >= '\u{2E80}' { 2 } else { 1 };
        if width > MAX_WIDTH {
            return false;
        }
    }
    true
}

/// Whether `line` is a breadcrumb (see the module documentation).
fn is_breadcrumb(line: &str) -> bool {
    let Some(separator) = CRUMB_SEPARATORS.iter().find(|s| line.contains(*s)) else {
        return false;
    };
    let mut parts = 0;
    for part in line.split(separator) {
        let letters = part.chars().filter(|c| c.is_alphabetic()).count();
        if letters < 2 || part.split_whitespace().count() > 4 {
            return false;
        }
        parts += 1;
    }
    parts >= 3
}

/// Whether `line` (one line of text; surrounding whitespace, its line break included, is
/// ignored) is boilerplate.
pub(crate) fn is_boilerplate(line: &str) -> bool {
    let line = line.trim();
    if line.is_empty() || !is_short(line) {
        return false;
    }
    let (mut back, mut forward) = (false, false);
    for m in automaton().find_overlapping_iter(line) {
        if !whole_word(line, m.start(), m.end()) {
            continue;
        }
        match m.pattern().as_usize().checked_sub(MARKERS.len()) {
            None => return true,
            Some(2) => forward = true,
            Some(_) => back = true,
        }
    }
    if (back || forward) && ((back && forward) || line.split_whitespace().count() <= NAV_MAX_WORDS)
    {
        return true;
    }
    is_breadcrumb(line)
}

/// `text` without its boilerplate lines (borrowed when it has none). A text made only of
/// boilerplate lines is returned whole.
pub(crate) fn drop_lines(text: &str) -> Cow<'_, str> {
    let mut kept: Option<String> = None;
    let mut any_kept = false;
    let mut offset = 0;
    for line in text.split_inclusive('\n') {
        let drop = is_boilerplate(line);
        if drop {
            // The first dropped line: copy what came before it.
            kept.get_or_insert_with(|| text[..offset].to_owned());
        } else if let Some(out) = &mut kept {
            out.push_str(line);
        }
        any_kept |= !drop && !line.trim().is_empty();
        offset += line.len();
    }
    match kept {
        Some(out) if any_kept => Cow::Owned(out),
        _ => Cow::Borrowed(text),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// Lines from a pool of content and boilerplate, joined by `\n` or `\r\n`.
    fn text_of_lines() -> impl Strategy<Value = String> {
        let line = prop_oneof![
            Just("Install the package before the first start.".to_string()),
            Just("数据库使用多版本并发控制。".to_string()),
            Just("Copyright © 2024 Example Inc.".to_string()),
            Just("« Previous | Next »".to_string()),
            Just("分享到：微信 微博".to_string()),
            Just("Home > Docs > Install".to_string()),
            Just(String::new()),
            "[a-zA-Z ©>»/|:。，\u{4e00}-\u{4e20}]{0,40}",
        ];
        (
            proptest::collection::vec(line, 0..12),
            any::<bool>(),
            any::<bool>(),
        )
            .prop_map(|(lines, crlf, last_break)| {
                let mut text = lines.join(if crlf { "\r\n" } else { "\n" });
                if last_break {
                    text.push('\n');
                }
                text
            })
    }

    proptest! {
        #[test]
        fn drop_lines_keeps_the_other_lines_in_order(text in text_of_lines()) {
            let kept = drop_lines(&text);
            // Dropping again changes nothing.
            let again = drop_lines(&kept);
            prop_assert_eq!(again.as_ref(), kept.as_ref());
            // What is kept is the text's lines in order, none of them boilerplate, unless
            // the text is kept whole.
            if kept.as_ref() != text.as_str() {
                let mut from = text.split_inclusive('\n');
                for line in kept.split_inclusive('\n') {
                    prop_assert!(from.any(|l| l == line), "{:?} not in order", line);
                    prop_assert!(!is_boilerplate(line.trim_end_matches(['\n', '\r'])));
                }
                prop_assert!(kept.split('\n').any(|l| !l.trim().is_empty()));
            }
        }

        #[test]
        fn any_text_is_handled(text in "\\PC{0,300}") {
            let kept = drop_lines(&text);
            prop_assert!(kept.len() <= text.len());
        }
    }

    #[test]
    fn kinds_of_boilerplate_lines() {
        for line in [
            "Copyright © 2024 Example Inc. All rights reserved.",
            "© 2019 某某科技有限公司",
            "Share on Facebook | Tweet | Email",
            "SHARE THIS ARTICLE",
            "« Previous | Next »",
            "Next: Installing the server",
            "Prev  Up  Home",
            "Home > Docs > Installation",
            "Home / Products / Cameras",
            "Advertisement",
            "This article was originally published on example.com.",
            "Subscribe to our newsletter",
            "本文转载自某某网，版权归原作者所有。",
            "分享到：微信 微博 QQ空间",
            "上一篇：安装指南    下一篇：配置网络",
            "当前位置：首页 > 新闻 > 科技",
            "广告：点击了解更多",
            "  Read more  ",
        ] {
            assert!(is_boilerplate(line), "{line:?}");
        }
    }

    #[test]
    fn ordinary_lines_are_kept() {
        for line in [
            "",
            "Next, configure the server so that it listens on every address it has.",
            "SELECT nextval('products_product_no_seq');",
            "The subscriber copies the rows it is sent; tweets are not supported.",
            "x > y > z",
            "/ 60 / 60 / 24;",
            "PostgreSQL uses multiversion concurrency control.",
            "数据库使用多版本并发控制来保证一致性。",
            "Reposition the cursor with FETCH PRIOR.",
        ] {
            assert!(!is_boilerplate(line), "{line:?}");
        }
        // A marker in a long line: a paragraph about copyright is content.
        let long = format!(
            "Copyright law protects {}",
            "original works of authorship fixed in a tangible medium, ".repeat(3)
        );
        assert!(long.len() > MAX_WIDTH);
        assert!(!is_boilerplate(&long));
        // CJK characters count two columns: 81 of them are too wide.
        assert!(!is_boilerplate(&format!("版权{}", "字".repeat(79))));
        assert!(is_boilerplate(&format!("版权{}", "字".repeat(78))));
    }

    #[test]
    fn drop_lines_removes_only_boilerplate_lines() {
        let text =
            "Home > Docs > Install\nInstall the package.\r\nThen start it.\n© 2024 Example\n";
        assert_eq!(drop_lines(text), "Install the package.\r\nThen start it.\n");
        let plain = "Install the package.\nThen start it.";
        assert!(matches!(drop_lines(plain), Cow::Borrowed(_)));
        assert_eq!(drop_lines(plain), plain);
        // The last line, without a line break.
        assert_eq!(drop_lines("Text.\nShare on Twitter"), "Text.\n");
        // Only boilerplate: kept whole.
        let only = "Copyright 2024\n\nShare on Twitter\n";
        assert_eq!(drop_lines(only), only);
        assert_eq!(drop_lines(""), "");
    }
}
