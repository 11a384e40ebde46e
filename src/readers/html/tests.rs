//! The decoders and the extraction on pages made for each rule.

use super::charset::meta_charset;
use super::*;
use encoding_rs::UTF_8;

#[test]
fn meta_charset_forms() {
    assert_eq!(
        meta_charset(b"<html><META charset=\"GBK\">"),
        Some(encoding_rs::GBK)
    );
    assert_eq!(
        meta_charset(b"<meta http-equiv=\"Content-Type\" content=\"text/html; charset=gb2312\">"),
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

/// The reader and the fingerprinter agree on what is boilerplate: on a page without `id`,
/// `class` or semantic hints, the main text is the visible text without the lines that the
/// fingerprinter's `drop_boilerplate` leaves out, in English and in Chinese.
#[test]
fn boilerplate_lines_are_the_fingerprinters() {
    use crate::simhash::boilerplate::{drop_lines, is_boilerplate};
    let pages: [(&str, &[&str], &[&str]); 2] = [
        (
            "<p>Home &gt; News &gt; Weather</p>\
             <h1>Rain tomorrow</h1>\
             <p>Heavy rain is expected in the north of the city from Tuesday morning.</p>\
             <p>Share on Facebook | Tweet | Email</p>\
             <p>« Previous | Next »</p>\
             <p>Copyright © 2024 Example News. All rights reserved.</p>",
            &[
                "Rain tomorrow",
                "Heavy rain is expected in the north of the city from Tuesday morning.",
            ],
            &["Home > News > Weather", "Share on Facebook | Tweet | Email"],
        ),
        (
            "<p>当前位置：首页 &gt; 新闻 &gt; 天气</p>\
             <h1>明天有雨</h1>\
             <p>气象台预计，周二上午起城市北部\n将有大雨，请市民注意出行安全。</p>\
             <p>分享到：微信、微博、QQ空间</p>\
             <p>上一篇：高温预警    下一篇：台风消息</p>\
             <p>© 2024 某某新闻网 版权所有</p>",
            &[
                "明天有雨",
                "气象台预计，周二上午起城市北部将有大雨，请市民注意出行安全。",
            ],
            &["当前位置：首页 > 新闻 > 天气", "分享到：微信、微博、QQ空间"],
        ),
    ];
    for (page, article, boilerplate) in pages {
        let all = html_to_text(page.as_bytes(), None, false).unwrap();
        let main = html_to_text(page.as_bytes(), None, true).unwrap();
        assert_eq!(main, article.join("\n"), "{page}");
        assert_eq!(drop_lines(&all).trim_end(), main, "{page}");
        for line in all.lines() {
            assert_eq!(is_boilerplate(line), !article.contains(&line), "{line:?}");
        }
        for line in boilerplate {
            assert!(
                all.lines().any(|l| l == *line) && is_boilerplate(line),
                "{line:?}"
            );
        }
    }
    // A page of nothing but boilerplate lines keeps them, as the fingerprinter does.
    let only = "<p>Share on Facebook</p><p>© 2024 Example</p>";
    assert_eq!(
        html_to_text(only.as_bytes(), None, true).unwrap(),
        "Share on Facebook\n© 2024 Example"
    );
}

#[test]
fn chinese_punctuation_joins_without_spaces() {
    let page = "<p>第一句话。\n“第二句”，\n第三句\n\u{20000}字 and\nwords，\nmore</p>".as_bytes();
    assert_eq!(
        html_to_text(page, None, true).unwrap(),
        "第一句话。“第二句”，第三句\u{20000}字 and words， more"
    );
}

/// A paragraph of `n` characters of words.
fn paragraph(n: usize) -> String {
    let words = "Trains in the north ran an hour late on Monday after a storm brought down trees ";
    words.repeat(n / words.len() + 1)[..n]
        .trim_end()
        .to_string()
}

#[test]
fn main_content_is_kept_whatever_the_classes_around_it() {
    let text = paragraph(220);
    for wrapper in ["ad-free", "wy-body-for-nav", "nav-open", "page has-sidebar"] {
        let page = format!(
            "<html><body><div class=\"{wrapper}\"><div role=\"main\"><p>{text}</p></div></div></body></html>"
        );
        assert_eq!(
            html_to_text(page.as_bytes(), None, true).unwrap(),
            text,
            "{wrapper}"
        );
        // Without a main element, the wrapper holds the whole page: it is the content.
        let page = format!("<div class=\"{wrapper}\"><h1>Trains</h1><p>{text}</p></div>");
        assert_eq!(
            html_to_text(page.as_bytes(), None, true).unwrap(),
            format!("Trains\n{text}"),
            "{wrapper}"
        );
    }
    // A `<main>` or `role="main"` keeps its text whatever its own class says.
    let page = format!("<p>outside</p><main class=\"main-with-sidebar\"><p>{text}</p></main>");
    assert_eq!(html_to_text(page.as_bytes(), None, true).unwrap(), text);
}

#[test]
fn doubtful_wrappers_that_hold_little_are_dropped() {
    let text = paragraph(220);
    // Inside a wrapper that is kept, a sidebar and an advert that hold little go.
    let page = format!(
        "<div class=\"nav-open\"><div class=\"sidebar\"><p>Popular stories chosen for you this week</p></div>\
         <p>{text}</p><div class=\"ad-slot\"><p>Buy the new phone today at a low price</p></div></div>"
    );
    assert_eq!(html_to_text(page.as_bytes(), None, true).unwrap(), text);
    // Inside a main element, so do the comments (each comment is boilerplate by its class,
    // the thread's wrapper too).
    let comments: String = (0..8)
        .map(|i| {
            format!(
                "<article class=\"comment\"><p>Comment {i}: {}</p></article>",
                paragraph(90)
            )
        })
        .collect();
    let page = format!(
        "<main><article><h1>Trains</h1><p>{text}</p></article><div id=\"comments\">{comments}</div></main>"
    );
    assert_eq!(
        html_to_text(page.as_bytes(), None, true).unwrap(),
        format!("Trains\n{text}")
    );
    // A doubtful element that is not a wrapper (a list, a paragraph, an inline element)
    // drops its content whatever it holds.
    let page = format!("<ul class=\"nav\"><li>{text}</li></ul><p>The short article.</p>");
    assert_eq!(
        html_to_text(page.as_bytes(), None, true).unwrap(),
        "The short article."
    );
    // Furniture elements, hidden ones and furniture roles stay verdicts.
    let page = format!("<nav><main><p>{text}</p></main></nav><p>The short article.</p>");
    assert_eq!(
        html_to_text(page.as_bytes(), None, true).unwrap(),
        "The short article."
    );
}

#[test]
fn gbk_behind_a_false_utf8_declaration() {
    let article = "气象台预计，周二上午起城市北部将有大雨，请市民注意出行安全。";
    let gbk = |page: &str| encoding_rs::GBK.encode(page).0.into_owned();
    let meta_utf8 = gbk(&format!(
        "<html><head><meta charset=\"utf-8\"></head><body><p>{article}</p></body></html>"
    ));
    let plain = gbk(&format!("<p>{article}</p>"));
    // The page's own declaration, the header's, or both say UTF-8.
    for (page, header) in [
        (&meta_utf8[..], None),
        (&plain[..], Some("utf-8")),
        (&meta_utf8[..], Some("UTF-8")),
    ] {
        assert_eq!(html_to_text(page, header, true).unwrap(), article);
    }
    // A UTF-8 page declared as GBK is read as UTF-8.
    let page = format!("<meta charset=\"gbk\"><p>{article}</p>");
    assert_eq!(html_to_text(page.as_bytes(), None, true).unwrap(), article);
}

#[test]
fn binary_data_is_not_text() {
    let ramp: Vec<u8> = (0..=255u8).cycle().take(256 * 40).collect();
    let (kind, message) = super::page_text(&ramp, None, true).unwrap_err();
    assert_eq!(kind, crate::readers::BadRecordKind::Binary, "{message}");
    assert!(message.starts_with("binary data, not text"), "{message}");
    let (kind, _) = decode_plain(&ramp).unwrap_err();
    assert_eq!(kind, crate::readers::BadRecordKind::Binary);
    assert!(decode_text(&ramp).unwrap_err().starts_with("binary data"));
    // Half NUL: UTF-16 without a byte-order mark, or binary; either way not text.
    let utf16: Vec<u8> = "plain words".bytes().flat_map(|b| [b, 0]).collect();
    assert_eq!(
        decode_plain(&utf16).unwrap_err().0,
        crate::readers::BadRecordKind::Binary
    );
    // A few NULs and control characters are text with separators; so are tabs, form feeds,
    // backspaces (overstruck manual pages) and escapes (coloured logs).
    for text in [
        &b"rivers\0and\0bridges of the north\0"[..],
        b"a\tb\x0cc\x08c\x1b[1mbold\x1b[0m words of a log line\r\n",
        b"one \x01 control character among many words of ordinary text",
    ] {
        assert!(decode_plain(text).is_ok(), "{text:?}");
    }
}
